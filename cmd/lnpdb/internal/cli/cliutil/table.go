package cliutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
)

// Counted is n with the noun's singular or plural: "1 update", "2 updates".
func Counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// WriterAdvice adds to err, when another process has the table open for
// updates (format.ErrLocked), what to do instead.
func WriterAdvice(err error, instead string) error {
	if errors.Is(err, format.ErrLocked) {
		return fmt.Errorf("%w: %s", err, instead)
	}
	return err
}

func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// DeprecatedDB accepts a table named the old way (old: the flag's or the
// operand's value, oldForm: how it was written) in place of --db, with a
// note on stderr; both at once are a usage error.
func DeprecatedDB(e *Env, name string, db *string, old, oldForm string) error {
	switch {
	case old == "":
		return nil
	case *db != "":
		return fmt.Errorf("%w: give the table once, as --db FILE (%s is the deprecated form)", ErrUsage, oldForm)
	}
	fmt.Fprintf(e.Stderr, "lnpdb %s: %s is deprecated and will be removed: name the table with --db FILE\n", name, oldForm)
	*db = old
	return nil
}

// OpenArg opens, read-only, the table named by --db (db), or,
// deprecated, by the one operand in args; name is the command's.
func OpenArg(e *Env, name, db string, args []string) (*format.DB, error) {
	switch {
	case len(args) > 1, len(args) == 0 && db == "":
		return nil, fmt.Errorf("%w: want --db FILE", ErrUsage)
	case len(args) == 1:
		if err := DeprecatedDB(e, name, &db, args[0], "the table as an operand"); err != nil {
			return nil, err
		}
	}
	// The table file alone: a damaged journal is not a damaged table
	// (lnpdb journal check covers the journal), and inspecting changes
	// nothing.
	t, err := format.Open(db, format.IgnoreJournal())
	return t, NamingFile(db, err)
}

// NamingFile returns err naming the file at path, unless it does already
// or is nil.
func NamingFile(path string, err error) error {
	if err == nil || strings.Contains(err.Error(), path) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// TablePath returns path, or, when path is empty, the built-in sample built
// into a new temporary directory, which cleanup removes.
func TablePath(ctx context.Context, path string) (_ string, cleanup func(), _ error) {
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

// ReadKeyFile returns the key in path, "" when path is "".
func ReadKeyFile(path string) (string, error) {
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
