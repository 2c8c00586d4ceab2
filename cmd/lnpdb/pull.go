package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/node/distribute"
)

func runPull(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "pull", "URL")
	dbPath := fs.String("db", "", "the table `file` to install the fetched table as")
	keyFile := fs.String("key-file", "", "`file` holding the key to send as a bearer token (an admin key of an lnpdb origin's GET /admin/v1/table)")
	maxBytes := fs.Int64("max-bytes", 0, "refuse a table larger than `n` bytes, received or decompressed, before writing it (0: the size its header declares)")
	timeout := fs.Duration("timeout", distribute.DefaultTimeout, "give up a fetch that takes longer than `duration` in all")
	if err := parseArgs(e, fs, args, -1, "want --db FILE URL"); err != nil {
		return err
	}
	switch {
	case fs.NArg() == 2: // the deprecated pull URL FILE
		if err := deprecatedDB(e, "pull", dbPath, fs.Arg(1), "pull URL FILE"); err != nil {
			return err
		}
	case fs.NArg() != 1 || *dbPath == "":
		fs.Usage()
		return fmt.Errorf("%w: want --db FILE URL", errUsage)
	}
	url, path := fs.Arg(0), *dbPath
	if *maxBytes < 0 || *timeout <= 0 {
		return fmt.Errorf("%w: --max-bytes must be 0 or more, --timeout positive", errUsage)
	}
	key, err := readKeyFile(*keyFile)
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := distribute.Pull(ctx, url, path, distribute.Options{Key: key, Progress: e.stderr, MaxBytes: *maxBytes, Timeout: *timeout})
	if err != nil {
		return err
	}
	if res.NotModified {
		fmt.Fprintf(e.stdout, "%s is current (the origin's table is unchanged, ETag %s)\n", path, res.ETag)
		return nil
	}
	fmt.Fprintf(e.stdout, "installed %s: built %s, %d bytes, %d ported; received %d bytes in %s\n",
		path, res.Info.BuiltAt.Format(time.RFC3339), res.Info.Size, res.Info.Counts.Ported,
		res.Bytes, time.Since(start).Round(time.Millisecond))
	return nil
}

// readKeyFile returns the key in path, "" when path is "".
func readKeyFile(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("key file: %w", err)
	}
	key := strings.TrimSpace(string(b))
	if key == "" || strings.ContainsAny(key, " \t\r\n") {
		return "", fmt.Errorf("key file %s: want one key on one line", path)
	}
	return key, nil
}
