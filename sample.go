package lnpdb

import (
	"embed"
	"io/fs"
)

//go:embed testdata/sample/*.csv
var sample embed.FS

// Sample returns the small sample source directory that ships with the module
// (testdata/sample): a few hundred NPA-NXX codes and thousands-blocks, a few
// thousand ported numbers, and messaging, CNAM and trust rows, with invented
// carriers. `lnpdb serve` with no flags builds and serves it; examples and
// tests build their tables from it.
func Sample() fs.FS {
	sub, err := fs.Sub(sample, "testdata/sample")
	if err != nil {
		panic(err) // the embedded path is fixed at compile time
	}
	return sub
}
