// Package deploy holds the Kubernetes manifest that runs a sharded
// `simrun campaign` as an Indexed Job (campaign-job.yaml) and the test that
// checks it. It has no Go code of its own: the test parses the manifest
// with a small YAML-subset reader (block mappings, block lists, flow lists
// of strings, scalars) and checks that the shard count, the shard flags,
// the output paths, the shared volume and the merge step agree.
package deploy
