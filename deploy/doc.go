// Package deploy holds what runs a sharded `simrun campaign` on Kubernetes:
// the image's Dockerfile and the manifest that runs it as an Indexed Job
// (campaign-job.yaml), and the tests that check them. It has no Go code of
// its own.
//
// The Dockerfile builds a static simrun (CGO_ENABLED=0) in a golang stage
// and copies it alone onto an empty (scratch) image that runs as uid/gid
// 65532. Build and push it from the repository root:
//
//	docker build -f deploy/Dockerfile -t mqttlab/simrun:latest .
//	docker push mqttlab/simrun:latest
//	kubectl apply -f deploy/campaign-job.yaml
//
// manifest_test.go parses the manifest with a small YAML-subset reader
// (block mappings, block lists, flow lists of strings, scalars) and checks
// that the shard count, the shard flags, the output paths, the shared
// volume and the merge step agree. image_test.go parses the Dockerfile and
// checks the image is a static simrun on scratch, that the manifest runs
// that image (one image name, the simrun command, the image's user and
// fsGroup) and that the commands above, in the Dockerfile and in docs/campaigns.md
// name it; it runs the build stage's go build command and checks with
// debug/elf that the binary has no interpreter and no dynamic section.
package deploy
