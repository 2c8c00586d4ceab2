package lookup_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/clitest"
	"github.com/lnpdb/lnpdb/internal/testutil/golden"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

func TestLookupPrintsTheGoldenBodies(t *testing.T) {
	table := testdb.Build(t, lnpdb.Sample())
	for _, typ := range []string{"lrn", "cnam", "messaging", "trust"} {
		cases := golden.Read(t, "../../../../..", typ+".json")

		// One run per set of flags, with all of its numbers.
		type flags struct{ enhanced, messaging bool }
		groups := map[flags][]golden.Case{}
		var order []flags
		for _, c := range cases {
			f := flags{c.Enhanced, c.Messaging}
			if _, ok := groups[f]; !ok {
				order = append(order, f)
			}
			groups[f] = append(groups[f], c)
		}
		for _, f := range order {
			args := []string{"lookup", "--db", table, "--type", typ, "--now", "2026-11-22T00:00:00Z"}
			if typ != "trust" {
				args = args[:len(args)-2]
			}
			if f.enhanced {
				args = append(args, "--enhanced")
			}
			if f.messaging {
				args = append(args, "--messaging")
			}
			wantCode := 0
			var want strings.Builder
			for _, c := range groups[f] {
				args = append(args, c.Number)
				var compact bytes.Buffer
				require.NoError(t, json.Compact(&compact, c.Body))
				want.WriteString(compact.String() + "\n")
				if strings.Contains(compact.String(), `"code":`) {
					wantCode = 1
				}
			}
			code, out, errs := clitest.Run(t, args...)
			assert.Equal(t, want.String(), out, "%v", args)
			assert.Equal(t, wantCode, code, "%v: %s", args, errs)
			if wantCode != 0 {
				assert.Contains(t, errs, "lookups failed")
			}
		}
	}
}

func TestLookupBuildsTheSampleWithoutDB(t *testing.T) {
	code, out, errs := clitest.Run(t, "lookup", "+1 202 555 0199")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, `{"lrn":"12025550199","phone_number":"12025550199"}`+"\n", out)
}

func TestLookupUsage(t *testing.T) {
	for _, args := range [][]string{
		{"lookup"},
		{"lookup", "--type", "carrier", "12025550123"},
		{"lookup", "--type", "cnam", "--enhanced", "12025550123"},
		{"lookup", "--now", "yesterday", "12025550123"},
	} {
		code, out, errs := clitest.Run(t, args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Empty(t, out, "%v", args)
		assert.NotEmpty(t, errs, "%v", args)
	}
	code, _, errs := clitest.Run(t, "lookup", "--db", filepath.Join(t.TempDir(), "missing.lnpdb"), "12025550123")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "missing.lnpdb")
}
