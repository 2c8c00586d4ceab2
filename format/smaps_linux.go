package format

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unsafe"
)

// vma is one mapping of /proc/self/smaps.
type vma struct {
	start, end uintptr
	kB         map[string]int64 // "Rss", "AnonHugePages", ... in kB
	flags      []string         // VmFlags
}

// parseSmaps reads the smaps format: a header line "start-end perms offset
// dev inode [path]" per mapping, followed by "Key: value [kB]" lines, of
// which VmFlags lists two-letter flags.
func parseSmaps(r io.Reader) ([]vma, error) {
	var out []vma
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		key, isKey := strings.CutSuffix(fields[0], ":")
		if !isKey {
			lo, hi, ok := strings.Cut(fields[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if !ok || err1 != nil || err2 != nil || end < start || len(fields) < 5 {
				return nil, fmt.Errorf("smaps line %d: %q is not a mapping header", line, sc.Text())
			}
			out = append(out, vma{start: uintptr(start), end: uintptr(end), kB: map[string]int64{}})
			continue
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("smaps line %d: %s before any mapping", line, key)
		}
		v := &out[len(out)-1]
		if key == "VmFlags" {
			v.flags = fields[1:]
			continue
		}
		if len(fields) == 3 && fields[2] == "kB" {
			// At most 2^43 kB, so that a sum of bytes stays in an int64.
			n, err := strconv.ParseUint(fields[1], 10, 43)
			if err != nil {
				return nil, fmt.Errorf("smaps line %d: %s: %w", line, key, err)
			}
			v.kB[key] = int64(n)
		}
	}
	return out, sc.Err()
}

// covering returns the mappings that overlap b.
func covering(all []vma, b []byte) []vma {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	hi := lo + uintptr(len(b))
	var out []vma
	for _, v := range all {
		if v.start < hi && lo < v.end {
			out = append(out, v)
		}
	}
	return out
}

// hugeMapped sums the bytes that huge pages map (AnonHugePages for an
// anonymous copy, ShmemPmdMapped for a tmpfs file, FilePmdMapped for a file
// whose page cache holds large folios) in the mappings that overlap b, at
// most len(b).
func hugeMapped(all []vma, b []byte) int64 {
	var n int64
	for _, v := range covering(all, b) {
		n = min(n+(v.kB["AnonHugePages"]+v.kB["ShmemPmdMapped"]+v.kB["FilePmdMapped"])<<10, int64(len(b)))
	}
	return n
}

// hugePageBytes reads /proc/self/smaps for hugeMapped of the region's bytes;
// -1 when the region is not a mapping or smaps cannot be read.
func (r *region) hugePageBytes() int64 {
	if r.mem == nil || len(r.b) == 0 {
		return -1
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return -1
	}
	defer f.Close()
	all, err := parseSmaps(f)
	if err != nil {
		return -1
	}
	return hugeMapped(all, r.b)
}
