// Package lookup is lnpdb lookup: numbers looked up in a table, written as
// the REST API answers them, from the command line or from a list.
package lookup

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/jobsapi"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/internal/core/atomicfile"
	"github.com/lnpdb/lnpdb/internal/core/vfs"
	"github.com/lnpdb/lnpdb/internal/ingest/progress"
)

// Batch is how many numbers of a list are looked up, and held, at once.
const Batch = 64 << 10

// outFS is where --out is written; tests make its writes fail.
var outFS vfs.FS = vfs.Default

type options struct {
	e                       *cliutil.Env
	db, typ, now            string
	in, out, format         string
	enhanced, withMessaging bool
}

const long = `Look numbers up in a table and write, for each, the body the REST API's
single-number endpoint of --type answers: its result, or the error body of
an invalid or unknown number.

The numbers are the arguments, or, with --in, a list: one number a line, or
a header row naming a phone_number column (the lookup jobs' CSV upload). A
list file may be gzip (.gz) or zstd (.zst) compressed; "-" is the standard
input, uncompressed. A line that is blank or the header is skipped; a line
longer than 1 MiB, or a cell too long to be a number, is a row answered as an
invalid number with the input "". A summary of what became of every line is
written on the standard error at the end, and a progress bar while it runs
when the standard error is a terminal. The list is looked up in batches of
65536 numbers, so memory does not grow with its length.

--out FILE writes the answers to FILE ("-" or none: the standard output),
as a whole: into a temporary file renamed over FILE once complete, so a run
that fails leaves FILE as it was. --format, or --out's extension, says how:
jsonl (.jsonl, .ndjson: one body a line, the lookup jobs' NDJSON results)
or csv (.csv: the lookup jobs' text/csv results, a header and a flat row a
number).

Exit status: with numbers as arguments, 1 when any lookup did not answer
(an invalid or unknown number included). With --in, invalid and unknown
numbers are answered rows, as a list scrubbed wants them: 1 only when a
lookup failed otherwise (the table is damaged), or the list could not be
read or the output written.`

// NewCmdLookup returns lnpdb lookup.
func NewCmdLookup(e *cliutil.Env) *cobra.Command {
	opts := &options{e: e}
	cmd := &cobra.Command{
		Use:   "lookup [--db FILE] (NUMBER... | --in LIST [--out FILE])",
		Short: "look numbers, or a list of them, up in a table and write the REST response bodies",
		Long:  long,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLookup(cmd.Context(), opts, args)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.db, "db", "", "table `file` to read (default: build the embedded sample into a temporary directory)")
	fs.BoolVar(&opts.enhanced, "enhanced", false, "add enhanced_lrn_data (type lrn)")
	fs.BoolVar(&opts.withMessaging, "messaging", false, "add the messaging object (type lrn)")
	fs.StringVar(&opts.typ, "type", "lrn", "lookup `type`: lrn, cnam, messaging or trust")
	fs.StringVar(&opts.now, "now", "", "score trust as at this RFC 3339 `time` (default: the clock)")
	fs.StringVar(&opts.in, "in", "", "look up the numbers of this list `file` (.gz, .zst; - for the standard input)")
	fs.StringVar(&opts.out, "out", "", "write the answers to this `file`, atomically (default and -: the standard output)")
	fs.StringVar(&opts.format, "format", "", "output `format`: jsonl or csv (default: by --out's extension, else jsonl)")
	return cmd
}

// outputFormat returns the output's format: --format, or --out's
// extension, or jsonl.
func outputFormat(opts *options) (string, error) {
	switch f := opts.format; f {
	case "jsonl", "csv":
		return f, nil
	case "":
	default:
		return "", fmt.Errorf("%w: unknown --format %q (want jsonl or csv)", cliutil.ErrUsage, f)
	}
	if opts.out == "" || opts.out == "-" {
		return "jsonl", nil
	}
	switch ext := strings.ToLower(filepath.Ext(opts.out)); ext {
	case ".jsonl", ".ndjson":
		return "jsonl", nil
	case ".csv":
		return "csv", nil
	}
	return "", fmt.Errorf("%w: --out %s: give --format jsonl or csv (or name it .jsonl, .ndjson or .csv)", cliutil.ErrUsage, opts.out)
}

// tally counts what became of a run's numbers.
type tally struct {
	numbers, answered, invalid, notFound, failed int
}

// runLookup writes, for each number, the body the REST API answers: the
// lookup's result or the error body.
func runLookup(ctx context.Context, opts *options, args []string) error {
	e := opts.e
	switch {
	case opts.in == "":
		if err := cliutil.Want(args, -1, "no numbers given (give them as arguments, or a list with --in FILE)"); err != nil {
			return err
		}
	case len(args) > 0:
		return fmt.Errorf("%w: give the numbers as arguments or with --in, not both", cliutil.ErrUsage)
	}
	ao := httpapi.AnswerOptions{Kind: opts.typ, Enhanced: opts.enhanced, Messaging: opts.withMessaging}
	if opts.now != "" {
		t, err := time.Parse(time.RFC3339, opts.now)
		if err != nil {
			return fmt.Errorf("%w: --now: %v", cliutil.ErrUsage, err)
		}
		ao.Now = t
	}
	switch opts.typ {
	case "lrn":
	case "cnam", "messaging", "trust":
		if opts.enhanced || opts.withMessaging {
			return fmt.Errorf("%w: --enhanced and --messaging apply to --type lrn only", cliutil.ErrUsage)
		}
	default:
		return fmt.Errorf("%w: unknown --type %q (want lrn, cnam, messaging or trust)", cliutil.ErrUsage, opts.typ)
	}
	form, err := outputFormat(opts)
	if err != nil {
		return err
	}

	// The list is opened before the table is, so that a wrong name is
	// told at once.
	var list *jobsapi.ListReader
	if opts.in != "" {
		r, closeIn, err := openList(e, opts.in)
		if err != nil {
			return err
		}
		defer closeIn()
		list = jobsapi.NewListReader(r)
	}

	path, cleanup, err := cliutil.TablePath(ctx, opts.db)
	if err != nil {
		return err
	}
	defer cleanup()
	// Open: a lookup writes nothing, and answers beside a server that
	// has the table open for updates, with the updates journaled so far.
	db, err := format.Open(path)
	if err != nil {
		return err
	}
	defer db.Close()

	var t tally
	run := func(w io.Writer) error {
		next := func() (string, error) {
			if len(args) == 0 {
				return "", io.EOF
			}
			n := args[0]
			args = args[1:]
			return n, nil
		}
		if list != nil {
			next = list.Next
		}
		t, err = lookupAll(ctx, e, db, ao, form, next, w)
		return err
	}
	if opts.out == "" || opts.out == "-" {
		err = run(e.Stdout)
	} else {
		err = atomicfile.Write(outFS, opts.out, func(f vfs.File) error { return run(f) }, atomicfile.Options{})
	}
	if err != nil {
		return err
	}

	if list == nil {
		if failed := t.numbers - t.answered; failed > 0 {
			return &cliutil.ExitError{Code: 1, Err: fmt.Errorf("%d of %d lookups failed", failed, t.numbers)}
		}
		return nil
	}
	lines := t.numbers + list.Blank + list.Header
	fmt.Fprintf(e.Stderr, "lnpdb lookup: %s read: %s (%d answered, %d invalid, %d not found, %d failed); %d skipped (%d blank, %d header); %d too long, answered as invalid\n",
		cliutil.Counted(lines, "line", "lines"), cliutil.Counted(t.numbers, "number", "numbers"), t.answered, t.invalid, t.notFound, t.failed,
		list.Blank+list.Header, list.Blank, list.Header, list.TooLong)
	if t.failed > 0 {
		return &cliutil.ExitError{Code: 1, Err: fmt.Errorf("%d of %d lookups failed", t.failed, t.numbers)}
	}
	return nil
}

// openList opens --in: a file, decompressed by its name's suffix as
// build's sources are, or "-", the standard input.
func openList(e *cliutil.Env, name string) (io.Reader, func(), error) {
	if name == "-" {
		if e.Stdin != nil {
			return e.Stdin, func() {}, nil
		}
		return os.Stdin, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	r, closeZ, err := build.Decompress(name, f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return r, func() { closeZ(); f.Close() }, nil
}

// lookupAll looks up the numbers next returns, Batch at a time, and
// writes their answers to w in form (jsonl or csv).
func lookupAll(ctx context.Context, e *cliutil.Env, db *format.DB, ao httpapi.AnswerOptions, form string, next func() (string, error), w io.Writer) (tally, error) {
	var t tally
	bw := bufio.NewWriterSize(w, 256<<10)
	var cw *csv.Writer
	var rows *jobsapi.ResultsCSV
	if form == "csv" {
		cw = csv.NewWriter(bw)
		rows = jobsapi.NewResultsCSV(cw, ao.Kind)
	}
	bar := progress.New(e.Stderr, "lookup", 0)
	defer bar.Done()

	numbers := make([]string, 0, Batch)
	ends := make([]int, Batch)
	answered := make([]bool, Batch)
	var buf []byte
	invalid := []byte(`"code":"` + httpapi.CodeInvalidPhoneNumber + `"`)
	notFound := []byte(`"code":"` + httpapi.CodeNumberNotFound + `"`)
	flush := func() error {
		n := len(numbers)
		var err error
		buf, err = httpapi.AppendAnswers(buf[:0], db, ao, numbers, ends[:n], answered[:n], func(i int, err error) {
			fmt.Fprintf(e.Stderr, "lnpdb lookup: %q: %v\n", numbers[i], err)
			t.failed++
		})
		if err != nil {
			return err
		}
		start := 0
		for i, end := range ends[:n] {
			line := buf[start:end]
			start = end
			switch {
			case answered[i]:
				t.answered++
			case bytes.Contains(line, invalid):
				t.invalid++
			case bytes.Contains(line, notFound):
				t.notFound++
			}
			if rows != nil {
				err = rows.Write(numbers[i], line)
			} else {
				bw.Write(line)
				err = bw.WriteByte('\n')
			}
			if err != nil {
				return err
			}
		}
		t.numbers += n
		bar.Add(int64(n))
		numbers = numbers[:0]
		return ctx.Err()
	}
	for {
		n, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return t, err
		}
		numbers = append(numbers, n)
		if len(numbers) == Batch {
			if err := flush(); err != nil {
				return t, err
			}
		}
	}
	if err := flush(); err != nil {
		return t, err
	}
	if cw != nil {
		if cw.Flush(); cw.Error() != nil {
			return t, cw.Error()
		}
	}
	return t, bw.Flush()
}
