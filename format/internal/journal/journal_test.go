package journal

import (
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/lnpdb/lnpdb/internal/core/vfs"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// batches makes n batches of size updates each, sequences from 1.
func batches(n, size int) []Batch {
	var out []Batch
	seq := uint64(0)
	for i := range n {
		var b Batch
		for j := range size {
			seq++
			b.Updates = append(b.Updates, Update{Seq: seq, Action: "AUD"[j%3], SPID: [4]byte{'1', '0', '0', byte('0' + i%10)},
				TN: 2025550000 + seq, LRN: 3125550000 + uint64(j), ActivatedAt: int64(1700000000 + j)})
		}
		b.Commit = Commit{Time: int64(i + 1), Pending: uint64(seq)}
		if i%2 == 0 {
			b.Commit.Key = sha256.Sum256([]byte{byte(i)})
		}
		out = append(out, b)
	}
	return out
}

func encode(bs []Batch) []byte {
	buf := Header()
	for i := range bs {
		buf = AppendBatch(buf, bs[i].Updates, &bs[i].Commit)
	}
	return buf
}

func TestRoundTrip(t *testing.T) {
	bs := batches(4, 3)
	bs = append(bs, Batch{Commit: Commit{Seq: 12, Key: sha256.Sum256([]byte("k"))}}) // a key carried forward
	b := encode(bs)
	r, err := Read(b)
	require.NoError(t, err)
	require.Len(t, r.Batches, 5)
	assert.Equal(t, int64(len(b)), r.Good)
	assert.Zero(t, r.Torn)
	assert.Equal(t, 12, r.Updates())
	for i := range bs {
		assert.Equal(t, bs[i].Updates, r.Batches[i].Updates)
		assert.Equal(t, bs[i].Commit, r.Batches[i].Commit)
	}
}

// Cut anywhere, or zeros where a crash left sectors unwritten: the
// committed batches before the cut replay whole, the incomplete one is
// dropped and counted, never an error.
func TestTornAtEveryLength(t *testing.T) {
	bs := batches(3, 4)
	b := encode(bs)
	ends := []int{HeaderSize}
	off := HeaderSize
	for _, x := range bs {
		off += len(x.Updates)*UpdateSize + CommitSize
		ends = append(ends, off)
	}
	for n := 0; n <= len(b); n++ {
		r, err := Read(b[:n])
		require.NoError(t, err, "cut at %d", n)
		committed := 0
		for i, e := range ends[1:] {
			if n >= e {
				committed = i + 1
			}
		}
		require.Len(t, r.Batches, committed, "cut at %d", n)
		assert.Equal(t, int64(n), r.Good+r.Torn)
	}
	// A power loss: the file grew, but the last batch's sectors from its
	// second on never reached the disk.
	big := batches(2, 40)
	b = encode(big[:1])
	committed := len(b)
	b = encode(big)
	s := (committed/512 + 2) * 512
	clear(b[s:])
	r, err := Read(b)
	require.NoError(t, err)
	require.Len(t, r.Batches, 1)
}

// One damaged byte anywhere: an error naming an offset, or — only when the
// byte lies in the uncommitted tail — the committed batches unchanged.
// Never a replay that silently differs from what was committed.
func TestDamageAtEveryOffset(t *testing.T) {
	bs := batches(3, 2)
	committed := encode(bs)
	tail := AppendUpdate(nil, &Update{Seq: 7, Action: 'A', TN: 2025559999, LRN: 2025550000})
	b := append(append([]byte(nil), committed...), tail...)
	for off := range b {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			d := append([]byte(nil), b...)
			d[off] ^= mask
			r, err := Read(d)
			if off >= len(committed) {
				// A whole uncommitted record that is wrong is no torn
				// append either; refusing it is fine, replaying
				// anything but the committed batches is not.
				if err == nil {
					require.Len(t, r.Batches, 3)
				}
				continue
			}
			require.Error(t, err, "damage at %d (mask %02x) must not replay", off, mask)
			var ce *CorruptError
			if errors.As(err, &ce) {
				assert.LessOrEqual(t, ce.Offset, int64(off)+CommitSize, "offset named near the damage")
			}
		}
	}
}

func TestVersionRefusedByName(t *testing.T) {
	b := Header()
	copy(b, "LNPDBJ1\n")
	_, err := Read(b)
	require.ErrorIs(t, err, ErrVersion)
	assert.Contains(t, err.Error(), "LNPDBJ1")
}

func TestSalvageKeepsVerifiableBatches(t *testing.T) {
	bs := batches(5, 10)
	b := encode(bs)
	// Damage the second batch's third update.
	off := HeaderSize + 10*UpdateSize + CommitSize + 2*UpdateSize + 30
	b[off] ^= 0x40
	_, err := Read(b)
	require.Error(t, err)
	r, lost, err := Salvage(b)
	require.NoError(t, err)
	require.Len(t, r.Batches, 4)
	require.Len(t, lost, 1)
	assert.Equal(t, 10, lost[0].Updates)
	for i, want := range []int{0, 2, 3, 4} {
		assert.Equal(t, bs[want].Updates, r.Batches[i].Updates)
	}
}

func openWriter(t *testing.T, fs vfs.FS) (*Writer, string) {
	path := filepath.Join(t.TempDir(), "t.lnpdb.journal")
	w, err := OpenWriter(fs, path, 0)
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	return w, path
}

// A failed append — short write, failed fsync — is cut off before Append
// returns: the file ends at the last commit, and the next append works.
func TestAppendFailureIsUndone(t *testing.T) {
	for _, op := range []vfs.Op{vfs.OpWrite, vfs.OpSync} {
		t.Run(op.String(), func(t *testing.T) {
			var failing bool
			fs := vfs.NewFaulty(vfs.Default, func(o vfs.Op, _ string) error {
				if failing && o == op {
					failing = false // once: the cut that follows succeeds
					return syscall.ENOSPC
				}
				return nil
			})
			w, path := openWriter(t, fs)
			bs := batches(3, 50)
			require.NoError(t, w.Append(bs[0].Updates, &bs[0].Commit))
			good := w.Size()
			failing = true
			err := w.Append(bs[1].Updates, &bs[1].Commit)
			require.ErrorIs(t, err, syscall.ENOSPC)
			require.NotErrorIs(t, err, ErrBroken)
			st, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, good, st.Size(), "the failed batch is cut off")
			require.NoError(t, w.Append(bs[2].Updates, &bs[2].Commit))
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			r, err := Read(b)
			require.NoError(t, err)
			require.Len(t, r.Batches, 2)
			assert.Equal(t, bs[2].Updates, r.Batches[1].Updates)
		})
	}
}

// When the cut itself fails, the journal is broken: no later append is
// accepted, and replay still sees only committed batches.
func TestAppendUndoFailureBreaks(t *testing.T) {
	var failing bool
	fs := vfs.NewFaulty(vfs.Default, func(o vfs.Op, _ string) error {
		if failing && (o == vfs.OpSync || o == vfs.OpTruncate) {
			return syscall.EIO
		}
		return nil
	})
	w, path := openWriter(t, fs)
	bs := batches(2, 5)
	require.NoError(t, w.Append(bs[0].Updates, &bs[0].Commit))
	failing = true
	err := w.Append(bs[1].Updates, &bs[1].Commit)
	require.ErrorIs(t, err, ErrBroken)
	failing = false
	require.ErrorIs(t, w.Append(bs[1].Updates, &bs[1].Commit), ErrBroken)
	require.Error(t, w.Broken())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	r, err := Read(b)
	require.NoError(t, err, "a complete but unsynced batch may be on disk; it replays only if whole")
	assert.LessOrEqual(t, len(r.Batches), 2)
}

func TestRewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.lnpdb.journal")
	bs := batches(2, 3)
	size, err := Rewrite(vfs.Default, path, bs)
	require.NoError(t, err)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, int64(len(b)), size)
	r, err := Read(b)
	require.NoError(t, err)
	require.Len(t, r.Batches, 2)
	w, err := OpenWriter(vfs.Default, path, r.Good)
	require.NoError(t, err)
	defer w.Close()
	more := batches(3, 3)[2]
	require.NoError(t, w.Append(more.Updates, &more.Commit))
}

// FuzzRead: any bytes read without a panic; a journal that reads is one
// that re-encodes to the same bytes up to its last commit.
func FuzzRead(f *testing.F) {
	f.Add(encode(batches(2, 2)))
	f.Add(encode(batches(1, 0)))
	f.Add(Header())
	f.Add([]byte("LNPDBJ1\n\x00\x00\x00\x00\x00\x00\x00\x00"))
	torn := encode(batches(2, 3))
	f.Add(torn[:len(torn)-5])
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Read(b)
		if _, _, serr := Salvage(b); serr != nil && err == nil {
			t.Fatalf("Salvage fails (%v) where Read succeeds", serr)
		}
		if err != nil {
			return
		}
		if len(b) < HeaderSize {
			return
		}
		again := encode(r.Batches)
		if string(again) != string(b[:r.Good]) {
			t.Fatalf("re-encoding the replay differs from the journal's committed bytes")
		}
	})
}
