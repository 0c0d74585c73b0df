// Package plots runs the lab's failure-rate experiments and writes each as
// CSV, PNG and SVG.
package plots
