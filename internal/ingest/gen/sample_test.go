package gen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sampleConfig is how testdata/sample is generated; testdata/sample/README.md
// gives the same as a command line.
var sampleConfig = Config{Seed: 1, Ported: 3000, Codes: 240, Carriers: 60, Messaging: 0.2, CNAM: 0.25, Trust: 0.06}

const sampleDir = "../../../testdata/sample"

// TestSampleIsGenerated guards that the committed sample is exactly what
// the generator writes, so that it can always be regenerated.
func TestSampleIsGenerated(t *testing.T) {
	dir, _ := generate(t, sampleConfig)
	for _, f := range allFiles {
		assert.True(t, bytes.Equal(readFile(t, dir, f), readFile(t, sampleDir, f)),
			"testdata/sample/%s is not what the generator writes: regenerate it as testdata/sample/README.md says", f)
	}
}

// TestSampleCoverage checks that the sample holds every case a lookup must
// handle, so golden tests can pick numbers from it.
func TestSampleCoverage(t *testing.T) {
	d := readDir(t, sampleDir)
	cases := sampleCases(d)
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		tns := cases[name]
		assert.NotEmpty(t, tns, "the sample has no case %q", name)
		t.Logf("%-44s %v", name, head(tns, 4))
	}
	assert.Contains(t, d.codes, sampleNPA*1000+sampleNXX)
	assert.Contains(t, d.ported, int64(2025550123), "the docs' example number is ported")
	var size int64
	for _, f := range allFiles {
		fi, err := os.Stat(filepath.Join(sampleDir, f))
		require.NoError(t, err)
		size += fi.Size()
	}
	assert.Less(t, size, int64(400<<10), "the sample stays small")
}

func head(s []int64, n int) []int64 { return s[:min(n, len(s))] }

// sampleCases finds example numbers for each case the lookups distinguish.
func sampleCases(d *dirData) map[string][]int64 {
	cases := map[string][]int64{}
	add := func(name string, tn int64) { cases[name] = append(cases[name], tn) }
	current := func(tn int64) carrierRow {
		if p, ok := d.ported[tn]; ok {
			return d.carriers[p.spid]
		}
		return d.carriers[d.owner(tn).ocn]
	}
	listed := func(tn int64) bool {
		_, p := d.ported[tn]
		_, m := d.messaging[tn]
		_, c := d.cnam[tn]
		_, r := d.trust[tn]
		return p || m || c || r
	}
	// Numbers that appear in no file: 234 in every thousands-block.
	var plain []int64
	for code := range d.codes {
		for x := range 10 {
			if tn := int64(code)*10_000 + int64(x)*1000 + 234; !listed(tn) {
				plain = append(plain, tn)
			}
		}
	}
	sort.Slice(plain, func(i, j int) bool { return plain[i] < plain[j] })
	all := append(sortedKeys(keys(d.ported), keys(d.messaging), keys(d.cnam), keys(d.trust)), plain...)

	for _, tn := range sortedKeys(d.ported) {
		p := d.ported[tn]
		if p.npac {
			add("ported, NPAC yyyymmddhhmmss", tn)
		} else {
			add("ported, RFC 3339", tn)
		}
		switch age := now.Sub(p.at); {
		case age < 7*24*time.Hour:
			add("ported in the last 7 days", tn)
		case age < 30*24*time.Hour:
			add("ported 7 to 30 days ago", tn)
		}
		if current(tn).ctype == typeVOIP {
			add("ported to a VOIP carrier", tn)
		}
	}
	for _, tn := range plain {
		k := codeOf(tn)*10 + int(tn/1000%10)
		b, inBlock := d.blocks[k]
		switch {
		case inBlock && b.lrn != "":
			add("pooled block with LRN, not ported", tn)
			if now.Sub(b.at) < 30*24*time.Hour {
				add("pooled block activated in the last 30 days", tn)
			}
		case inBlock:
			add("thousands-block without LRN (retained)", tn)
		case d.hasBlocks(codeOf(tn)):
			add("unassigned block of a split code", tn)
		default:
			add("plain number in a whole code", tn)
		}
		if current(tn).ctype == typeVOIP {
			add("VOIP carrier, not ported", tn)
		}
	}
	for _, tn := range all {
		c := current(tn)
		_, hasCNAM := d.cnam[tn]
		_, hasMsg := d.messaging[tn]
		switch {
		case c.ctype == typeWireless && hasCNAM:
			add("WIRELESS with a CNAM row", tn)
		case c.ctype == typeWireless:
			add("WIRELESS without a CNAM row", tn)
		case !hasCNAM:
			add("non-wireless without a CNAM row", tn)
		}
		switch {
		case hasMsg:
			add("messaging from a per-number row", tn)
		case c.provider != "":
			add("messaging from the carrier default", tn)
		default:
			add("carrier without a messaging default", tn)
		}
	}
	for _, tn := range sortedKeys(d.trust) {
		r := d.trust[tn]
		add("trust "+r.spamType, tn)
		if r.complaints >= 1000 {
			add("trust with 1000+ complaints", tn)
		}
	}
	for code := range d.codes {
		if code == sampleNPA*1000+sampleNXX {
			add(fmt.Sprintf("code %d-%d", sampleNPA, sampleNXX), int64(code)*10_000)
		}
	}
	return cases
}

func (d *dirData) hasBlocks(code int) bool {
	for x := range 10 {
		if _, ok := d.blocks[code*10+x]; ok {
			return true
		}
	}
	return false
}

func sortedKeys[V any](ms ...map[int64]V) []int64 {
	seen := map[int64]bool{}
	var out []int64
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
