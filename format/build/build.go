// Package build reads a source directory (the CSV files of docs/DATA.md
// and the NPAC bulk data download files, each plain, .gz or .zst) and
// writes a table with
// format.Writer. It owns what reading takes: matching rows across files,
// counting or refusing bad rows, progress on a terminal, and the memory
// budget of per-number rows. It must not reach into the file's layout:
// everything it writes goes through format.Writer.
package build

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/nanp"
	"github.com/lnpdb/lnpdb/internal/ingest/progress"
	"github.com/lnpdb/lnpdb/internal/ingest/source"
)

// Options configure Build.
type Options struct {
	// SkipBadRows turns row errors (a malformed value, an unknown OCN, a
	// duplicate number) into a count and a sample in the report instead of
	// failing the build. A missing required column always fails.
	SkipBadRows bool
	// PortedFormat says how to read ported data: "" picks by file name
	// (ported.csv or ported.npac), "csv" or "npac" forces the shape of
	// whichever of the two files is present.
	PortedFormat string
	// Progress, when it is a terminal, shows progress; nil shows nothing.
	Progress io.Writer
	// BuiltAt is recorded in the header; zero means now.
	BuiltAt time.Time
	// MaxMemory bounds the bytes of per-number rows (ported, messaging,
	// CNAM, trust) held in memory while reading; past it they go to
	// temporary spill files and the build's memory stays flat however
	// large the source. It is a budget for rows, not the process's peak:
	// dictionaries, the NPAs being hashed and the garbage collector's
	// headroom come on top. Zero means DefaultMaxMemory; negative never
	// spills.
	MaxMemory int64
	// TempDir is where spill files go; empty means the output's directory.
	TempDir string
}

// Report says what a build read and wrote.
type Report struct {
	Files         []FileReport   // every file of the source directory, by name
	Rows          map[string]int // good rows read, by file name
	Skipped       int            // bad rows skipped (SkipBadRows)
	SkippedSample []string       // the first few skipped rows' errors
	Spilled       int            // per-number rows that went through spill files
	Counts        format.Counts
	FileSize      int64
	Duration      time.Duration

	skippedBy map[string]int           // skipped records by file
	badBy     map[string]int           // bad records (row errors) skipped, by file
	reasons   map[string][]SkipReason  // by file: records a rule left out
	lines     map[string]*source.Count // by file: its lines, as read
	notes     map[string]string        // by file: a note on the file
}

// BytesPerPorted is the file size divided by the number of ported numbers.
func (r *Report) BytesPerPorted() float64 {
	if r.Counts.Ported == 0 {
		return 0
	}
	return float64(r.FileSize) / float64(r.Counts.Ported)
}

const maxSkippedSample = 10

// DefaultMaxMemory is the budget of per-number rows held in memory while
// building, when Options.MaxMemory is zero: about 30 million rows, which
// keeps tables of that size free of temporary files.
const DefaultMaxMemory = 512 << 20

// Build reads the source directory src (the files of DATA.md) and writes the
// table to out. It writes a temporary file beside out, verifies it, and
// renames it into place only then: a failed build leaves no partial output
// and an existing out untouched.
func Build(ctx context.Context, src fs.FS, out string, opt Options) (*Report, error) {
	start := time.Now()
	files, err := catalog(src)
	if err != nil {
		return nil, err
	}
	b := &builder{ctx: ctx, src: src, opt: opt, report: newReport(), w: format.NewWriter(), rcIdx: map[string]uint32{}, files: files}
	defer b.w.Close()
	if err := b.read(out); err != nil {
		return nil, err
	}
	if err := b.fileReports(); err != nil {
		return nil, err
	}
	counts, err := b.w.WriteFile(ctx, out, format.WriteOptions{BuiltAt: opt.BuiltAt, Duplicate: b.duplicate})
	if err != nil {
		return nil, err
	}
	b.report.Counts = counts
	b.report.Spilled = b.w.Spilled()
	st, err := os.Stat(out)
	if err != nil {
		return nil, err
	}
	b.report.FileSize = st.Size()
	b.report.Duration = time.Since(start)
	return b.report, nil
}

// builder is one build's reading state; the table's is in w.
type builder struct {
	ctx    context.Context
	src    fs.FS
	opt    Options
	report *Report
	w      *format.Writer

	rcIdx map[string]uint32 // rcKey → rate center index
	files []sourceFile

	// portedFiles are the files ported numbers were read from, in order;
	// a row's line is passed to the writer as base+line, so that a number
	// listed twice across them names both files.
	portedFiles []portedFile
	pool        map[uint32]*poolEntry // NPA-NXX-X → its number pool block record
}

type portedFile struct {
	name string
	base int
}

func newReport() *Report {
	return &Report{Rows: map[string]int{}, skippedBy: map[string]int{}, badBy: map[string]int{},
		reasons: map[string][]SkipReason{}, lines: map[string]*source.Count{}, notes: map[string]string{}}
}

// named returns the files of the given kinds, in name order.
func (b *builder) named(kinds ...Kind) []sourceFile {
	var out []sourceFile
	for _, f := range b.files {
		for _, k := range kinds {
			if f.kind == k {
				out = append(out, f)
			}
		}
	}
	return out
}

// one returns the lnpdb file of a kind: its name as found, or "" if absent.
func (b *builder) one(k Kind) string {
	if fs := b.named(k); len(fs) > 0 {
		return fs[0].name
	}
	return ""
}

// fileReports fills Report.Files from the counts the reading kept, and
// checks that every line read is accounted for.
func (b *builder) fileReports() error {
	for _, f := range b.files {
		note := b.report.notes[f.name]
		if f.kind == KindUnknown && note == "" {
			note = "not an lnpdb file name nor an NPAC bulk data record shape; not read"
		}
		fr := FileReport{Name: f.name, Kind: f.kind, Read: b.report.Rows[f.name], Skipped: b.report.skippedBy[f.name],
			Bad: b.report.badBy[f.name], Reasons: b.report.reasons[f.name], Note: note}
		if c := b.report.lines[f.name]; c != nil {
			fr.Lines, fr.Header, fr.Blank = c.Lines, c.Header, c.Blank
			if fr.Lines != fr.Header+fr.Blank+fr.Read+fr.Skipped {
				return fmt.Errorf("format: %s: %d lines, but %d header, %d blank, %d read and %d skipped (a record went unaccounted)",
					f.name, fr.Lines, fr.Header, fr.Blank, fr.Read, fr.Skipped)
			}
		}
		b.report.Files = append(b.report.Files, fr)
	}
	return nil
}

// duplicate reports a number listed twice in the per-number files.
func (b *builder) duplicate(f format.Fields, tn uint64, line, first int) error {
	if f == format.FieldPorted {
		file, l := b.portedAt(line)
		firstFile, fl := b.portedAt(first)
		if firstFile != file {
			return b.rowErr(file, l, "tn", "%s listed twice (first in %s on line %d)", nanp.Number(tn), firstFile, fl)
		}
		return b.rowErr(file, l, "tn", "%s listed twice (first on line %d)", nanp.Number(tn), fl)
	}
	file := map[format.Fields]Kind{format.FieldMessaging: KindMessaging, format.FieldCNAM: KindCNAM, format.FieldTrust: KindTrust}[f]
	return b.rowErr(b.one(file), line, "tn", "%s listed twice (first on line %d)", nanp.Number(tn), first)
}

// portedAt maps a line passed to the writer back to its file and line.
func (b *builder) portedAt(line int) (string, int) {
	for i := len(b.portedFiles) - 1; i >= 0; i-- {
		if p := b.portedFiles[i]; line > p.base {
			return p.name, line - p.base
		}
	}
	return "", line
}

// rowErr handles a row error found by the builder itself (a cross-reference
// or duplicate): it fails the build, or counts it with SkipBadRows.
func (b *builder) rowErr(file string, line int, column, format string, args ...any) error {
	e := &source.RowError{File: file, Line: line, Column: column, Reason: fmt.Sprintf(format, args...)}
	if !b.opt.SkipBadRows {
		return e
	}
	b.skip(e)
	return nil
}

func (b *builder) skip(e *source.RowError) {
	b.report.Skipped++
	b.report.skippedBy[e.File]++
	b.report.badBy[e.File]++
	if len(b.report.SkippedSample) < maxSkippedSample {
		b.report.SkippedSample = append(b.report.SkippedSample, e.Error())
	}
}

// ruleSkip counts a record a rule leaves out (not an error): reason says
// why, and records are counted by reason.
func (b *builder) ruleSkip(file, reason string) {
	b.report.skippedBy[file]++
	rs := b.report.reasons[file]
	for i := range rs {
		if rs[i].Reason == reason {
			rs[i].Count++
			return
		}
	}
	b.report.reasons[file] = append(rs, SkipReason{Reason: reason, Count: 1})
}

// srcOpts are the options a source file is read with: bad rows skipped or
// not, and its lines counted.
func (b *builder) srcOpts(file string) source.Options {
	c := b.report.lines[file]
	if c == nil {
		c = &source.Count{}
		b.report.lines[file] = c
	}
	return source.Options{SkipBadRows: b.opt.SkipBadRows, OnSkip: b.skip, Count: c}
}

// open opens a source file; optional files that are absent return nil.
func (b *builder) open(name string, required bool) (fs.File, *progress.Bar, io.Reader, error) {
	f, err := b.src.Open(name)
	if err != nil {
		if !required && errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil, nil
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil, fmt.Errorf("format: required source file %s is missing", name)
		}
		return nil, nil, nil, err
	}
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	bar := progress.New(b.opt.Progress, name, size)
	r, closeZ, err := Decompress(name, &countingReader{r: f, bar: bar, ctx: b.ctx})
	if err != nil {
		f.Close()
		return nil, nil, nil, err
	}
	return closer{f, closeZ}, bar, r, nil
}

// closer closes a source file and its decompressor.
type closer struct {
	fs.File
	closeZ func()
}

func (c closer) Close() error {
	c.closeZ()
	return c.File.Close()
}

// countingReader feeds progress and notices cancellation between reads.
type countingReader struct {
	r   io.Reader
	bar *progress.Bar
	ctx context.Context
}

func (c *countingReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.bar.Add(int64(n))
	return n, err
}

func (b *builder) readFile(name string, required bool, read func(r io.Reader) error) error {
	f, bar, r, err := b.open(name, required)
	if err != nil || f == nil {
		return err
	}
	defer f.Close()
	err = read(r)
	bar.Done()
	return err
}

func (b *builder) read(out string) error {
	for _, step := range []func() error{b.readCarriers, b.readRateCenters, b.readBlocks} {
		if err := step(); err != nil {
			return err
		}
	}
	return b.readPerNumber(out)
}

// readPerNumber reads the per-number files on two goroutines: ported on
// this one, messaging, CNAM and trust on another. Once blocks are read they
// share nothing they change (format.Writer keeps the two sides apart), so
// the table is the same; each side has its own report and a share of the
// memory budget in proportion to its files' sizes, and the reports merge in
// file order, so that the errors and skipped rows reported are those of
// reading the files one after another. Only ported draws a progress bar,
// as the two would share one line.
func (b *builder) readPerNumber(out string) error {
	parent := b.ctx
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	side := &builder{ctx: ctx, src: b.src, opt: b.opt, report: newReport(), w: b.w, files: b.files}
	side.opt.Progress = nil
	b.ctx = ctx
	defer func() { b.ctx = parent }()
	b.setMemory(out)

	done := make(chan error, 1)
	go func() {
		var err error
		for _, step := range []func() error{side.readMessaging, side.readCNAM, side.readTrust} {
			if err = step(); err != nil {
				break
			}
		}
		done <- err
	}()
	errPorted := b.readPorted()
	if errPorted != nil {
		cancel()
	}
	errSide := <-done

	for f, n := range side.report.Rows {
		b.report.Rows[f] += n
	}
	b.report.Skipped += side.report.Skipped
	for f, n := range side.report.skippedBy {
		b.report.skippedBy[f] += n
	}
	for f, n := range side.report.badBy {
		b.report.badBy[f] += n
	}
	for f, c := range side.report.lines {
		b.report.lines[f] = c
	}
	for f, rs := range side.report.reasons {
		b.report.reasons[f] = rs
	}
	for _, e := range side.report.SkippedSample {
		if len(b.report.SkippedSample) < maxSkippedSample {
			b.report.SkippedSample = append(b.report.SkippedSample, e)
		}
	}
	if errPorted != nil {
		return errPorted
	}
	return errSide
}

// setMemory splits Options.MaxMemory between the ported side and the other
// side in proportion to their files' sizes.
func (b *builder) setMemory(out string) {
	limit := b.opt.MaxMemory
	switch {
	case limit == 0:
		limit = DefaultMaxMemory
	case limit < 0:
		limit = 0
	}
	dir := b.opt.TempDir
	if dir == "" {
		dir = filepath.Dir(out)
	}
	if limit == 0 {
		b.w.SetMemory(0, 0, dir)
		return
	}
	var portedSize, sideSize int64
	for _, f := range b.named(KindPorted, KindPortedNPAC, KindSV) {
		portedSize += f.size
	}
	for _, f := range b.named(KindMessaging, KindCNAM, KindTrust) {
		sideSize += f.size
	}
	share := float64(portedSize) / float64(max(1, portedSize+sideSize))
	ported := max(1, int64(float64(limit)*share))
	b.w.SetMemory(ported, max(1, limit-ported), dir)
}

// required returns the name of a required lnpdb file as found, or an error
// naming it.
func (b *builder) required(k Kind, name string) (string, error) {
	if f := b.one(k); f != "" {
		return f, nil
	}
	return "", fmt.Errorf("format: required source file %s is missing", name)
}

// readCarriers reads carriers.csv, the NPAC SPID files and the OCNs of the
// numbering reports, in that order: one of them is required, and a carrier
// an earlier source names keeps that source's row (carriers.csv has the
// carrier type and messaging defaults, a SPID file the type, a report
// neither).
func (b *builder) readCarriers() error {
	spids := b.named(KindSPID)
	file := b.one(KindCarriers)
	if file == "" && len(spids) == 0 && len(b.named(KindNumbering)) == 0 {
		return fmt.Errorf("format: required source file carriers.csv is missing (nor is there an NPAC SPID file or a numbering report)")
	}
	if file != "" {
		err := b.readFile(file, true, func(r io.Reader) error {
			return source.ReadCarriers(r, file, b.srcOpts(file), func(c *source.Carrier) error {
				if _, added := b.w.AddCarrier(format.Carrier{OCN: c.OCN, Name: c.Name, Type: c.Type, MessagingProvider: c.MessagingProvider, MessagingEnabled: c.MessagingEnabled}); !added {
					return b.rowErr(file, c.Line, "ocn", "OCN %s listed twice", c.OCN)
				}
				b.report.Rows[file]++
				return nil
			})
		})
		if err != nil {
			return err
		}
	}
	for _, f := range spids {
		err := b.readFile(f.name, true, func(r io.Reader) error {
			return source.ReadServiceProviders(r, f.name, b.srcOpts(f.name), func(sp *source.ServiceProvider) error {
				if _, ok := b.w.Carrier(sp.SPID); ok {
					b.ruleSkip(f.name, "a SPID already named by carriers.csv or an earlier SPID file keeps that row")
					return nil
				}
				b.w.AddCarrier(format.Carrier{OCN: sp.SPID, Name: sp.Name, Type: carrierType(sp.Type)})
				b.report.Rows[f.name]++
				return nil
			})
		})
		if err != nil {
			return err
		}
	}
	// Last, as they say least: no carrier type.
	return b.reportCarriers()
}

// reportCarriers adds the OCNs of the numbering reports' assigned codes and
// blocks that no carriers.csv row names: the company as the name, no
// carrier_type (the reports do not say).
func (b *builder) reportCarriers() error {
	for _, f := range b.named(KindNumbering) {
		err := b.readFile(f.name, true, func(r io.Reader) error {
			// Bad rows are reported when the blocks are read.
			return source.ReadNumberingReport(r, f.name, source.Options{SkipBadRows: true}, func(n *source.NumberingRecord) error {
				if n.Status != "" && n.Status != source.StatusAssigned || n.OCN == "" {
					return nil
				}
				if _, ok := b.w.Carrier(n.OCN); !ok {
					name := n.Company
					if name == "" {
						name = n.OCN
					}
					b.w.AddCarrier(format.Carrier{OCN: n.OCN, Name: name})
				}
				return nil
			})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// carrierType is the carriers.csv carrier_type an NPAC service provider
// type stands for: wireline → LEC (landline), wireless → WIRELESS
// (mobile), class 1 interconnected VoIP → VOIP; non-carrier, a reserved
// type and none have no line type (docs/DATA.md).
func carrierType(t source.SPType) string {
	switch t {
	case source.SPTypeWireline:
		return "LEC"
	case source.SPTypeWireless:
		return "WIRELESS"
	case source.SPTypeClass1InterconnectedVoIP:
		return "VOIP"
	case source.SPTypeNonCarrier:
		return "NONCARRIER"
	}
	return ""
}

func rcKey(state, name string) string { return state + "\x00" + strings.ToUpper(name) }

func (b *builder) readRateCenters() error {
	file, err := b.required(KindRateCenters, "ratecenters.csv")
	if err != nil {
		return err
	}
	return b.readFile(file, true, func(r io.Reader) error {
		return source.ReadRateCenters(r, file, b.srcOpts(file), func(rc *source.RateCenter) error {
			k := rcKey(rc.State, rc.Name)
			if _, dup := b.rcIdx[k]; dup {
				return b.rowErr(file, rc.Line, "rate_center", "rate center %s %s listed twice", rc.State, rc.Name)
			}
			off, err := standardOffset(rc.TimeZone)
			if err != nil {
				return b.rowErr(file, rc.Line, "timezone", "%v", err)
			}
			b.rcIdx[k] = b.w.AddRateCenter(format.RateCenter{State: rc.State, Name: rc.Name, LATA: rc.LATA, City: rc.City, County: rc.County, ZIP: rc.ZIP, TimeZone: rc.TimeZone, UTCOffset: off})
			b.report.Rows[file]++
			return nil
		})
	})
}

// standardOffset is a zone's offset without daylight saving, as -0500: the
// smaller of its January and July offsets (daylight saving only adds).
func standardOffset(zone string) (string, error) {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return "", fmt.Errorf("unknown time zone %q", zone)
	}
	_, jan := time.Date(2025, 1, 15, 12, 0, 0, 0, loc).Zone()
	_, jul := time.Date(2025, 7, 15, 12, 0, 0, 0, loc).Zone()
	off := min(jan, jul)
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("%c%02d%02d", sign, off/3600, off%3600/60), nil
}

// poolEntry is a number pool block record, waiting for its block.
type poolEntry struct {
	file, spid  string
	line        int
	lrn         uint64
	activatedAt int64
	used        bool
}

// readPoolBlocks reads the NPAC number pool block files into b.pool.
func (b *builder) readPoolBlocks() error {
	b.pool = map[uint32]*poolEntry{}
	for _, f := range b.named(KindPoolBlocks) {
		err := b.readFile(f.name, true, func(r io.Reader) error {
			return source.ReadPoolBlocks(r, f.name, b.srcOpts(f.name), func(p *source.PoolBlock) error {
				if p.Reason == source.ReasonDelete {
					b.ruleSkip(f.name, "a deleted block (download reason delete) is not routed")
					return nil
				}
				if _, ok := b.w.Carrier(p.SPID); !ok {
					return b.rowErr(f.name, p.Line, "spid", "unknown SPID %s (not in carriers.csv)", p.SPID)
				}
				k := uint32(p.NPA*10000 + p.NXX*10 + p.X)
				if first, dup := b.pool[k]; dup {
					return b.rowErr(f.name, p.Line, "npa_nxx_x", "thousands-block %03d-%03d-%d listed twice (first in %s on line %d)", p.NPA, p.NXX, p.X, first.file, first.line)
				}
				b.pool[k] = &poolEntry{file: f.name, spid: p.SPID, line: p.Line, lrn: uint64(p.LRN), activatedAt: p.ActivatedAt}
				b.report.Rows[f.name]++
				return nil
			})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// readBlocks reads blocks.csv. A thousands-block with a number pool block
// record takes its LRN and activation from the NPAC record (the routing
// the NPAC broadcasts), whatever blocks.csv's lrn column says; a pool block
// record with no thousands-block row is an error, as the row gives the
// block its holder and rate center.
func (b *builder) readBlocks() error {
	if err := b.readPoolBlocks(); err != nil {
		return err
	}
	reports := b.named(KindNumbering)
	file := b.one(KindBlocks)
	if file == "" && len(reports) == 0 {
		return fmt.Errorf("format: required source file blocks.csv is missing (nor is there a numbering report)")
	}
	var fromCSV map[uint32]bool // codes and blocks blocks.csv gave, when reports follow
	if len(reports) > 0 {
		fromCSV = map[uint32]bool{}
	}
	if file != "" {
		if err := b.readBlocksCSV(file, fromCSV); err != nil {
			return err
		}
	}
	for _, f := range reports {
		if err := b.readNumbering(f.name, fromCSV); err != nil {
			return err
		}
	}
	if file == "" {
		file = "the numbering reports"
	}
	var unused []*poolEntry
	for _, p := range b.pool {
		if !p.used {
			unused = append(unused, p)
		}
	}
	sort.Slice(unused, func(i, j int) bool {
		return unused[i].file < unused[j].file || unused[i].file == unused[j].file && unused[i].line < unused[j].line
	})
	for _, p := range unused {
		if err := b.rowErr(p.file, p.line, "npa_nxx_x", "no thousands-block row for it in %s (which gives its holder and rate center)", file); err != nil {
			return err
		}
	}
	return b.readNetwork()
}

// pooled sets a thousands-block's LRN and activation from its number pool
// block record, if it has one.
func (b *builder) pooled(npa, nxx, x int, lrn *nanp.Number, at *int64) {
	if x < 0 {
		return
	}
	if p := b.pool[uint32(npa*10000+nxx*10+x)]; p != nil {
		*lrn, *at, p.used = nanp.Number(p.lrn), p.activatedAt, true
	}
}

// readNumbering reads a NANPA code report or a PA thousands-block report
// as blocks: assigned rows only. A code or block blocks.csv also gives
// keeps blocks.csv's row.
func (b *builder) readNumbering(file string, fromCSV map[uint32]bool) error {
	return b.readFile(file, true, func(r io.Reader) error {
		return source.ReadNumberingReport(r, file, b.srcOpts(file), func(n *source.NumberingRecord) error {
			if n.Status != "" && n.Status != source.StatusAssigned {
				b.ruleSkip(file, "a code or block not assigned (Use/Status other than AS) has no holder")
				return nil
			}
			if n.OCN == "" {
				b.ruleSkip(file, "a code or block listed with OCN MULT (multiple OCNs) has no one holder")
				return nil
			}
			key := uint32(n.NPA*10000 + n.NXX*10 + (n.X + 1))
			if fromCSV[key] {
				b.ruleSkip(file, "a code or block blocks.csv also gives keeps blocks.csv's row")
				return nil
			}
			ci, ok := b.w.Carrier(n.OCN)
			if !ok {
				return b.rowErr(file, n.Line, "ocn", "unknown OCN %s", n.OCN)
			}
			ri, ok := b.rcIdx[rcKey(n.State, n.RateCenter)]
			if !ok {
				return b.rowErr(file, n.Line, "ratecenter", "unknown rate center %s %s (not in ratecenters.csv)", n.State, n.RateCenter)
			}
			var lrn nanp.Number
			var at int64
			b.pooled(n.NPA, n.NXX, n.X, &lrn, &at)
			if !b.w.AddBlock(n.NPA, n.NXX, n.X, format.BlockRow{Carrier: ci, RateCenter: ri, LRN: uint64(lrn), ActivatedAt: at}) {
				if n.X < 0 {
					return b.rowErr(file, n.Line, "npa-nxx", "code %03d-%03d listed twice", n.NPA, n.NXX)
				}
				return b.rowErr(file, n.Line, "npa-nxx-x", "thousands-block %03d-%03d-%d listed twice", n.NPA, n.NXX, n.X)
			}
			b.report.Rows[file]++
			return nil
		})
	})
}

func (b *builder) readBlocksCSV(file string, fromCSV map[uint32]bool) error {
	return b.readFile(file, true, func(r io.Reader) error {
		return source.ReadBlocks(r, file, b.srcOpts(file), func(blk *source.Block) error {
			b.pooled(blk.NPA, blk.NXX, blk.X, &blk.LRN, &blk.ActivatedAt)
			ci, ok := b.w.Carrier(blk.OCN)
			if !ok {
				return b.rowErr(file, blk.Line, "ocn", "unknown OCN %s (not in carriers.csv)", blk.OCN)
			}
			ri, ok := b.rcIdx[rcKey(blk.State, blk.RateCenter)]
			if !ok {
				return b.rowErr(file, blk.Line, "rate_center", "unknown rate center %s %s (not in ratecenters.csv)", blk.State, blk.RateCenter)
			}
			row := format.BlockRow{Carrier: ci, RateCenter: ri, LRN: uint64(blk.LRN), ActivatedAt: blk.ActivatedAt}
			if !b.w.AddBlock(blk.NPA, blk.NXX, blk.X, row) {
				if blk.X < 0 {
					return b.rowErr(file, blk.Line, "nxx", "code %03d-%03d listed twice", blk.NPA, blk.NXX)
				}
				return b.rowErr(file, blk.Line, "x", "thousands-block %03d-%03d-%d listed twice", blk.NPA, blk.NXX, blk.X)
			}
			if fromCSV != nil {
				fromCSV[uint32(blk.NPA*10000+blk.NXX*10+(blk.X+1))] = true
			}
			b.report.Rows[file]++
			return nil
		})
	})
}

// readNetwork checks the NPAC network data files (LRN, NPA-NXX,
// NPA-NXX-X): their SPIDs must be known. They do not change an answer:
// codes and blocks come from blocks.csv, routing from subscription
// versions and pool blocks.
func (b *builder) readNetwork() error {
	for _, f := range b.named(KindLRN, KindNPANXX, KindNPANXXX) {
		spid := func(line int, id string) error {
			if _, ok := b.w.Carrier(id); !ok {
				return b.rowErr(f.name, line, "spid", "unknown SPID %s (not in carriers.csv)", id)
			}
			b.report.Rows[f.name]++
			return nil
		}
		b.report.notes[f.name] = "checked (SPIDs known); network data does not change an answer"
		err := b.readFile(f.name, true, func(r io.Reader) error {
			if f.kind == KindLRN {
				return source.ReadNetworkLRNs(r, f.name, b.srcOpts(f.name), func(l *source.NetworkLRN) error { return spid(l.Line, l.SPID) })
			}
			read := source.ReadNetworkNPANXX
			if f.kind == KindNPANXXX {
				read = source.ReadNetworkNPANXXX
			}
			return read(r, f.name, b.srcOpts(f.name), func(c *source.NetworkCode) error { return spid(c.Line, c.SPID) })
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// perNumber adds a per-number row with add and counts it, unless its
// number lies in no assigned code or thousands-block: data for a vacant
// number could never be answered and points at a bad source. add's error
// is a spill file's.
func (b *builder) perNumber(file string, line int, tn nanp.Number, add func() error) error {
	if !b.w.Assigned(uint64(tn)) {
		return b.rowErr(file, line, "tn", "%s is in no assigned code or thousands-block (blocks.csv)", tn)
	}
	err := add()
	b.report.Rows[file]++
	return err
}

// readPorted reads the ported numbers: ported.csv or ported.npac (one of
// the two) and the NPAC subscription version files, all of them. A number
// listed twice, in one file or across them, is an error.
func (b *builder) readPorted() error {
	csvName, npacName := b.one(KindPorted), b.one(KindPortedNPAC)
	if csvName != "" && npacName != "" {
		return fmt.Errorf("format: both %s and %s are present; keep one", csvName, npacName)
	}
	file, npac := csvName, false
	if npacName != "" {
		file, npac = npacName, true
	}
	switch b.opt.PortedFormat {
	case "":
	case "csv":
		npac = false
	case "npac":
		npac = true
	default:
		return fmt.Errorf("format: unknown ported format %q (want csv or npac)", b.opt.PortedFormat)
	}
	base := 0
	if file != "" {
		read := source.ReadPorted
		if npac {
			read = source.ReadPortedNPAC
		}
		last := 0
		b.portedFiles = append(b.portedFiles, portedFile{file, base})
		err := b.readFile(file, false, func(r io.Reader) error {
			return read(r, file, b.srcOpts(file), func(p *source.Ported) error {
				last = p.Line
				return b.addPorted(file, p.Line, base, p.TN, p.LRN, p.SPID, p.ActivatedAt, p.SVType)
			})
		})
		if err != nil {
			return err
		}
		base += last
	}
	for _, f := range b.named(KindSV) {
		last := 0
		fbase := base
		b.portedFiles = append(b.portedFiles, portedFile{f.name, fbase})
		err := b.readFile(f.name, true, func(r io.Reader) error {
			return source.ReadSubscriptionVersions(r, f.name, b.srcOpts(f.name), func(v *source.SV) error {
				last = v.Line
				switch {
				case v.Reason == source.ReasonDelete:
					b.ruleSkip(f.name, "a deleted subscription version (download reason delete) is not ported")
					return nil
				case v.LNPType == source.LNPTypePool:
					b.ruleSkip(f.name, "a pooled number's version (LNP type pool) is answered by its block")
					return nil
				}
				return b.addPorted(f.name, v.Line, fbase, v.TN, v.LRN, v.SPID, v.ActivatedAt, v.SVType)
			})
		})
		if err != nil {
			return err
		}
		base += last
	}
	return nil
}

func (b *builder) addPorted(file string, line, base int, tn, lrn nanp.Number, spid string, at int64, sv format.SVType) error {
	ci, ok := b.w.Carrier(spid)
	if !ok {
		return b.rowErr(file, line, "spid", "unknown SPID %s (not in carriers.csv)", spid)
	}
	return b.perNumber(file, line, tn, func() error {
		return b.w.AddPorted(uint64(tn), base+line, uint64(lrn), ci, at, sv)
	})
}

func (b *builder) readMessaging() error {
	file := b.one(KindMessaging)
	if file == "" {
		return nil
	}
	return b.readFile(file, false, func(r io.Reader) error {
		return source.ReadMessaging(r, file, b.srcOpts(file), func(m *source.Messaging) error {
			return b.perNumber(file, m.Line, m.TN, func() error {
				return b.w.AddMessaging(uint64(m.TN), m.Line, format.Messaging{
					Provider: m.Provider, Enabled: m.Enabled, Country: m.Country, CountryCode: m.CountryCode, ReferenceID: m.ReferenceID,
				})
			})
		})
	})
}

func (b *builder) readCNAM() error {
	file := b.one(KindCNAM)
	if file == "" {
		return nil
	}
	return b.readFile(file, false, func(r io.Reader) error {
		return source.ReadCNAM(r, file, b.srcOpts(file), func(c *source.CNAM) error {
			return b.perNumber(file, c.Line, c.TN, func() error { return b.w.AddCNAM(uint64(c.TN), c.Line, c.Name) })
		})
	})
}

// readTrust reads trust.csv; internal/ingest/source has checked each row's spam
// type (one of trust.SpamTypes) and dates.
func (b *builder) readTrust() error {
	file := b.one(KindTrust)
	if file == "" {
		return nil
	}
	return b.readFile(file, false, func(r io.Reader) error {
		return source.ReadTrust(r, file, b.srcOpts(file), func(t *source.Trust) error {
			return b.perNumber(file, t.Line, t.TN, func() error {
				return b.w.AddTrust(uint64(t.TN), t.Line, format.Trust{SpamType: t.SpamType, Complaints: t.Complaints, FirstReported: t.FirstReported, LastReported: t.LastReported})
			})
		})
	})
}
