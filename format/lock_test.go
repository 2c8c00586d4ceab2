package format_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/vfs"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// TestOneWriter: a table has one writer. A second Open for updates is
// refused by name while the first is open, whatever it is doing; the
// readers' Opens are not; Close hands the lock on.
func TestOneWriter(t *testing.T) {
	path := testdb.Build(t, mini)
	w, err := format.OpenWriter(path)
	require.NoError(t, err)
	require.NoError(t, w.Apply(batchFor(0)))

	_, err = format.OpenWriter(path)
	require.ErrorIs(t, err, format.ErrLocked)
	assert.Contains(t, err.Error(), format.LockPath(path), "the error names the lock file")
	_, err = format.RecoverJournal(path)
	require.ErrorIs(t, err, format.ErrLocked, "journal recover is a writer too")

	ro, err := format.Open(path, format.IgnoreJournal())
	require.NoError(t, err)
	assert.False(t, ported(t, ro, batchFor(0)[0].TN).OK, "IgnoreJournal reads the table file alone")
	require.NoError(t, ro.Close())

	sh, err := format.Open(path)
	require.NoError(t, err)
	assert.True(t, ported(t, sh, batchFor(0)[0].TN).OK, "Open replays the writer's journal")
	require.ErrorIs(t, sh.Apply(batchFor(1)), format.ErrReadOnly)
	require.NoError(t, sh.Close())

	require.NoError(t, w.Close())
	w2, err := format.OpenWriter(path)
	require.NoError(t, err, "the lock is released by Close")
	assert.True(t, ported(t, w2, batchFor(0)[0].TN).OK)
	require.NoError(t, w2.Close())
}

// TestSharedWritesNothing: a Shared Open leaves a torn journal tail and a
// killed build's temporary file, which a writer cuts and removes, as they
// are, and takes no lock.
func TestSharedWritesNothing(t *testing.T) {
	path := testdb.Build(t, mini)
	w, err := format.OpenWriter(path)
	require.NoError(t, err)
	require.NoError(t, w.Apply(batchFor(0)))
	require.NoError(t, w.Close())
	jp := format.JournalPath(path)
	f, err := os.OpenFile(jp, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte("a batch being appended"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	before, err := os.ReadFile(jp)
	require.NoError(t, err)
	// What a build killed before its rename leaves, which a writer's Open
	// removes.
	stale := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-1")
	require.NoError(t, os.WriteFile(stale, []byte("partial"), 0o644))

	sh, err := format.Open(path)
	require.NoError(t, err)
	defer sh.Close()
	assert.True(t, ported(t, sh, batchFor(0)[0].TN).OK)
	after, err := os.ReadFile(jp)
	require.NoError(t, err)
	assert.Equal(t, before, after, "a Shared Open leaves the journal's tail to its writer")
	assert.FileExists(t, stale, "and temporary files")

	w, err = format.OpenWriter(path)
	require.NoError(t, err, "a Shared Open takes no lock")
	require.NoError(t, w.Close())
	assert.NoFileExists(t, stale, "the writer's Open removes the temporary file")
}

// TestWriterKilledReleasesLock: a writer killed with SIGKILL, holding the
// table open with an acknowledged update, leaves nothing that stops the
// next writer, which finds the update.
func TestWriterKilledReleasesLock(t *testing.T) {
	if os.Getenv("LNPDB_LOCK_CHILD") != "" {
		t.Skip("in the child")
	}
	path := testdb.Build(t, mini)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockChild$")
	cmd.Env = append(os.Environ(), "LNPDB_LOCK_CHILD="+path)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	acked := false
	for sc.Scan() {
		if sc.Text() == "applied" {
			acked = true
			break
		}
	}
	require.True(t, acked, "the child applied its batch")

	_, err = format.OpenWriter(path)
	require.ErrorIs(t, err, format.ErrLocked, "refused while the child holds the table")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	db, err := format.OpenWriter(path)
	require.NoError(t, err, "the kernel released the killed writer's lock")
	defer db.Close()
	assert.True(t, ported(t, db, batchFor(0)[0].TN).OK, "the killed writer's acknowledged update is there")
}

// TestLockChild is the child of TestWriterKilledReleasesLock: it opens
// the table for updates, applies a batch, says so and waits to be killed.
func TestLockChild(t *testing.T) {
	path := os.Getenv("LNPDB_LOCK_CHILD")
	if path == "" {
		t.Skip("only run as the lock test's child")
	}
	db, err := format.OpenWriter(path)
	require.NoError(t, err)
	require.NoError(t, db.Apply(batchFor(0)))
	os.Stdout.WriteString("applied\n")
	select {}
}

// swapOnOpen is the operating system's file system, which runs swap
// once, just before the file at name is first opened: for the journal,
// the moment a compaction in another process can land for a reader that
// has mapped the table and not yet read its journal; for the lock file,
// the moment the writer that held it can finish a compaction and close.
type swapOnOpen struct {
	vfs.FS
	name string
	swap func()
}

func (s *swapOnOpen) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	if name == s.name && s.swap != nil {
		swap := s.swap
		s.swap = nil
		swap()
	}
	return s.FS.OpenFile(name, flag, perm)
}

// compactedBeside returns the table at path (whose journal holds batch 0)
// compacted, as a table and journal in another directory, and the swap
// that moves them over path's, as a compaction in another process does:
// the new file renamed in, then the journal trimmed to what it lacks.
func compactedBeside(t *testing.T, path string) func() {
	dir := t.TempDir()
	compacted := filepath.Join(dir, filepath.Base(path))
	for _, p := range [][2]string{{path, compacted}, {format.JournalPath(path), format.JournalPath(compacted)}} {
		b, err := os.ReadFile(p[0])
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p[1], b, 0o644))
	}
	c, err := format.OpenWriter(compacted)
	require.NoError(t, err)
	require.NoError(t, c.Compact(context.Background()))
	require.Zero(t, c.PendingUpdates())
	require.NoError(t, c.Close())
	return func() {
		require.NoError(t, os.Rename(compacted, path))
		require.NoError(t, os.Rename(format.JournalPath(compacted), format.JournalPath(path)))
	}
}

// assertBatch0 checks that db answers batch 0's updates.
func assertBatch0(t *testing.T, db *format.DB) {
	for _, u := range batchFor(0) {
		assert.Equal(t, "1"+strconv.FormatUint(u.LRN, 10), ported(t, db, u.TN).LRN, "%d, folded into the new file", u.TN)
	}
}

// TestOpenDuringCompaction: a compaction by another process landing while
// a table is opened does not lose the updates it folded into the new
// file. A Shared open that mapped the old file and then reads the
// trimmed journal opens the new file; a writer takes the lock before it
// maps the file, so the writer that held the lock until then has renamed
// its file in first.
func TestOpenDuringCompaction(t *testing.T) {
	for _, c := range []struct {
		name, at string
		opts     []format.Option
	}{
		{"shared", ".journal", nil},
		{"writer", ".lock", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := testdb.Build(t, mini)
			w, err := format.OpenWriter(path)
			require.NoError(t, err)
			require.NoError(t, w.Apply(batchFor(0)))
			require.NoError(t, w.Close())
			fs := &swapOnOpen{FS: vfs.Default, name: path + c.at, swap: compactedBeside(t, path)}
			open := format.OpenWriter
			if c.name == "shared" {
				open = format.Open
			}
			db, err := open(path, append(c.opts, format.WithFS(fs))...)
			require.NoError(t, err)
			defer db.Close()
			require.Nil(t, fs.swap, "the compaction landed during the open")
			assertBatch0(t, db)
		})
	}
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestOpenCreatesNoFile: Open reads; it leaves no file behind, whatever
// it is given — a table, a table with a journal, a file that is no table,
// a file that is not there.
func TestOpenCreatesNoFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.lnpdb")
	b, err := os.ReadFile(testdb.Build(t, mini))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(good, b, 0o644))
	junk := filepath.Join(dir, "junk.lnpdb")
	require.NoError(t, os.WriteFile(junk, []byte("junk\n"), 0o644))
	before := dirNames(t, dir)

	db, err := format.Open(good)
	require.NoError(t, err)
	_, err = db.Get(batchFor(0)[0].TN, format.FieldPorted)
	require.NoError(t, err)
	require.NoError(t, db.Reload())
	require.ErrorIs(t, db.Apply(batchFor(0)), format.ErrReadOnly)
	require.ErrorIs(t, db.Compact(context.Background()), format.ErrReadOnly)
	require.NoError(t, db.Close())
	_, err = format.Open(junk)
	require.Error(t, err)
	_, err = format.Open(junk, format.Verify(), format.IgnoreJournal())
	require.Error(t, err)
	_, err = format.Open(filepath.Join(dir, "absent.lnpdb"))
	require.ErrorIs(t, err, os.ErrNotExist)

	assert.Equal(t, before, dirNames(t, dir), "Open created or removed a file")
}

// TestOpenReloadFollowsWriter: a reader beside a running writer sees the
// writer's updates as of its Open, and the later ones after Reload.
func TestOpenReloadFollowsWriter(t *testing.T) {
	path := testdb.Build(t, mini)
	w, err := format.OpenWriter(path)
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, w.Apply(batchFor(0)))

	r, err := format.Open(path)
	require.NoError(t, err, "a reader opens beside the writer")
	defer r.Close()
	assert.True(t, ported(t, r, batchFor(0)[0].TN).OK, "the journal so far")
	require.NoError(t, w.Apply(batchFor(1)))
	assert.False(t, ported(t, r, batchFor(1)[0].TN).OK, "not yet reloaded")
	require.NoError(t, r.Reload())
	assert.True(t, ported(t, r, batchFor(1)[0].TN).OK, "Reload reads the journal again")

	require.NoError(t, w.Compact(context.Background()))
	require.NoError(t, w.Apply(batchFor(2)))
	require.NoError(t, r.Reload())
	assert.True(t, ported(t, r, batchFor(1)[1].TN).OK, "the compacted file")
	assert.False(t, ported(t, r, batchFor(0)[0].TN).OK, "batch 1's delete, compacted")
	assert.True(t, ported(t, r, batchFor(2)[0].TN).OK, "and the journal after it")
}

// TestOpenOptions: the options that read only are refused by OpenWriter,
// and the deprecated names do what they did.
func TestOpenOptions(t *testing.T) {
	path := testdb.Build(t, mini)
	for _, o := range []format.Option{format.IgnoreJournal(), format.ReadOnly(), format.Shared()} {
		_, err := format.OpenWriter(path, o)
		require.ErrorIs(t, err, format.ErrReadOnly)
	}
	assert.NoFileExists(t, format.LockPath(path), "refused before the lock")
	w, err := format.OpenWriter(path, format.WithVerify())
	require.NoError(t, err)
	require.NoError(t, w.Apply(batchFor(0)))
	require.NoError(t, w.Close())
	ro, err := format.Open(path, format.ReadOnly())
	require.NoError(t, err)
	assert.False(t, ported(t, ro, batchFor(0)[0].TN).OK, "ReadOnly is IgnoreJournal")
	require.NoError(t, ro.Close())
	sh, err := format.Open(path, format.Shared(), format.WithHugePages())
	require.NoError(t, err)
	assert.True(t, ported(t, sh, batchFor(0)[0].TN).OK, "Shared is Open's default")
	require.NoError(t, sh.Close())
}

// TestOpenBytes: a table in memory answers as its file does, takes no
// update, has nothing to reload, and a damaged one is refused with Verify.
func TestOpenBytes(t *testing.T) {
	path := testdb.Build(t, mini)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	file, err := format.Open(path)
	require.NoError(t, err)
	defer file.Close()
	mem, err := format.OpenBytes(b, format.Verify())
	require.NoError(t, err)
	for _, u := range batchFor(0) {
		assert.Equal(t, ported(t, file, u.TN), ported(t, mem, u.TN))
	}
	assert.Equal(t, file.Info().Counts, mem.Info().Counts)
	require.ErrorIs(t, mem.Apply(batchFor(0)), format.ErrReadOnly)
	require.ErrorIs(t, mem.Compact(context.Background()), format.ErrReadOnly)
	require.ErrorIs(t, mem.Reload(), format.ErrInMemory)
	require.NoError(t, mem.Close())
	_, err = mem.Get(batchFor(0)[0].TN, format.FieldPorted)
	require.ErrorIs(t, err, format.ErrClosed)

	bad := bytes.Clone(b)
	bad[len(bad)-100] ^= 0x10
	_, err = format.OpenBytes(bad, format.Verify())
	require.Error(t, err, "a damaged byte, found by Verify")
	_, err = format.OpenBytes([]byte("junk\n"))
	require.ErrorIs(t, err, format.ErrCorrupt)
}
