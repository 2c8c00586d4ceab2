package build

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/lnpdb/lnpdb/internal/ingest/source"
)

// Kind is what a source file holds, as the build recognised it.
type Kind string

// Kinds of source files. The lnpdb CSVs are recognised by name; the NPAC
// bulk data download files by the shape of their first record (their names
// vary with the LSMS that delivers them).
const (
	KindCarriers    Kind = "carriers"
	KindRateCenters Kind = "rate centers"
	KindBlocks      Kind = "blocks"
	KindPorted      Kind = "ported"      // ported.csv
	KindPortedNPAC  Kind = "ported npac" // ported.npac: five fields read
	KindMessaging   Kind = "messaging"
	KindCNAM        Kind = "cnam"
	KindTrust       Kind = "trust"

	KindSV         Kind = "npac subscription versions"
	KindPoolBlocks Kind = "npac number pool blocks"
	KindSPID       Kind = "npac spid"
	KindLRN        Kind = "npac lrn"
	KindNPANXX     Kind = "npac npa-nxx"
	KindNPANXXX    Kind = "npac npa-nxx-x"

	KindNumbering Kind = "numbering report" // NANPA codes or PA thousands-blocks

	KindUnknown Kind = "not recognised"
)

// csvKinds are the lnpdb files, by name without a compression suffix.
var csvKinds = map[string]Kind{
	"carriers.csv": KindCarriers, "ratecenters.csv": KindRateCenters, "blocks.csv": KindBlocks,
	"ported.csv": KindPorted, "ported.npac": KindPortedNPAC, "messaging.csv": KindMessaging,
	"cnam.csv": KindCNAM, "trust.csv": KindTrust,
}

// FileReport says what the build did with one file of the source directory.
// Every line of a file read is accounted for: Lines = Header + Blank + Read
// + Skipped.
type FileReport struct {
	Name    string
	Kind    Kind
	Lines   int // lines read (0 for a file not read)
	Header  int // header lines
	Blank   int // blank lines
	Read    int // good records used or checked
	Skipped int // records skipped: Bad, and those of Reasons
	Bad     int // bad records skipped with SkipBadRows
	// Reasons are the rules that left records out, each with how many, in
	// the order first met.
	Reasons []SkipReason
	Note    string // why a file was not used, or what reading it did, if anything
}

// SkipReason is a rule that left records of a file out, and how many.
type SkipReason struct {
	Reason string
	Count  int
}

// sourceFile is a file of the source directory and what it holds.
type sourceFile struct {
	name string // as in the directory, with any compression suffix
	kind Kind
	size int64
}

// stripCompression returns name without a .gz or .zst suffix.
func stripCompression(name string) string {
	for _, ext := range []string{".gz", ".zst"} {
		if s, ok := strings.CutSuffix(name, ext); ok {
			return s
		}
	}
	return name
}

// Decompress wraps r, the content of a file called name, in the
// decompressor its name calls for: gzip for a .gz suffix, zstd for .zst,
// none otherwise. It is the one rule for compressed files, which lnpdb
// build and lnpdb apply share. close releases the decompressor; a stream
// that is damaged or cut short is an error from out's Read.
func Decompress(name string, r io.Reader) (out io.Reader, close func(), err error) {
	switch {
	case strings.HasSuffix(name, ".gz"):
		z, err := gzip.NewReader(r)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		return z, func() { z.Close() }, nil
	case strings.HasSuffix(name, ".zst"):
		z, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		return z, z.Close, nil
	}
	return r, func() {}, nil
}

// catalog lists the source directory and recognises each file. Two files
// of the same lnpdb name (carriers.csv and carriers.csv.gz) are an error;
// BDD files of one kind may be many (one a region).
func catalog(src fs.FS) ([]sourceFile, error) {
	entries, err := fs.ReadDir(src, ".")
	if err != nil {
		return nil, fmt.Errorf("format: source directory: %w", err)
	}
	var files []sourceFile
	byName := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		f := sourceFile{name: name}
		if info, err := e.Info(); err == nil {
			f.size = info.Size()
		}
		base := stripCompression(name)
		if k, ok := csvKinds[base]; ok {
			if other, dup := byName[base]; dup {
				return nil, fmt.Errorf("format: both %s and %s are present; keep one", other, name)
			}
			byName[base] = name
			f.kind = k
		} else if f.kind, err = sniff(src, name); err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	return files, nil
}

// sniff recognises a BDD file by its first record: the shapes of its
// fields (docs/DATA.md gives each file's fields).
func sniff(src fs.FS, name string) (Kind, error) {
	f, err := src.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	r, closeZ, err := Decompress(name, f)
	if err != nil {
		return "", fmt.Errorf("format: %w", err) // a .gz that is no gzip is damaged, not foreign
	}
	defer closeZ()
	buf := make([]byte, 1<<16)
	n, err := io.ReadFull(r, buf)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", fmt.Errorf("format: %s: %w", name, err)
	}
	buf = bytes.TrimPrefix(buf[:n], []byte("\ufeff"))
	for len(buf) > 0 {
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			i = len(buf)
		}
		rec := buf[:i]
		buf = buf[min(i+1, len(buf)):]
		if len(bytes.TrimSpace(rec)) == 0 {
			continue
		}
		if source.IsNumberingReport(rec) {
			return KindNumbering, nil
		}
		return sniffRecord(rec), nil
	}
	return KindUnknown, nil
}

func sniffRecord(rec []byte) Kind {
	if bytes.IndexByte(rec, '|') < 0 {
		return KindUnknown
	}
	f := bytes.Split(rec, []byte("|"))
	for i := range f {
		f[i] = bytes.TrimSpace(f[i])
	}
	digits := func(b []byte, n ...int) bool {
		for _, c := range b {
			if c < '0' || c > '9' {
				return false
			}
		}
		for _, m := range n {
			if len(b) == m {
				return true
			}
		}
		return false
	}
	dashed := func(b []byte, n int) bool { // NPA-NXX or NPA-NXX-X, with or without dashes
		return digits(bytes.ReplaceAll(b, []byte("-"), nil), n)
	}
	code := func(b []byte) bool {
		if len(b) != 4 {
			return false
		}
		for _, c := range b {
			if !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
				return false
			}
		}
		return true
	}
	stamp := func(b []byte) bool { return len(b) == 0 || digits(b, 14) }
	switch {
	case len(f) >= 5 && digits(f[0], 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19) &&
		digits(f[1], 10, 11) && digits(f[2], 10, 11) && code(f[3]) && stamp(f[4]):
		return KindSV
	case len(f) >= 5 && dashed(f[1], 7) && digits(f[2], 10, 11) && code(f[3]) && stamp(f[4]):
		return KindPoolBlocks
	case len(f) >= 3 && code(f[1]) && digits(f[2], 10, 11):
		return KindLRN
	case len(f) >= 3 && code(f[1]) && dashed(f[2], 6):
		return KindNPANXX
	case len(f) >= 3 && code(f[1]) && dashed(f[2], 7):
		return KindNPANXXX
	case len(f) >= 2 && len(f) <= 3 && code(f[0]) && len(f[1]) > 0 && !digits(f[1], len(f[1])):
		return KindSPID
	}
	return KindUnknown
}
