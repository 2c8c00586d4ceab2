package jobsapi

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"
	"github.com/lnpdb/lnpdb/internal/testutil/golden"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

var resultKinds = []string{"lrn", "cnam", "messaging", "trust"}

// sameRow reports whether the scanner took line, and fails t unless its
// row is the encoding/json path's row (or both refuse the line).
func sameRow(t testing.TB, c *ResultsCSV, line []byte) bool {
	t.Helper()
	fast := make([]string, len(c.row))
	took := c.flat.fill(fast, line)
	err := c.decode(line)
	if !took {
		return false
	}
	if err != nil {
		t.Fatalf("%s: the scanner took %q, encoding/json refused it: %v", c.cols, line, err)
	}
	if !slices.Equal(c.row[1:], fast[1:]) {
		assert.Equal(t, c.row[1:], fast[1:], "%q", line)
		t.FailNow()
	}
	return true
}

// The scanner's row of every golden REST body (each kind, each LRN option,
// the error bodies), compact and as indented, is the encoding/json row, and
// it takes each of them: no golden body falls back.
func TestResultsCSVScannerGoldenBodies(t *testing.T) {
	for _, kind := range resultKinds {
		c := NewResultsCSV(csv.NewWriter(io.Discard), kind)
		cases := golden.Read(t, "../../../../..", kind+".json")
		require.NotEmpty(t, cases)
		for _, gc := range cases {
			var compact bytes.Buffer
			require.NoError(t, json.Compact(&compact, gc.Body))
			for _, line := range [][]byte{compact.Bytes(), gc.Body} {
				assert.True(t, sameRow(t, c, line), "%s %s: deferred %s", kind, gc.Case, line)
			}
		}
	}
}

// sampleNumbers is the sample's ported and listed numbers, and for one in
// five a neighbour (another number of its block), a formatted form and an
// invalid one.
func sampleNumbers(t testing.TB) []string {
	var out []string
	for _, name := range []string{"ported.csv", "cnam.csv", "messaging.csv", "trust.csv"} {
		b, err := fs.ReadFile(lnpdb.Sample(), name)
		require.NoError(t, err)
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Scan() // the header
		for i := 0; sc.Scan(); i++ {
			n, _, _ := strings.Cut(sc.Text(), ",")
			out = append(out, n)
			if i%5 == 0 {
				out = append(out, n[:len(n)-2]+"99", "+1 "+n, n[:len(n)-3])
			}
		}
	}
	return out
}

// The row of every answer AppendAnswers writes for the sample's numbers
// (each kind and LRN option) is the same from the scanner as from
// encoding/json, and the scanner takes every one.
func TestResultsCSVScannerSampleAnswers(t *testing.T) {
	db := testdb.Sample(t)
	numbers := sampleNumbers(t)
	require.Greater(t, len(numbers), 1000)
	ends := make([]int, len(numbers))
	answered := make([]bool, len(numbers))
	now := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	opts := []httpapi.AnswerOptions{{Kind: "lrn"}, {Kind: "lrn", Enhanced: true}, {Kind: "lrn", Messaging: true},
		{Kind: "lrn", Enhanced: true, Messaging: true}, {Kind: "cnam"}, {Kind: "messaging"}, {Kind: "trust", Now: now}}
	for _, o := range opts {
		buf, err := httpapi.AppendAnswers(nil, db, o, numbers, ends, answered, nil)
		require.NoError(t, err)
		c := NewResultsCSV(csv.NewWriter(io.Discard), o.Kind)
		filled, start := map[int]bool{}, 0
		for _, end := range ends {
			require.True(t, sameRow(t, c, buf[start:end]), "%+v: deferred %s", o, buf[start:end])
			for i, v := range c.row {
				if v != "" {
					filled[i] = true
				}
			}
			start = end
		}
		// Every column but the input's filled by some answer of the option.
		want := len(c.cols) + 3
		switch {
		case o.Kind == "lrn" && !o.Enhanced && !o.Messaging:
			want -= 10 + 5
		case o.Kind == "lrn" && !o.Enhanced:
			want -= 10
		case o.Kind == "lrn" && !o.Messaging:
			want -= 5
		}
		assert.Len(t, filled, want, "%+v", o)
	}
}

// The row of lines the server never writes: the scanner's equals
// encoding/json's, or it defers them.
func TestResultsCSVScannerDefers(t *testing.T) {
	c := NewResultsCSV(csv.NewWriter(io.Discard), "lrn")
	for _, line := range []string{
		`{"lrn":"1","lrn":"2"}`,                        // the last wins
		`{"enhanced_lrn_data.carrier":"x"}`,            // not the column of its name
		`{"messaging":{"provider":"a"},"messaging":1}`, // the object replaced
		`{"lrn":{"a":1}}`,                              // an object as a value
		`{"x":{"y":[]}}`,
		`{"lrn":[{"a":1}]}`,
		`{"lrn":["<&>"]}`, // encoding/json escapes it again
		`{"lrn":"\ud83d\ude00"}`,
		"{\"lrn\":\"\xff\"}",
		`{"lrn":01}`,
		`{"lrn":1}]`,
		`{"lrn":1} {}`,
		`[]`,
		`null`,
		``,
		`{"code":{"a":1},"error":1,"details":2}`,
	} {
		c = NewResultsCSV(csv.NewWriter(io.Discard), "lrn") // a refused line ends a decoder
		assert.False(t, sameRow(t, c, []byte(line)), "%s", line)
	}
	for _, line := range []string{
		`{"lrn":"a\"\\\/\b\f\n\r\t\u00e9\u0000","phone_number":-1.5e+3,"lrn_activated_at":true}`,
		`{"code":"X","error":null,"details":["a",1,null,false]}`,
		`{"code":"X","error":"e","details":"d","lrn":"1"}`,
		` { "messaging" : { "provider" : "p" , "enabled" : false } , "enhanced_lrn_data" : null } `,
		`{"lrn":"é\ufffd","x":[], "messaging":"flat"}`,
	} {
		assert.True(t, sameRow(t, c, []byte(line)), "%s", line)
	}
}

// The scanner's row of any line is encoding/json's, or it defers it; it
// never panics.
func FuzzResultsCSVScanner(f *testing.F) {
	f.Add([]byte(`{"lrn":"12015550123","phone_number":"12015550123","enhanced_lrn_data":{"carrier":"A \"B\""}}`))
	f.Add([]byte(`{"error":"Invalid phone number","code":"INVALID_PHONE_NUMBER","details":"x"}`))
	f.Add([]byte(`{"phone_number":"1","trust_score":-1.5e3,"reasons":["A","B"],"first_reported":null}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, kind := range resultKinds {
			sameRow(t, NewResultsCSV(csv.NewWriter(io.Discard), kind), line)
		}
	})
}

// A row's cost, and its allocations: the scanner's one string a row.
func BenchmarkResultsCSV(b *testing.B) {
	db := testdb.Sample(b)
	numbers := sampleNumbers(b)
	ends := make([]int, len(numbers))
	answered := make([]bool, len(numbers))
	for _, o := range []httpapi.AnswerOptions{{Kind: "lrn"}, {Kind: "lrn", Enhanced: true, Messaging: true}, {Kind: "trust"}} {
		buf, err := httpapi.AppendAnswers(nil, db, o, numbers, ends, answered, nil)
		require.NoError(b, err)
		var lines [][]byte
		start := 0
		for _, end := range ends {
			lines = append(lines, buf[start:end])
			start = end
		}
		name := o.Kind
		if o.Enhanced {
			name += "-enhanced-messaging"
		}
		for _, path := range []string{"scanner", "encoding-json"} {
			b.Run(name+"/"+path, func(b *testing.B) {
				c := NewResultsCSV(csv.NewWriter(io.Discard), o.Kind)
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					line := lines[i%len(lines)]
					if path == "scanner" {
						if !c.flat.fill(c.row, line) {
							b.Fatalf("deferred %s", line)
						}
					} else if err := c.decode(line); err != nil {
						b.Fatal(err)
					}
					if err := c.w.Write(c.row); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
