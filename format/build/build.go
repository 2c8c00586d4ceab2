// Package build reads a source directory (the CSV files of docs/DATA.md,
// or NPAC bulk data for ported numbers) and writes a table with
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
	Rows          map[string]int // good rows read, by file name
	Skipped       int            // bad rows skipped (SkipBadRows)
	SkippedSample []string       // the first few skipped rows' errors
	Spilled       int            // per-number rows that went through spill files
	Counts        format.Counts
	FileSize      int64
	Duration      time.Duration
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
	b := &builder{ctx: ctx, src: src, opt: opt, report: &Report{Rows: map[string]int{}}, w: format.NewWriter(), rcIdx: map[string]uint32{}}
	defer b.w.Close()
	if err := b.read(out); err != nil {
		return nil, err
	}
	builtAt := opt.BuiltAt
	if builtAt.IsZero() {
		builtAt = time.Now()
	}
	counts, err := b.w.WriteFile(ctx, out, format.WriteOptions{BuiltAt: builtAt, Duplicate: b.duplicate})
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

	rcIdx      map[string]uint32 // rcKey → rate center index
	portedFile string            // ported.csv or ported.npac, for error messages
}

// duplicate reports a number listed twice in one per-number file.
func (b *builder) duplicate(f format.Fields, tn uint64, line, first int) error {
	file := map[format.Fields]string{
		format.FieldPorted: b.portedFile, format.FieldMessaging: "messaging.csv",
		format.FieldCNAM: "cnam.csv", format.FieldTrust: "trust.csv",
	}[f]
	return b.rowErr(file, line, "tn", "%s listed twice (first on line %d)", nanp.Number(tn), first)
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
	if len(b.report.SkippedSample) < maxSkippedSample {
		b.report.SkippedSample = append(b.report.SkippedSample, e.Error())
	}
}

func (b *builder) srcOpts() source.Options {
	return source.Options{SkipBadRows: b.opt.SkipBadRows, OnSkip: b.skip}
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
	return f, bar, &countingReader{r: f, bar: bar, ctx: b.ctx}, nil
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
	side := &builder{ctx: ctx, src: b.src, opt: b.opt, report: &Report{Rows: map[string]int{}}, w: b.w}
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
	for _, name := range []string{"ported.csv", "ported.npac"} {
		portedSize += fileSize(b.src, name)
	}
	for _, name := range []string{"messaging.csv", "cnam.csv", "trust.csv"} {
		sideSize += fileSize(b.src, name)
	}
	share := float64(portedSize) / float64(max(1, portedSize+sideSize))
	ported := max(1, int64(float64(limit)*share))
	b.w.SetMemory(ported, max(1, limit-ported), dir)
}

func fileSize(fsys fs.FS, name string) int64 {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return 0
	}
	return st.Size()
}

func (b *builder) readCarriers() error {
	const file = "carriers.csv"
	return b.readFile(file, true, func(r io.Reader) error {
		return source.ReadCarriers(r, file, b.srcOpts(), func(c *source.Carrier) error {
			if _, added := b.w.AddCarrier(format.Carrier{OCN: c.OCN, Name: c.Name, Type: c.Type, MessagingProvider: c.MessagingProvider, MessagingEnabled: c.MessagingEnabled}); !added {
				return b.rowErr(file, c.Line, "ocn", "OCN %s listed twice", c.OCN)
			}
			b.report.Rows[file]++
			return nil
		})
	})
}

func rcKey(state, name string) string { return state + "\x00" + strings.ToUpper(name) }

func (b *builder) readRateCenters() error {
	const file = "ratecenters.csv"
	return b.readFile(file, true, func(r io.Reader) error {
		return source.ReadRateCenters(r, file, b.srcOpts(), func(rc *source.RateCenter) error {
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

func (b *builder) readBlocks() error {
	const file = "blocks.csv"
	return b.readFile(file, true, func(r io.Reader) error {
		return source.ReadBlocks(r, file, b.srcOpts(), func(blk *source.Block) error {
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
			b.report.Rows[file]++
			return nil
		})
	})
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

func (b *builder) readPorted() error {
	csvName, npacName := "ported.csv", "ported.npac"
	hasCSV, hasNPAC := exists(b.src, csvName), exists(b.src, npacName)
	if hasCSV && hasNPAC {
		return fmt.Errorf("format: both %s and %s are present; keep one", csvName, npacName)
	}
	file := csvName
	if hasNPAC {
		file = npacName
	}
	npac := hasNPAC
	b.portedFile = file
	switch b.opt.PortedFormat {
	case "":
	case "csv":
		npac = false
	case "npac":
		npac = true
	default:
		return fmt.Errorf("format: unknown ported format %q (want csv or npac)", b.opt.PortedFormat)
	}
	read := source.ReadPorted
	if npac {
		read = source.ReadPortedNPAC
	}
	return b.readFile(file, false, func(r io.Reader) error {
		return read(r, file, b.srcOpts(), func(p *source.Ported) error {
			ci, ok := b.w.Carrier(p.SPID)
			if !ok {
				return b.rowErr(file, p.Line, "spid", "unknown SPID %s (not in carriers.csv)", p.SPID)
			}
			return b.perNumber(file, p.Line, p.TN, func() error {
				return b.w.AddPorted(uint64(p.TN), p.Line, uint64(p.LRN), ci, p.ActivatedAt)
			})
		})
	})
}

func exists(fsys fs.FS, name string) bool {
	_, err := fs.Stat(fsys, name)
	return err == nil
}

func (b *builder) readMessaging() error {
	const file = "messaging.csv"
	return b.readFile(file, false, func(r io.Reader) error {
		return source.ReadMessaging(r, file, b.srcOpts(), func(m *source.Messaging) error {
			return b.perNumber(file, m.Line, m.TN, func() error {
				return b.w.AddMessaging(uint64(m.TN), m.Line, format.Messaging{
					Provider: m.Provider, Enabled: m.Enabled, Country: m.Country, CountryCode: m.CountryCode, ReferenceID: m.ReferenceID,
				})
			})
		})
	})
}

func (b *builder) readCNAM() error {
	const file = "cnam.csv"
	return b.readFile(file, false, func(r io.Reader) error {
		return source.ReadCNAM(r, file, b.srcOpts(), func(c *source.CNAM) error {
			return b.perNumber(file, c.Line, c.TN, func() error { return b.w.AddCNAM(uint64(c.TN), c.Line, c.Name) })
		})
	})
}

// readTrust reads trust.csv; internal/ingest/source has checked each row's spam
// type (one of format.SpamTypes) and dates.
func (b *builder) readTrust() error {
	const file = "trust.csv"
	return b.readFile(file, false, func(r io.Reader) error {
		return source.ReadTrust(r, file, b.srcOpts(), func(t *source.Trust) error {
			return b.perNumber(file, t.Line, t.TN, func() error {
				return b.w.AddTrust(uint64(t.TN), t.Line, format.Trust{SpamType: t.SpamType, Complaints: t.Complaints, FirstReported: t.FirstReported, LastReported: t.LastReported})
			})
		})
	})
}
