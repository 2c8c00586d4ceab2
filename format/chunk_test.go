package format

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestChunkWriterWritesWholeChunks writes uneven pieces through a
// chunkWriter, with Flushes between some: the file gets exactly the bytes,
// and every write it receives stays within one chunk and ends on a chunk
// boundary, unless a Flush cut it.
func TestChunkWriterWritesWholeChunks(t *testing.T) {
	var file bytes.Buffer
	type write struct{ off, n int }
	var writes []write
	cw := newChunkWriter(writerFunc(func(p []byte) (int, error) {
		writes = append(writes, write{file.Len(), len(p)})
		return file.Write(p)
	}))
	rng := rand.New(rand.NewPCG(1, 2))
	var want []byte
	var cuts []int // where a Flush left the data
	for i := range 40 {
		p := make([]byte, rng.IntN(3*chunkSize/4))
		for j := range p {
			p[j] = byte(rng.Uint32())
		}
		want = append(want, p...)
		n, err := cw.Write(p)
		require.NoError(t, err)
		require.Equal(t, len(p), n)
		if i%9 == 4 {
			require.NoError(t, cw.Flush())
			cuts = append(cuts, len(want))
		}
	}
	require.NoError(t, cw.Flush())
	cuts = append(cuts, len(want))
	require.True(t, bytes.Equal(want, file.Bytes()), "the file holds other bytes than were written")
	require.Greater(t, len(want), 8*chunkSize)
	for _, w := range writes {
		end := w.off + w.n
		assert.Equal(t, w.off/chunkSize, (end-1)/chunkSize, "write %d+%d crosses a chunk boundary", w.off, w.n)
		if end%chunkSize != 0 {
			assert.Contains(t, cuts, end, "write %d+%d ends inside a chunk without a Flush", w.off, w.n)
		}
	}
}

func TestChunkWriterErrors(t *testing.T) {
	failed := errors.New("disk full")
	cw := newChunkWriter(writerFunc(func(p []byte) (int, error) { return len(p) / 2, failed }))
	_, err := cw.Write(make([]byte, chunkSize+1))
	require.ErrorIs(t, err, failed, "a chunk's failed write is Write's error")
	require.Error(t, cw.Flush(), "the unwritten half is still buffered and fails again")

	short := newChunkWriter(writerFunc(func(p []byte) (int, error) { return len(p) - 1, nil }))
	_, err = short.Write([]byte("abc"))
	require.NoError(t, err, "buffered, not written yet")
	require.ErrorIs(t, short.Flush(), io.ErrShortWrite)
	assert.True(t, slices.Equal([]byte("c"), short.buf), "the byte not written stays buffered")
}
