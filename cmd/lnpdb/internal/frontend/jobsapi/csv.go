package jobsapi

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"github.com/lnpdb/lnpdb/cnam"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/lnpdb/lnpdb/messaging"
	"github.com/lnpdb/lnpdb/trust"
)

// The CSV form of a job's results is the NDJSON form flattened: a column
// for the input, one per field of the kind's answer (a nested object's
// fields as parent.child, a list as its JSON), and the error body's
// error, code and details, empty on a success.

var resultTypes = map[string]reflect.Type{
	"lrn":       reflect.TypeFor[lrn.Result](),
	"cnam":      reflect.TypeFor[cnam.Result](),
	"messaging": reflect.TypeFor[messaging.Result](),
	"trust":     reflect.TypeFor[trust.Result](),
}

// columns returns the answer's fields of kind, flattened, in struct order.
func columns(kind string) []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			ft := f.Type
			if ft.Kind() == reflect.Struct && !reflect.PointerTo(ft).Implements(reflect.TypeFor[json.Marshaler]()) && !ft.Implements(reflect.TypeFor[json.Marshaler]()) {
				walk(ft, prefix+name+".")
				continue
			}
			out = append(out, prefix+name)
		}
	}
	walk(resultTypes[kind], "")
	return out
}

// ResultsCSV writes a kind's results as CSV rows, after the header: the
// jobs' text/csv results and lnpdb lookup's CSV output.
type ResultsCSV struct {
	w     *csv.Writer
	cols  []string
	paths [][]string // cols split at their dots
	row   []string
	flat  flatScanner
	// One decoder reads every line the scanner defers, src reset to
	// each: a decoder a line was most of a row's cost.
	src bytes.Reader
	dec *json.Decoder
	m   map[string]any
}

// NewResultsCSV writes the header of kind's results to w and returns
// their writer.
func NewResultsCSV(w *csv.Writer, kind string) *ResultsCSV {
	c := &ResultsCSV{w: w, cols: columns(kind), m: map[string]any{}}
	for _, col := range c.cols {
		c.paths = append(c.paths, strings.Split(col, "."))
	}
	c.flat.init(c.cols)
	c.dec = json.NewDecoder(&c.src)
	c.dec.UseNumber()
	head := append(append([]string{"input"}, c.cols...), "error", "code", "details")
	c.row = make([]string, len(head))
	_ = w.Write(head)
	return c
}

// Write writes the row of one input and its NDJSON answer line.
func (c *ResultsCSV) Write(input string, line []byte) error {
	if !c.flat.fill(c.row, line) {
		if err := c.decode(line); err != nil {
			return err
		}
	}
	c.row[0] = input
	return c.w.Write(c.row)
}

// decode fills the row's columns from line by encoding/json: the
// reference the scanner's rows equal, and the path of every line it
// defers.
func (c *ResultsCSV) decode(line []byte) error {
	m := c.m
	clear(m)
	c.src.Reset(line)
	if err := c.dec.Decode(&m); err != nil {
		return err
	}
	if c.dec.More() {
		return errors.New("jobsapi: a results line holds more than one JSON value")
	}
	clear(c.row)
	for i, path := range c.paths {
		c.row[1+i] = value(lookupPath(m, path))
	}
	n := len(c.cols) + 1
	if _, ok := m["code"]; ok && len(m) == 3 {
		c.row[n], c.row[n+1], c.row[n+2] = value(m["error"]), value(m["code"]), value(m["details"])
	}
	return nil
}

func lookupPath(m map[string]any, path []string) any {
	var v any = m
	for _, p := range path {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = o[p]
	}
	return v
}

func value(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		if x {
			return "true"
		}
		return "false"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
