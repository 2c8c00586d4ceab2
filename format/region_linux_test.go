package format

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readSmaps(t testing.TB) []vma {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if os.IsNotExist(err) {
		t.Skip("no /proc/self/smaps (kernel without CONFIG_PROC_PAGE_MONITOR)")
	}
	require.NoError(t, err)
	defer f.Close()
	v, err := parseSmaps(f)
	require.NoError(t, err)
	require.NotEmpty(t, v)
	return v
}

// hugeAdvisedBytes is the size of all mappings advised MADV_HUGEPAGE.
func hugeAdvisedBytes(t *testing.T) uintptr {
	var n uintptr
	for _, v := range readSmaps(t) {
		if slices.Contains(v.flags, "hg") {
			n += v.end - v.start
		}
	}
	return n
}

func isTmpfs(t *testing.T, dir string) bool {
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs(dir, &st))
	return st.Type == tmpfsMagic
}

func thpSetting() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(b))
}

const smapsSample = `7f3a00000000-7f3a00600000 r--p 00000000 00:00 0 
Size:               6144 kB
AnonHugePages:      4096 kB
VmFlags: rd mr mw me ac hg
7f3a00600000-7f3a00601000 rw-s 00000000 00:05 123    /dev/shm/x (deleted)
Size:                  4 kB
THPeligible:    0
VmFlags: rd wr sh mr mw me ms
`

func TestParseSmaps(t *testing.T) {
	if strconv.IntSize < 64 {
		t.Skip("the sample's addresses are a 64-bit process's")
	}
	v, err := parseSmaps(strings.NewReader(smapsSample))
	require.NoError(t, err)
	require.Len(t, v, 2)
	assert.Equal(t, uint64(0x7f3a00000000), uint64(v[0].start))
	assert.Equal(t, uint64(0x7f3a00600000), uint64(v[0].end))
	assert.Equal(t, int64(4096), v[0].kB["AnonHugePages"])
	assert.Contains(t, v[0].flags, "hg")
	assert.NotContains(t, v[1].flags, "hg")
	assert.Equal(t, int64(4), v[1].kB["Size"])

	for _, bad := range []string{"Size: 4 kB\n", "zz-10 r--p 0 0:0 0\n", "10-20 r--p\n",
		"10-20 r--p 0 0:0 0\nRss: -4 kB\n", "10-20 r--p 0 0:0 0\nRss: 8796093022208 kB\n"} {
		_, err := parseSmaps(strings.NewReader(bad))
		assert.Error(t, err, "%q", bad)
	}
}

// TestRegionHugeCopyAdvised checks that the copy is aligned to 2 MiB, made
// read-only and advised MADV_HUGEPAGE. Whether the kernel then backs it with
// huge pages depends on its THP settings and free memory, so that is logged,
// not asserted.
func TestRegionHugeCopyAdvised(t *testing.T) {
	dir := t.TempDir()
	if isTmpfs(t, dir) {
		t.Skipf("%s is a tmpfs, where the huge-page option maps instead of copying", dir)
	}
	path, want := writeRandomFile(t, dir, 6<<20+3)
	r, err := openRegion(path, true)
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, placementHugeCopy, r.Placement())
	require.True(t, string(want) == string(r.Bytes()))

	b := r.Bytes()
	assert.Zero(t, uintptr(unsafe.Pointer(unsafe.SliceData(b)))%hugePageSize, "copy not aligned to 2 MiB")
	vs := covering(readSmaps(t), b)
	require.NotEmpty(t, vs)
	var anonHuge int64
	for _, v := range vs {
		assert.Contains(t, v.flags, "hg", "mapping %x-%x not advised MADV_HUGEPAGE", v.start, v.end)
		assert.NotContains(t, v.flags, "wr", "mapping %x-%x still writable", v.start, v.end)
		anonHuge += v.kB["AnonHugePages"]
	}
	t.Logf("THP %s: AnonHugePages %d kB in the mappings holding the copy's %d kB", thpSetting(), anonHuge, len(b)>>10)
	assert.Equal(t, min(anonHuge<<10, int64(len(b))), r.hugePageBytes(), "what the region reports of itself")
	r.Close()
	assert.Equal(t, int64(-1), r.hugePageBytes(), "a closed region")
}

// TestHugeMapped counts the huge pages of every kind in the mappings that
// overlap a buffer, and only those, up to the buffer's size.
func TestHugeMapped(t *testing.T) {
	b := make([]byte, 8<<20)
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	hi := lo + uintptr(len(b))
	all := []vma{
		{start: lo - 4096, end: lo, kB: map[string]int64{"AnonHugePages": 2048}}, // ends where b starts
		{start: lo - 4096, end: lo + 4096, kB: map[string]int64{"FilePmdMapped": 2048, "Rss": 4096}},
		{start: lo + 4096, end: hi - 4096, kB: map[string]int64{"ShmemPmdMapped": 2048, "AnonHugePages": 2048}},
		{start: hi, end: hi + 4096, kB: map[string]int64{"FilePmdMapped": 2048}}, // starts where b ends
	}
	assert.Equal(t, int64(6<<20), hugeMapped(all, b))
	assert.Equal(t, int64(4<<20), hugeMapped(all, b[:4<<20]), "at most the buffer's size")
	assert.Zero(t, hugeMapped(all[:1], b))
}

func FuzzParseSmaps(f *testing.F) {
	f.Add([]byte(smapsSample))
	f.Add([]byte("10-20 r--p 0 0:0 0\nFilePmdMapped: 8796093022207 kB\n"))
	b := make([]byte, 1<<20)
	lo := uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	f.Add([]byte(fmt.Sprintf("%x-%x r--s 0 0:0 0\nFilePmdMapped: 2048 kB\n", lo, lo+1<<21)))
	f.Fuzz(func(t *testing.T, in []byte) {
		all, err := parseSmaps(strings.NewReader(string(in)))
		if err != nil {
			return
		}
		for _, v := range all {
			if v.end < v.start {
				t.Fatalf("mapping %x-%x ends before it starts", v.start, v.end)
			}
		}
		if n := hugeMapped(all, b); n < 0 || n > int64(len(b)) {
			t.Fatalf("hugeMapped %d of %d bytes", n, len(b))
		}
	})
}

func TestRegionHugeTmpfs(t *testing.T) {
	const shm = "/dev/shm"
	if _, err := os.Stat(shm); err != nil || !isTmpfs(t, shm) {
		t.Skipf("%s is not a tmpfs here", shm)
	}
	dir, err := os.MkdirTemp(shm, "region-test-")
	if err != nil {
		t.Skipf("cannot write to %s: %v", shm, err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path, want := writeRandomFile(t, dir, 2<<20+3)

	plain, err := openRegion(path, false)
	require.NoError(t, err)
	defer plain.Close()
	assert.Equal(t, placementFile, plain.Placement())

	r, err := openRegion(path, true)
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, placementHugeTmpfs, r.Placement())
	require.True(t, string(want) == string(r.Bytes()))
	vs := covering(readSmaps(t), r.Bytes())
	require.NotEmpty(t, vs)
	var pmd int64
	for _, v := range vs {
		assert.Contains(t, v.flags, "hg", "mapping %x-%x not advised MADV_HUGEPAGE", v.start, v.end)
		// A shared mapping of a read-only file is "may share" (ms), not "sh".
		assert.Contains(t, v.flags, "ms", "mapping %x-%x is not the shared file mapping", v.start, v.end)
		pmd += v.kB["ShmemPmdMapped"] + v.kB["FilePmdMapped"]
	}
	shmem, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/shmem_enabled")
	t.Logf("tmpfs mapping: %d kB mapped by huge pages (depends on the mount's huge= option; shmem_enabled %s)",
		pmd, strings.TrimSpace(string(shmem)))
}

// TestRegionHugeCopyReadError truncates the file between the stat that sized
// the copy and the read that fills it: the copy must fail with an error and
// leave nothing mapped.
func TestRegionHugeCopyReadError(t *testing.T) {
	dir := t.TempDir()
	path, _ := writeRandomFile(t, dir, 3<<20+5)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(t, err)

	before := hugeAdvisedBytes(t)
	ok, err := copyHuge(f, path, int(fi.Size()))
	require.NoError(t, err)
	assert.Greater(t, hugeAdvisedBytes(t), before, "a live copy must show as advised memory")
	require.NoError(t, ok.Close())
	require.Equal(t, before, hugeAdvisedBytes(t), "Close left advised memory mapped")

	require.NoError(t, os.Truncate(path, 1<<20))
	r, err := copyHuge(f, path, int(fi.Size()))
	require.Error(t, err)
	assert.Nil(t, r)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Contains(t, err.Error(), path)
	assert.Equal(t, before, hugeAdvisedBytes(t), "a failed copy left its mapping behind")
}

var regionSink uint64

var regionMiB = flag.Int("bench.region-mib", 256, "size of BenchmarkRegionRandomRead's file in MiB (a power of two)")

// BenchmarkRegionRandomRead reads 8 bytes at a random offset of a 256 MiB
// (-bench.region-mib) file, each offset depending on the bytes read before it, so that every
// read waits for the previous one: the latency a lookup pays per random
// access, with the file mapped (plain), mapped and kept on 4 KiB pages
// (plain-4k), and copied onto huge pages (huge); and, mapped, the same bytes
// written as the table writer writes, in pieces of 100,003 bytes, through a
// 1 MiB bufio.Writer as it used to (written-bufio) and through its
// chunkWriter (written-chunked).
// cpu-ns/op is the CPU time of the reading thread per read, which unlike
// ns/op leaves out the time the thread waits for a CPU on a loaded machine;
// hugemapped-MiB is how much of the region the kernel maps with huge pages:
// the copy's AnonHugePages, and for the plain mapping FilePmdMapped, which
// is not 0 where the file system keeps the page cache in large folios (ext4
// and xfs on recent kernels) and so maps even the plain file with huge pages.
func BenchmarkRegionRandomRead(b *testing.B) {
	size := *regionMiB << 20
	if size <= 0 || size&(size-1) != 0 {
		b.Fatalf("-bench.region-mib %d: want a power of two", *regionMiB)
	}
	dir := b.TempDir()
	path, data := writeRandomFile(b, dir, size)
	bufioPath := writeInPieces(b, filepath.Join(dir, "bufio"), data, 100_003, -1, newTableBufio)
	chunkedPath := writeInPieces(b, filepath.Join(dir, "chunked"), data, 100_003, -1, newTableChunked)
	for _, mode := range []struct {
		name        string
		path        string
		huge, small bool
	}{{"plain", path, false, false}, {"plain-4k", path, false, true}, {"huge", path, true, false},
		{"written-bufio", bufioPath, false, false}, {"written-chunked", chunkedPath, false, false}} {
		t0 := time.Now()
		r, err := openRegion(mode.path, mode.huge)
		require.NoError(b, err)
		if mode.small {
			// The reference on 4 KiB pages, whatever the page cache holds.
			require.NoError(b, syscall.Madvise(r.mem, syscall.MADV_NOHUGEPAGE))
		}
		b.Logf("%s: %s opened in %v", mode.name, r.Placement(), time.Since(t0))
		buf := r.Bytes()
		var sum byte
		for i := 0; i < len(buf); i += 4096 {
			sum += buf[i] // fault every page in before timing
		}
		var hugeKB int64
		for _, v := range covering(readSmaps(b), buf) {
			hugeKB += v.kB["AnonHugePages"] + v.kB["FilePmdMapped"] + v.kB["ShmemPmdMapped"]
		}
		b.Run(mode.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPUTime(b)
			mask := uint64(size/8 - 1)
			x := uint64(sum)
			for i := 0; b.Loop(); i++ {
				// The index mixes in i so that the walk never enters a
				// short cycle that would fit in the caches.
				j := (x ^ uint64(i)*0x9e3779b97f4a7c15) & mask
				x = binary.LittleEndian.Uint64(buf[j*8:])
			}
			regionSink = x
			b.ReportMetric(float64(threadCPUTime(b)-cpu0)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(hugeKB)/1024, "hugemapped-MiB")
		})
		require.NoError(b, r.Close())
	}
}

// TestRegionUnreachableIsUnmapped drops a huge-page copy without Close: the
// garbage collector must unmap it, as it does an unclosed mmap.ReaderAt.
func TestRegionUnreachableIsUnmapped(t *testing.T) {
	path, _ := writeRandomFile(t, t.TempDir(), 2<<20+1)
	before := hugeAdvisedBytes(t)
	func() {
		r, err := openRegion(path, true)
		require.NoError(t, err)
		require.Equal(t, 2<<20+1, r.Len())
	}()
	require.Greater(t, hugeAdvisedBytes(t), before)
	deadline := time.Now().Add(5 * time.Second)
	for hugeAdvisedBytes(t) != before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	require.Equal(t, before, hugeAdvisedBytes(t), "an unreachable region stayed mapped")
}

// threadCPUTime is the CPU time the calling thread has used, in ns.
func threadCPUTime(b *testing.B) int64 {
	const clockThreadCPUTimeID = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		b.Fatalf("clock_gettime(CLOCK_THREAD_CPUTIME_ID): %v", errno)
	}
	return ts.Nano()
}

// pmdMappedKB maps path as Open does, touches every page, and returns how
// much of the mapping the kernel maps with huge-page entries.
func pmdMappedKB(t *testing.T, path string) int64 {
	r, err := openRegion(path, false)
	require.NoError(t, err)
	defer r.Close()
	var sink byte
	for i := 0; i < len(r.Bytes()); i += 4096 {
		sink ^= r.Bytes()[i]
	}
	runtime.KeepAlive(sink)
	var kB int64
	for _, v := range covering(readSmaps(t), r.Bytes()) {
		kB += v.kB["FilePmdMapped"]
	}
	return kB
}

// TestFreshTableOnHugePages: a table file written through a chunkWriter
// is cached, and so mapped, on huge pages wherever the page cache can
// hold a file written in aligned 2 MiB pieces that way; one written
// through a 1 MiB bufio.Writer, as tables were, is not.
func TestFreshTableOnHugePages(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 3*hugePageSize+12345)
	_, _ = rand.NewChaCha8([32]byte{7}).Read(data)
	// The control's writes are whole aligned 2 MiB pieces: a bufio.Writer
	// of that size hands on each full buffer as it is.
	control := writeInPieces(t, filepath.Join(dir, "control"), data, hugePageSize, -1,
		func(w io.Writer) flushWriter { return bufio.NewWriterSize(w, hugePageSize) })
	if pmdMappedKB(t, control) == 0 {
		t.Skipf("%s: the page cache does not hold a file written in aligned 2 MiB pieces in huge pages here "+
			"(Linux 6.18 on ext4 does; THP %s)", dir, thpSetting())
	}
	// A Flush in the middle of the second chunk cuts it.
	chunked := writeInPieces(t, filepath.Join(dir, "chunked"), data, 100_003, hugePageSize+hugePageSize/2, newTableChunked)
	assert.GreaterOrEqual(t, pmdMappedKB(t, chunked), int64(2*hugePageSize>>10), "the first and third chunks are whole")
	buffered := writeInPieces(t, filepath.Join(dir, "buffered"), data, 100_003, -1, newTableBufio)
	t.Logf("written through a 1 MiB bufio.Writer: %d kB on huge pages", pmdMappedKB(t, buffered))
}

// TestOpenAdvisesHugePages: Open's file mapping is advised MADV_HUGEPAGE,
// so that readahead fills the page cache in huge pages.
func TestOpenAdvisesHugePages(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("kernel without transparent huge pages")
	}
	path, _ := writeRandomFile(t, t.TempDir(), 2<<20+3)
	r, err := openRegion(path, false)
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, placementFile, r.Placement())
	vs := covering(readSmaps(t), r.Bytes())
	require.NotEmpty(t, vs)
	for _, v := range vs {
		assert.Contains(t, v.flags, "hg", "mapping %x-%x not advised MADV_HUGEPAGE", v.start, v.end)
	}
}

// flushWriter is a buffered writer: a bufio.Writer or a chunkWriter.
type flushWriter interface {
	io.Writer
	Flush() error
}

// newTableBufio is the writer tables were written through before
// chunkWriter; newTableChunked the one they are written through now.
func newTableBufio(w io.Writer) flushWriter   { return bufio.NewWriterSize(w, 1<<20) }
func newTableChunked(w io.Writer) flushWriter { return newChunkWriter(w) }

// writeInPieces writes data to a new file at path in pieces of piece bytes
// through the writer wrap puts around it, as the table writer hands its
// sections on, and returns path. With cut ≥ 0 it also flushes after the
// piece that reaches byte cut, as the table writer does between sections.
func writeInPieces(tb testing.TB, path string, data []byte, piece, cut int, wrap func(io.Writer) flushWriter) string {
	tb.Helper()
	f, err := os.Create(path)
	require.NoError(tb, err)
	w := wrap(f)
	for off := 0; off < len(data); off += piece {
		_, err := w.Write(data[off:min(off+piece, len(data))])
		require.NoError(tb, err)
		if cut >= 0 && off < cut && off+piece >= cut {
			require.NoError(tb, w.Flush())
		}
	}
	require.NoError(tb, w.Flush())
	require.NoError(tb, f.Close())
	return path
}
