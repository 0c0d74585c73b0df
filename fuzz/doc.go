// Package fuzz holds the native Go fuzz targets of the lab and their
// committed seed corpora under testdata/fuzz/.
package fuzz
