// Package golden keeps the golden files of the lookup packages
// (testdata/golden/*.json): for each case, a lookup's REST wire body,
// compared byte for byte in compact form. `go test -update` in a lookup
// package rewrites its file. It also holds the checks every lookup package
// makes alike: its sentinel errors are the root package's, and a closed
// table answers ErrClosed.
package golden

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/nanp"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// Now is the clock the golden answers are computed at: trust's recent
// activations count back from it.
var Now = time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)

// Case is one entry of a golden file: a lookup and its wire body.
type Case struct {
	Case      string          `json:"case"`
	Number    string          `json:"number"`
	Enhanced  bool            `json:"enhanced,omitempty"`  // LRN only
	Messaging bool            `json:"messaging,omitempty"` // LRN only
	Body      json.RawMessage `json:"body"`

	// Branch is the rule the case must take (a Source, the error it must
	// be, the reasons it must give); it keeps the cases honest when the
	// sample changes. It is not written to the file.
	Branch any `json:"-"`
}

// WireBody is the REST body for a lookup's answer: v marshalled, or the
// error body (docs/CONTRACT.md §6) for err.
func WireBody(t testing.TB, v any, err error) json.RawMessage {
	t.Helper()
	if err != nil {
		v = errorBodyFor(t, err)
	}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// errorBody is the §6 error body, fields in wire order.
type errorBody struct {
	Error   string `json:"error"`
	Code    string `json:"code"`
	Details string `json:"details"`
}

func errorBodyFor(t testing.TB, err error) errorBody {
	t.Helper()
	switch {
	case errors.Is(err, lnpdb.ErrInvalidNumber):
		details := "Phone number must be 11 digits starting with 1"
		if rule, ok := nanp.Rule(err); ok {
			details = rule
		}
		return errorBody{"Invalid phone number format", "INVALID_PHONE_NUMBER", details}
	case errors.Is(err, lnpdb.ErrNotFound):
		return errorBody{"Number not found", "NUMBER_NOT_FOUND", "The number's NPA-NXX code is not assigned to any carrier"}
	}
	t.Fatalf("unexpected error: %v", err)
	return errorBody{}
}

// Check compares got with testdata/golden/name (relative to the module root,
// one directory above the calling package), or rewrites the file with
// -update.
func Check(t testing.TB, name string, got []Case) {
	t.Helper()
	path := filepath.Join("..", "testdata", "golden", name)
	if *update {
		b, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
		return
	}
	want := Read(t, "..", name)
	require.Len(t, got, len(want), "cases differ from %s; run go test -update", path)
	for i := range want {
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, want[i].Body))
		assert.Equal(t, want[i].Case, got[i].Case)
		assert.Equal(t, want[i].Number, got[i].Number, want[i].Case)
		assert.Equal(t, want[i].Enhanced, got[i].Enhanced, want[i].Case)
		assert.Equal(t, want[i].Messaging, got[i].Messaging, want[i].Case)
		assert.Equal(t, compact.String(), string(got[i].Body), "%s: %s", want[i].Case, want[i].Number)
	}
}

// Read returns the cases of testdata/golden/name below root, the module
// root as a path from the calling package's directory.
func Read(t testing.TB, root, name string) []Case {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "testdata", "golden", name))
	require.NoError(t, err, "run go test -update in the lookup package to create it")
	var cases []Case
	require.NoError(t, json.Unmarshal(b, &cases))
	return cases
}

// Run looks up every case with lookup on the sample table, checks that it
// takes its Branch (the error it must match, or what branch returns for the
// answer), and compares the wire bodies with testdata/golden/name as Check
// does. Last it closes the table and checks that the first case's lookup
// then fails with lnpdb.ErrClosed.
func Run[R any](t *testing.T, name string, cases []Case, lookup func(db *format.DB, c Case) (R, error), branch func(R) any) {
	t.Helper()
	db := testdb.Sample(t)
	got := make([]Case, len(cases))
	for i, c := range cases {
		r, err := lookup(db, c)
		if want, ok := c.Branch.(error); ok {
			assert.ErrorIs(t, err, want, c.Case)
		} else {
			assert.Equal(t, c.Branch, branch(r), c.Case)
		}
		c.Body = WireBody(t, r, err)
		got[i] = c
	}
	Check(t, name, got)

	closed := testdb.Open(t, lnpdb.Sample())
	require.NoError(t, closed.Close())
	_, err := lookup(closed, cases[0])
	assert.ErrorIs(t, err, lnpdb.ErrClosed, "a lookup on a closed table")
}

// Sentinels checks that a lookup package's sentinel errors are the root
// package's values, so that errors.Is matches either name.
func Sentinels(t testing.TB, invalidNumber, notFound, closed error) {
	t.Helper()
	assert.Same(t, lnpdb.ErrInvalidNumber, invalidNumber)
	assert.Same(t, lnpdb.ErrNotFound, notFound)
	assert.Same(t, lnpdb.ErrClosed, closed)
}
