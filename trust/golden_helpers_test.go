package trust_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden is one entry of a golden file: a lookup and its wire body.
type golden struct {
	Case   string          `json:"case"`
	Number string          `json:"number"`
	Body   json.RawMessage `json:"body"`

	// branch is the rule the case must take: a Source, or the error it must
	// be; it keeps the cases honest when the sample changes.
	branch any
}

// wireBody is the REST body for a lookup's answer: the result, or the
// CONTRACT §6 error body.
func wireBody(t *testing.T, v any, err error) json.RawMessage {
	t.Helper()
	if err != nil {
		v = errorBodyFor(t, err)
	}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// errorBody is the CONTRACT §6 error body, fields in wire order.
type errorBody struct {
	Error   string `json:"error"`
	Code    string `json:"code"`
	Details string `json:"details"`
}

func errorBodyFor(t *testing.T, err error) errorBody {
	t.Helper()
	switch {
	case errors.Is(err, lnpdb.ErrInvalidNumber):
		return errorBody{"Invalid phone number format", "INVALID_PHONE_NUMBER", "Phone number must be 11 digits starting with 1"}
	case errors.Is(err, lnpdb.ErrNotFound):
		return errorBody{"Number not found", "NUMBER_NOT_FOUND", "The number's NPA-NXX code is not assigned to any carrier"}
	}
	t.Fatalf("unexpected error: %v", err)
	return errorBody{}
}

// checkGolden compares got with testdata/golden/name, or rewrites the file
// with -update. Bodies compare byte for byte in compact form.
func checkGolden(t *testing.T, name string, got []golden) {
	t.Helper()
	path := filepath.Join("..", "testdata", "golden", name)
	if *update {
		b, err := json.MarshalIndent(got, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, append(b, '\n'), 0o644))
		return
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	var want []golden
	require.NoError(t, json.Unmarshal(b, &want))
	require.Len(t, got, len(want), "cases differ from %s; run go test -update", path)
	for i := range want {
		var compact bytes.Buffer
		require.NoError(t, json.Compact(&compact, want[i].Body))
		assert.Equal(t, want[i].Case, got[i].Case)
		assert.Equal(t, want[i].Number, got[i].Number, want[i].Case)
		assert.Equal(t, compact.String(), string(got[i].Body), "%s: %s", want[i].Case, want[i].Number)
	}
}
