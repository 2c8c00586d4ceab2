package format_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// TestOneWriter: a table has one writer. A second Open for updates is
// refused by name while the first is open, whatever it is doing; the
// readers' Opens are not; Close hands the lock on.
func TestOneWriter(t *testing.T) {
	path := testdb.Build(t, mini)
	w, err := format.Open(path)
	require.NoError(t, err)
	require.NoError(t, w.Apply(batchFor(0)))

	_, err = format.Open(path)
	require.ErrorIs(t, err, format.ErrLocked)
	assert.Contains(t, err.Error(), format.LockPath(path), "the error names the lock file")
	_, err = format.RecoverJournal(path)
	require.ErrorIs(t, err, format.ErrLocked, "journal recover is a writer too")

	ro, err := format.Open(path, format.ReadOnly())
	require.NoError(t, err)
	assert.False(t, ported(t, ro, batchFor(0)[0].TN).OK, "ReadOnly reads the table file alone")
	require.NoError(t, ro.Close())

	sh, err := format.Open(path, format.Shared())
	require.NoError(t, err)
	assert.True(t, ported(t, sh, batchFor(0)[0].TN).OK, "Shared replays the writer's journal")
	require.ErrorIs(t, sh.Apply(batchFor(1)), format.ErrReadOnly)
	require.NoError(t, sh.Close())

	require.NoError(t, w.Close())
	w2, err := format.Open(path)
	require.NoError(t, err, "the lock is released by Close")
	assert.True(t, ported(t, w2, batchFor(0)[0].TN).OK)
	require.NoError(t, w2.Close())
}

// TestSharedWritesNothing: a Shared Open leaves a torn journal tail and a
// killed build's temporary file, which a writer cuts and removes, as they
// are, and takes no lock.
func TestSharedWritesNothing(t *testing.T) {
	path := testdb.Build(t, mini)
	w, err := format.Open(path)
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

	sh, err := format.Open(path, format.Shared())
	require.NoError(t, err)
	defer sh.Close()
	assert.True(t, ported(t, sh, batchFor(0)[0].TN).OK)
	after, err := os.ReadFile(jp)
	require.NoError(t, err)
	assert.Equal(t, before, after, "a Shared Open leaves the journal's tail to its writer")
	assert.FileExists(t, stale, "and temporary files")

	w, err = format.Open(path)
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

	_, err = format.Open(path)
	require.ErrorIs(t, err, format.ErrLocked, "refused while the child holds the table")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	db, err := format.Open(path)
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
	db, err := format.Open(path)
	require.NoError(t, err)
	require.NoError(t, db.Apply(batchFor(0)))
	os.Stdout.WriteString("applied\n")
	select {}
}
