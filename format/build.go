package format

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb/format/internal/atomicfile"
	"github.com/lnpdb/lnpdb/format/internal/vfs"
	"github.com/lnpdb/lnpdb/internal/nanp"
	"github.com/lnpdb/lnpdb/internal/progress"
	"github.com/lnpdb/lnpdb/internal/source"
)

// BuildOptions configure Build.
type BuildOptions struct {
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

// BuildReport says what a build read and wrote.
type BuildReport struct {
	Rows          map[string]int // good rows read, by file name
	Skipped       int            // bad rows skipped (SkipBadRows)
	SkippedSample []string       // the first few skipped rows' errors
	Spilled       int            // per-number rows that went through spill files
	Counts        Counts
	FileSize      int64
	Duration      time.Duration
}

// BytesPerPorted is the file size divided by the number of ported numbers.
func (r *BuildReport) BytesPerPorted() float64 {
	if r.Counts.Ported == 0 {
		return 0
	}
	return float64(r.FileSize) / float64(r.Counts.Ported)
}

const maxSkippedSample = 10

// Build reads the source directory src (the files of DATA.md) and writes the
// table to out. It writes a temporary file beside out, verifies it, and
// renames it into place only then: a failed build leaves no partial output
// and an existing out untouched.
func Build(ctx context.Context, src fs.FS, out string, opt BuildOptions) (*BuildReport, error) {
	start := time.Now()
	b := &builder{ctx: ctx, src: src, opt: opt, report: &BuildReport{Rows: map[string]int{}}}
	b.spill.limit = opt.MaxMemory
	switch {
	case opt.MaxMemory == 0:
		b.spill.limit = DefaultMaxMemory
	case opt.MaxMemory < 0:
		b.spill.limit = 0
	}
	b.spill.dir = opt.TempDir
	if b.spill.dir == "" {
		b.spill.dir = filepath.Dir(out)
	}
	defer b.spill.close()
	if err := b.read(); err != nil {
		return nil, err
	}
	builtAt := opt.BuiltAt
	if builtAt.IsZero() {
		builtAt = time.Now()
	}
	// Leftovers of a build of out that was killed: no one else writes
	// them (their lock is gone), and each can be as large as the table.
	atomicfile.RemoveStale(vfs.Default, out)
	counts, err := b.writeTable(vfs.Default, out, builtAt, nil)
	if err != nil {
		return nil, err
	}
	b.report.Counts = counts
	b.report.Spilled = b.spill.spilled
	st, err := os.Stat(out)
	if err != nil {
		return nil, err
	}
	size := st.Size()
	b.report.FileSize = size
	b.report.Duration = time.Since(start)
	return b.report, nil
}

type builder struct {
	ctx    context.Context
	src    fs.FS
	opt    BuildOptions
	report *BuildReport

	carriers   []Carrier
	carrierIdx map[string]uint32
	rcs        []RateCenter
	rcIdx      map[string]uint32

	lrns   []uint64          // LRNs in first-seen order
	lrnIdx map[uint64]uint32 // LRN → index into lrns

	codes     map[uint32]*codeRows // npa*1000+nxx
	codeState *[1000 * 1000]uint8  // 0 vacant, 1 code row, 2 thousands rows only
	thouRow   []uint64             // bitmap over npa*10000+nxx*10+x: a thousands row exists

	portedFile string // ported.csv or ported.npac, for error messages

	pairs       []lrnPair // LRN by first-seen index
	pairIdx     map[lrnPair]uint32
	msgTuples   []msgTuple
	msgTupleIdx map[msgTuple]uint32

	msgStrs   []string
	msgStrIdx map[string]uint32
	names     []string
	nameIdx   map[string]uint32

	ported    partitioned[portedRow]
	messaging partitioned[messagingRow]
	cnam      partitioned[cnamRow]
	trust     partitioned[trustRow]

	maxComplaints uint32 // over every trust row, to size the field
	spill         budget // when rows go to spill files (spill.go)
}

type codeRows struct {
	code      blockRow
	hasCode   bool
	thousands [10]blockRow
	split     bool
}

// A ported record stores one index into a dictionary of (LRN, SPID) pairs,
// not one index for each: an LRN belongs to a switch, so the pairs are few
// and the index is about half as wide. Likewise a messaging record stores
// one index into a dictionary of whole messaging tuples.
type lrnPair struct{ lrn, carrier uint32 }
type portedRow struct{ pair, act uint32 }
type msgTuple struct {
	provider, country, code, ref uint32
	enabled                      bool
}
type messagingRow struct{ tuple uint32 }
type cnamRow struct{ name uint32 }
type trustRow struct {
	spam        uint8
	complaints  uint32
	first, last uint32
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

func (b *builder) read() error {
	b.carrierIdx = map[string]uint32{}
	b.rcIdx = map[string]uint32{}
	b.lrnIdx = map[uint64]uint32{}
	b.codes = map[uint32]*codeRows{}
	b.codeState = new([1000 * 1000]uint8)
	b.thouRow = make([]uint64, 1000*10000/64)
	b.msgStrIdx = map[string]uint32{}
	b.pairIdx = map[lrnPair]uint32{}
	b.msgTupleIdx = map[msgTuple]uint32{}
	b.nameIdx = map[string]uint32{}
	b.msgStr("") // index 0 is the empty string

	steps := []func() error{b.readCarriers, b.readRateCenters, b.readBlocks}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return b.readPerNumber()
}

// readPerNumber reads the per-number files on two goroutines: ported on
// this one, messaging, CNAM and trust on another. Once blocks are read they
// share nothing they change (ported alone has LRNs and pairs, messaging its
// strings and tuples, CNAM its names), so the table is the same; each side
// has its own report and a share of the memory budget in proportion to its
// files' sizes, and the reports merge in file order, so that the errors and
// skipped rows reported are those of reading the files one after another.
// Only ported draws a progress bar, as the two would share one line.
func (b *builder) readPerNumber() error {
	parent := b.ctx
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	side := &builder{
		ctx: ctx, src: b.src, opt: b.opt, report: &BuildReport{Rows: map[string]int{}},
		carrierIdx: b.carrierIdx, codeState: b.codeState, thouRow: b.thouRow,
		msgStrs: b.msgStrs, msgStrIdx: b.msgStrIdx, msgTupleIdx: b.msgTupleIdx, nameIdx: b.nameIdx,
	}
	side.opt.Progress = nil
	b.ctx = ctx
	defer func() { b.ctx = parent }()

	var portedSize, sideSize int64
	for _, name := range []string{"ported.csv", "ported.npac"} {
		portedSize += fileSize(b.src, name)
	}
	for _, name := range []string{"messaging.csv", "cnam.csv", "trust.csv"} {
		sideSize += fileSize(b.src, name)
	}
	side.spill = budget{limit: b.spill.limit, dir: b.spill.dir}
	if b.spill.limit > 0 {
		share := float64(portedSize) / float64(max(1, portedSize+sideSize))
		b.spill.limit = max(1, int64(float64(b.spill.limit)*share))
		side.spill.limit = max(1, side.spill.limit-b.spill.limit)
	}
	b.ported.codec, b.ported.held = portedCodec, &b.spill.held
	side.messaging.codec, side.messaging.held = messagingCodec, &side.spill.held
	side.cnam.codec, side.cnam.held = cnamCodec, &side.spill.held
	side.trust.codec, side.trust.held = trustCodec, &side.spill.held
	b.spill.all = []spiller{&b.ported}
	side.spill.all = []spiller{&side.messaging, &side.cnam, &side.trust}

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

	b.msgStrs, b.msgTuples, b.names = side.msgStrs, side.msgTuples, side.names
	b.messaging, b.cnam, b.trust = side.messaging, side.cnam, side.trust
	b.maxComplaints = side.maxComplaints
	b.spill.all = []spiller{&b.ported, &b.messaging, &b.cnam, &b.trust}
	b.spill.spilled += side.spill.spilled
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
			if _, dup := b.carrierIdx[c.OCN]; dup {
				return b.rowErr(file, c.Line, "ocn", "OCN %s listed twice", c.OCN)
			}
			b.carrierIdx[c.OCN] = uint32(len(b.carriers))
			b.carriers = append(b.carriers, Carrier{OCN: c.OCN, Name: c.Name, Type: c.Type, MessagingProvider: c.MessagingProvider, MessagingEnabled: c.MessagingEnabled})
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
			b.rcIdx[k] = uint32(len(b.rcs))
			b.rcs = append(b.rcs, RateCenter{State: rc.State, Name: rc.Name, LATA: rc.LATA, City: rc.City, County: rc.County, ZIP: rc.ZIP, TimeZone: rc.TimeZone, UTCOffset: off})
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

func (b *builder) lrn(n nanp.Number) uint32 {
	v := uint64(n)
	if i, ok := b.lrnIdx[v]; ok {
		return i
	}
	i := uint32(len(b.lrns))
	b.lrnIdx[v] = i
	b.lrns = append(b.lrns, v)
	return i
}

func (b *builder) readBlocks() error {
	const file = "blocks.csv"
	return b.readFile(file, true, func(r io.Reader) error {
		return source.ReadBlocks(r, file, b.srcOpts(), func(blk *source.Block) error {
			ci, ok := b.carrierIdx[blk.OCN]
			if !ok {
				return b.rowErr(file, blk.Line, "ocn", "unknown OCN %s (not in carriers.csv)", blk.OCN)
			}
			ri, ok := b.rcIdx[rcKey(blk.State, blk.RateCenter)]
			if !ok {
				return b.rowErr(file, blk.Line, "rate_center", "unknown rate center %s %s (not in ratecenters.csv)", blk.State, blk.RateCenter)
			}
			key := uint32(blk.NPA*1000 + blk.NXX)
			cr := b.codes[key]
			if cr == nil {
				cr = &codeRows{}
				b.codes[key] = cr
			}
			row := blockRow{carrier: ci + 1, rc: ri, activated: uint32(blk.ActivatedAt)}
			if blk.LRN != 0 {
				row.lrn = b.lrn(blk.LRN) + 1
			}
			if blk.X < 0 {
				if cr.hasCode {
					return b.rowErr(file, blk.Line, "nxx", "code %03d-%03d listed twice", blk.NPA, blk.NXX)
				}
				cr.code, cr.hasCode = row, true
				b.codeState[key] = 1
			} else {
				if cr.thousands[blk.X].carrier != 0 {
					return b.rowErr(file, blk.Line, "x", "thousands-block %03d-%03d-%d listed twice", blk.NPA, blk.NXX, blk.X)
				}
				cr.thousands[blk.X], cr.split = row, true
				if b.codeState[key] == 0 {
					b.codeState[key] = 2
				}
				bit := key*10 + uint32(blk.X)
				b.thouRow[bit/64] |= 1 << (bit % 64)
			}
			b.report.Rows[file]++
			return nil
		})
	})
}

// assigned reports whether a number lies in an assigned code or
// thousands-block: per-number data for a vacant number could never be
// answered and points at a bad source.
func (b *builder) assigned(tn nanp.Number) bool {
	code := uint32(uint64(tn) / 10000)
	switch b.codeState[code] {
	case 1:
		return true
	case 2:
		bit := code*10 + uint32(uint64(tn)/1000%10)
		return b.thouRow[bit/64]&(1<<(bit%64)) != 0
	}
	return false
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
			ci, ok := b.carrierIdx[p.SPID]
			if !ok {
				return b.rowErr(file, p.Line, "spid", "unknown SPID %s (not in carriers.csv)", p.SPID)
			}
			if !b.assigned(p.TN) {
				return b.rowErr(file, p.Line, "tn", "%s is in no assigned code or thousands-block (blocks.csv)", p.TN)
			}
			b.ported.add(p.TN, p.Line, portedRow{pair: b.pair(b.lrn(p.LRN), ci), act: uint32(p.ActivatedAt)})
			b.report.Rows[file]++
			return b.spill.check()
		})
	})
}

func (b *builder) pair(lrn, carrier uint32) uint32 {
	p := lrnPair{lrn, carrier}
	if i, ok := b.pairIdx[p]; ok {
		return i
	}
	i := uint32(len(b.pairs))
	b.pairIdx[p] = i
	b.pairs = append(b.pairs, p)
	return i
}

func (b *builder) msgTuple(t msgTuple) uint32 {
	if i, ok := b.msgTupleIdx[t]; ok {
		return i
	}
	i := uint32(len(b.msgTuples))
	b.msgTupleIdx[t] = i
	b.msgTuples = append(b.msgTuples, t)
	return i
}

func exists(fsys fs.FS, name string) bool {
	_, err := fs.Stat(fsys, name)
	return err == nil
}

func (b *builder) msgStr(s string) uint32 {
	if i, ok := b.msgStrIdx[s]; ok {
		return i
	}
	i := uint32(len(b.msgStrs))
	b.msgStrIdx[s] = i
	b.msgStrs = append(b.msgStrs, s)
	return i
}

func (b *builder) readMessaging() error {
	const file = "messaging.csv"
	return b.readFile(file, false, func(r io.Reader) error {
		return source.ReadMessaging(r, file, b.srcOpts(), func(m *source.Messaging) error {
			if !b.assigned(m.TN) {
				return b.rowErr(file, m.Line, "tn", "%s is in no assigned code or thousands-block (blocks.csv)", m.TN)
			}
			b.messaging.add(m.TN, m.Line, messagingRow{tuple: b.msgTuple(msgTuple{
				provider: b.msgStr(m.Provider), enabled: m.Enabled,
				country: b.msgStr(m.Country), code: b.msgStr(m.CountryCode), ref: b.msgStr(m.ReferenceID),
			})})
			b.report.Rows[file]++
			return b.spill.check()
		})
	})
}

func (b *builder) readCNAM() error {
	const file = "cnam.csv"
	return b.readFile(file, false, func(r io.Reader) error {
		return source.ReadCNAM(r, file, b.srcOpts(), func(c *source.CNAM) error {
			if !b.assigned(c.TN) {
				return b.rowErr(file, c.Line, "tn", "%s is in no assigned code or thousands-block (blocks.csv)", c.TN)
			}
			i, ok := b.nameIdx[c.Name]
			if !ok {
				i = uint32(len(b.names))
				b.nameIdx[c.Name] = i
				b.names = append(b.names, c.Name)
			}
			b.cnam.add(c.TN, c.Line, cnamRow{name: i})
			b.report.Rows[file]++
			return b.spill.check()
		})
	})
}

func (b *builder) readTrust() error {
	const file = "trust.csv"
	return b.readFile(file, false, func(r io.Reader) error {
		return source.ReadTrust(r, file, b.srcOpts(), func(t *source.Trust) error {
			if !b.assigned(t.TN) {
				return b.rowErr(file, t.Line, "tn", "%s is in no assigned code or thousands-block (blocks.csv)", t.TN)
			}
			st := slices.Index(spamTypes[:], t.SpamType)
			if st < 0 {
				return b.rowErr(file, t.Line, "spam_type", "unknown spam type %q", t.SpamType)
			}
			if t.FirstReported != 0 && t.LastReported != 0 && t.FirstReported > t.LastReported {
				return b.rowErr(file, t.Line, "last_reported", "last_reported is before first_reported")
			}
			b.maxComplaints = max(b.maxComplaints, t.Complaints)
			b.trust.add(t.TN, t.Line, trustRow{spam: uint8(st), complaints: t.Complaints, first: uint32(t.FirstReported), last: uint32(t.LastReported)})
			b.report.Rows[file]++
			return b.spill.check()
		})
	})
}

// sortedLRNs returns the LRN dictionary in ascending order and the map from
// first-seen index to sorted index.
func (b *builder) sortedLRNs() ([]uint64, []uint32) {
	order := make([]uint32, len(b.lrns))
	for i := range order {
		order[i] = uint32(i)
	}
	sort.Slice(order, func(i, j int) bool { return b.lrns[order[i]] < b.lrns[order[j]] })
	sorted := make([]uint64, len(b.lrns))
	remap := make([]uint32, len(b.lrns))
	for newIdx, old := range order {
		sorted[newIdx] = b.lrns[old]
		remap[old] = uint32(newIdx)
	}
	return sorted, remap
}
