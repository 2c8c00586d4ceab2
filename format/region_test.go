package format

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/exp/mmap"
)

// writeRandomFile writes size pseudo-random bytes to a new file in dir.
func writeRandomFile(t testing.TB, dir string, size int) (string, []byte) {
	t.Helper()
	want := make([]byte, size)
	_, _ = rand.NewChaCha8([32]byte{byte(size), byte(size >> 8), byte(size >> 16)}).Read(want)
	path := filepath.Join(dir, fmt.Sprintf("region-%d", size))
	require.NoError(t, os.WriteFile(path, want, 0o644))
	return path, want
}

func TestRegionBytesEqualFile(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 4095, 4096, 2<<20 + 3} {
		path, want := writeRandomFile(t, dir, size)
		for _, huge := range []bool{false, true} {
			t.Run(fmt.Sprintf("size=%d/huge=%v", size, huge), func(t *testing.T) {
				r, err := openRegion(path, huge)
				require.NoError(t, err)
				defer r.Close()
				require.Equal(t, size, r.Len())
				require.Len(t, r.Bytes(), size)
				require.True(t, string(want) == string(r.Bytes()), "region bytes differ from the file")
				switch {
				case size == 0:
					assert.Equal(t, placementEmpty, r.Placement())
				case runtime.GOOS != "linux" || !huge:
					assert.Contains(t, []string{placementFile, placementHeap}, r.Placement())
				default:
					assert.Contains(t, []string{placementHugeCopy, placementHugeTmpfs}, r.Placement())
				}
			})
		}
	}
}

func TestRegionOpenMissingFile(t *testing.T) {
	for _, huge := range []bool{false, true} {
		_, err := openRegion(filepath.Join(t.TempDir(), "absent"), huge)
		require.ErrorIs(t, err, os.ErrNotExist)
	}
}

// TestRegionLikeMmapReaderAt holds region to the behaviour of the
// mmap.ReaderAt it replaces, on the same file, call by call.
func TestRegionLikeMmapReaderAt(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 4096 + 17} {
		path, _ := writeRandomFile(t, dir, size)
		for _, huge := range []bool{false, true} {
			t.Run(fmt.Sprintf("size=%d/huge=%v", size, huge), func(t *testing.T) {
				m, err := mmap.Open(path)
				require.NoError(t, err)
				r, err := openRegion(path, huge)
				require.NoError(t, err)
				require.Equal(t, m.Len(), r.Len())

				type read struct {
					n   int
					off int64
				}
				reads := []read{
					{10, -1}, {10, 0}, {0, 0}, {10, 7}, {10, int64(size) - 5},
					{1, int64(size)}, {0, int64(size)}, {1, int64(size) + 1},
					{1, 1 << 40}, {size + 100, 0},
				}
				check := func(phase string) {
					for _, c := range reads {
						pm, pr := make([]byte, c.n), make([]byte, c.n)
						nm, errm := m.ReadAt(pm, c.off)
						nr, errr := r.ReadAt(pr, c.off)
						what := fmt.Sprintf("%s: ReadAt(len %d, off %d)", phase, c.n, c.off)
						assert.Equal(t, nm, nr, what)
						assert.Equal(t, errm == nil, errr == nil, "%s: mmap says %v, region %v", what, errm, errr)
						assert.Equal(t, errm == io.EOF, errr == io.EOF, "%s: mmap says %v, region %v", what, errm, errr)
						assert.Equal(t, pm, pr, what)
					}
					for _, i := range []int{-1, 0, size / 2, size - 1, size} {
						if i >= 0 && i < m.Len() {
							assert.Equal(t, m.At(i), r.At(i), "%s: At(%d)", phase, i)
						} else {
							assert.Panics(t, func() { m.At(i) }, "%s: mmap At(%d)", phase, i)
							assert.Panics(t, func() { r.At(i) }, "%s: region At(%d)", phase, i)
						}
					}
					assert.Equal(t, m.Len(), r.Len(), phase)
				}
				check("open")
				require.NoError(t, m.Close())
				require.NoError(t, r.Close())
				assert.Nil(t, r.Bytes())
				check("closed")
				require.NoError(t, m.Close())
				require.NoError(t, r.Close(), "second Close")
				check("closed twice")
			})
		}
	}
}
