package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format/build"
)

// tablePath returns path, or, when path is empty, the built-in sample built
// into a new temporary directory, which cleanup removes.
func tablePath(ctx context.Context, path string) (_ string, cleanup func(), _ error) {
	if path != "" {
		return path, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "lnpdb-sample-")
	if err != nil {
		return "", nil, err
	}
	path = filepath.Join(dir, "sample.lnpdb")
	if _, err := build.Build(ctx, lnpdb.Sample(), path, build.Options{}); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("building the sample table: %w", err)
	}
	return path, func() { os.RemoveAll(dir) }, nil
}
