package lookup_test

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/clitest"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/lookup"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/jobsapi"
	"github.com/lnpdb/lnpdb/internal/core/vfs"
	"github.com/lnpdb/lnpdb/internal/testutil/golden"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// listable says whether n reads back from a list line as itself.
func listable(n string) bool {
	return n != "" && len(n) <= 64 && !strings.ContainsAny(n, ",\"\r\n") && strings.TrimSpace(n) == n
}

// Every line of a list's answers, as NDJSON, is the single-number REST
// endpoint's body for its number (the golden bodies: valid, invalid,
// unknown and formatted numbers), and, as CSV, the lookup jobs' CSV row
// of that body; invalid and unknown numbers are answered rows (exit 0).
func TestLookupListIsTheRESTBodiesAndTheJobsCSV(t *testing.T) {
	table := testdb.Build(t, lnpdb.Sample())
	dir := t.TempDir()
	for _, typ := range []string{"lrn", "cnam", "messaging", "trust"} {
		type flags struct{ enhanced, messaging bool }
		groups := map[flags][]golden.Case{}
		var order []flags
		for _, c := range golden.Read(t, "../../../../..", typ+".json") {
			if !listable(c.Number) {
				continue
			}
			f := flags{c.Enhanced, c.Messaging}
			if _, ok := groups[f]; !ok {
				order = append(order, f)
			}
			groups[f] = append(groups[f], c)
		}
		for _, f := range order {
			cases := groups[f]
			require.NotEmpty(t, cases)
			var list, jsonl, rows strings.Builder
			list.WriteString("id,phone_number\n") // a header, the number in its second column
			cw := csv.NewWriter(&rows)
			want := jobsapi.NewResultsCSV(cw, typ)
			for i, c := range cases {
				list.WriteString("row" + string(rune('a'+i%26)) + "," + c.Number + "\n")
				var compact bytes.Buffer
				require.NoError(t, json.Compact(&compact, c.Body))
				jsonl.WriteString(compact.String() + "\n")
				require.NoError(t, want.Write(c.Number, compact.Bytes()))
			}
			cw.Flush()
			in := filepath.Join(dir, "in.csv")
			require.NoError(t, os.WriteFile(in, []byte(list.String()), 0o644))

			args := []string{"lookup", "--db", table, "--type", typ, "--in", in}
			if typ == "trust" {
				args = append(args, "--now", "2026-11-22T00:00:00Z")
			}
			if f.enhanced {
				args = append(args, "--enhanced")
			}
			if f.messaging {
				args = append(args, "--messaging")
			}
			for _, out := range []struct{ name, want string }{{"out.jsonl", jsonl.String()}, {"out.csv", rows.String()}} {
				path := filepath.Join(dir, out.name)
				code, stdout, errs := clitest.Run(t, append(args, "--out", path)...)
				require.Equal(t, 0, code, "%v: %s", args, errs)
				assert.Empty(t, stdout)
				got, err := os.ReadFile(path)
				require.NoError(t, err)
				assert.Equal(t, out.want, string(got), "%v %s", args, out.name)
				assert.Contains(t, errs, "lines read", "the summary")
			}
			// The standard output, its format by --format.
			code, stdout, errs := clitest.Run(t, append(args, "--format", "csv")...)
			require.Equal(t, 0, code, errs)
			assert.Equal(t, rows.String(), stdout)
		}
	}
}

// A list without a header, blank lines, a 2 MiB line and a cell too long
// for a number: each line counted, the long ones answered as invalid rows
// with the input "", in order.
func TestLookupListCountsEveryLine(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in.txt")
	body := "12025550199\n\n" + strings.Repeat("7", 2<<20) + "\n+1 202 555 0199\r\n" + strings.Repeat("8", 65) + "\n12345\n"
	require.NoError(t, os.WriteFile(in, []byte(body), 0o644))
	code, out, errs := clitest.Run(t, "lookup", "--in", in)
	require.Equal(t, 0, code, errs)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 5, out)
	ok := `{"lrn":"12025550199","phone_number":"12025550199"}`
	assert.Equal(t, ok, lines[0])
	assert.Contains(t, lines[1], `"code":"INVALID_PHONE_NUMBER"`)
	assert.Equal(t, ok, lines[2])
	assert.Contains(t, lines[3], `"code":"INVALID_PHONE_NUMBER"`)
	assert.Contains(t, lines[4], `"code":"INVALID_PHONE_NUMBER"`)
	assert.Contains(t, errs, "6 lines read: 5 numbers (2 answered, 3 invalid, 0 not found, 0 failed); 1 skipped (1 blank, 0 header); 2 too long, answered as invalid")

	// The CSV row of a too-long line has the input "".
	code, out, errs = clitest.Run(t, "lookup", "--in", in, "--format", "csv")
	require.Equal(t, 0, code, errs)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 6)
	assert.Equal(t, "input", rows[0][0])
	assert.Equal(t, "", rows[2][0])
	assert.Equal(t, "INVALID_PHONE_NUMBER", rows[2][len(rows[2])-2])
}

// sevens is a reader of n bytes of '7' and no new line.
type sevens struct{ left int }

func (s *sevens) Read(p []byte) (int, error) {
	if s.left == 0 {
		return 0, io.EOF
	}
	n := min(len(p), s.left)
	for i := range p[:n] {
		p[i] = '7'
	}
	s.left -= n
	return n, nil
}

// A list holding a 256 MiB line, from the standard input, is read in
// bounded memory: the line is a row, not a buffer.
func TestLookupListLongLineBoundedMemory(t *testing.T) {
	table := testdb.Build(t, lnpdb.Sample())
	in := io.MultiReader(strings.NewReader("12025550199\n"), &sevens{left: 256 << 20}, strings.NewReader("\n12025550199\n"))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code, out, errs := clitest.RunIn(t, in, "lookup", "--db", table, "--in", "-")
	runtime.ReadMemStats(&after)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, 3, strings.Count(out, "\n"))
	assert.Contains(t, errs, "1 too long")
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Fatalf("a list with a 256 MiB line allocated %d MiB", alloc>>20)
	}
}

// A gzip list reads as the plain one.
func TestLookupListGzip(t *testing.T) {
	dir := t.TempDir()
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write([]byte("phone_number\n12025550199\n19999999999\n"))
	require.NoError(t, zw.Close())
	in := filepath.Join(dir, "in.csv.gz")
	require.NoError(t, os.WriteFile(in, z.Bytes(), 0o644))
	code, out, errs := clitest.Run(t, "lookup", "--in", in)
	require.Equal(t, 0, code, errs)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 2, out)
	assert.Equal(t, `{"lrn":"12025550199","phone_number":"12025550199"}`, lines[0])
	assert.Contains(t, errs, "3 lines read: 2 numbers")
}

// A run that fails leaves no output file, nor its temporary file: a
// write that fails, and a list damaged after its first batch.
func TestLookupListOutputIsAtomic(t *testing.T) {
	table := testdb.Build(t, lnpdb.Sample())
	dir := t.TempDir()
	var list strings.Builder
	for range lookup.Batch + 10 {
		list.WriteString("12025550199\n")
	}
	plain := filepath.Join(dir, "in.txt")
	require.NoError(t, os.WriteFile(plain, []byte(list.String()), 0o644))

	outDir := t.TempDir()
	out := filepath.Join(outDir, "out.csv")
	restore := lookup.SetOutFS(vfs.NewFaulty(vfs.Default, func(op vfs.Op, name string) error {
		if op == vfs.OpWrite {
			return errors.New("disk full")
		}
		return nil
	}))
	code, _, errs := clitest.Run(t, "lookup", "--db", table, "--in", plain, "--out", out)
	restore()
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "disk full")
	entries, err := os.ReadDir(outDir)
	require.NoError(t, err)
	assert.Empty(t, entries, "a failed write leaves nothing")

	// A gzip list cut short: its first batch is written, then the read fails.
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write([]byte(list.String()))
	require.NoError(t, zw.Close())
	cut := filepath.Join(dir, "in.txt.gz")
	require.NoError(t, os.WriteFile(cut, z.Bytes()[:z.Len()-12], 0o644))
	code, _, errs = clitest.Run(t, "lookup", "--db", table, "--in", cut, "--out", out)
	assert.Equal(t, 1, code)
	assert.NotEmpty(t, errs)
	entries, err = os.ReadDir(outDir)
	require.NoError(t, err)
	assert.Empty(t, entries, "a failed read leaves nothing")
}

func TestLookupListUsage(t *testing.T) {
	clitest.AssertRefused(t, []string{"lookup"}, []clitest.Refusal{
		{Args: []string{"--in", "x.csv", "12025550123"}, Code: 2, Want: "not both"},
		{Args: []string{"--in", "-", "--out", "x.txt"}, Code: 2, Want: "--format"},
		{Args: []string{"--in", "-", "--format", "xml"}, Code: 2, Want: "unknown --format"},
		{Args: []string{"--in", filepath.Join(t.TempDir(), "missing.csv")}, Code: 1, Want: "missing.csv"},
	})
}
