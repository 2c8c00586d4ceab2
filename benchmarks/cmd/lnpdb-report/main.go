// Command lnpdb-report turns lnpdb-bench's JSON into a Markdown results
// table and a PNG chart, and several runs' JSON into one summary table.
//
//	lnpdb-report -in results/1M.json -md results/1M.md -png results/1M.png
//	lnpdb-report -summary results/summary.md results/1M.json results/10M.json
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lnpdb/lnpdb/benchmarks/internal/bench"
)

func main() {
	var (
		in      = flag.String("in", "", "lnpdb-bench JSON")
		md      = flag.String("md", "", "Markdown file to write")
		png     = flag.String("png", "", "PNG chart to write")
		summary = flag.String("summary", "", "write a summary table over the JSON files given as arguments")
	)
	flag.Parse()
	if *summary != "" {
		var rs []*bench.Results
		for _, f := range flag.Args() {
			r, err := read(f)
			if err != nil {
				fatal(err)
			}
			rs = append(rs, r)
		}
		var b bytes.Buffer
		bench.WriteSummary(&b, rs)
		if err := os.WriteFile(*summary, b.Bytes(), 0o644); err != nil {
			fatal(err)
		}
		return
	}
	if *in == "" {
		fmt.Fprintln(os.Stderr, "lnpdb-report: -in or -summary is required")
		os.Exit(2)
	}
	r, err := read(*in)
	if err != nil {
		fatal(err)
	}
	if *png != "" {
		if err := r.WritePNG(*png); err != nil {
			fatal(err)
		}
	}
	if *md != "" {
		var b bytes.Buffer
		rel := ""
		if *png != "" {
			rel, _ = filepath.Rel(filepath.Dir(*md), *png)
		}
		r.WriteMarkdown(&b, rel)
		if err := os.WriteFile(*md, b.Bytes(), 0o644); err != nil {
			fatal(err)
		}
	}
}

func read(path string) (*bench.Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r bench.Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "lnpdb-report:", err)
	os.Exit(1)
}
