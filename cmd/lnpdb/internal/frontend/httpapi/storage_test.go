package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/format/build"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

func TestStorageFailure(t *testing.T) {
	// As the format package reports a failed journal write: the OS error
	// wrapped in a *PathError, wrapped again with %w.
	wrap := func(errno syscall.Errno) error {
		return fmt.Errorf("format: journal: %w", &fs.PathError{Op: "write", Path: "/data/us.lnpdb.journal", Err: errno})
	}
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{wrap(syscall.ENOSPC), http.StatusInsufficientStorage, CodeInsufficientStorage},
		{wrap(syscall.EDQUOT), http.StatusInsufficientStorage, CodeInsufficientStorage},
		{syscall.ENOSPC, http.StatusInsufficientStorage, CodeInsufficientStorage},
		{wrap(syscall.EIO), http.StatusServiceUnavailable, CodeStorageUnavailable},
		{wrap(syscall.EROFS), http.StatusServiceUnavailable, CodeStorageUnavailable},
		{wrap(syscall.EACCES), http.StatusInternalServerError, CodeInternalError},
		{fmt.Errorf("compacting: %w", format.ErrCorrupt), http.StatusInternalServerError, CodeInternalError},
		{errors.New("something else"), http.StatusInternalServerError, CodeInternalError},
	} {
		t.Run(tc.err.Error(), func(t *testing.T) {
			e := storageFailure(tc.err)
			assert.Equal(t, tc.status, e.status)
			assert.Equal(t, tc.code, e.body.Code)
			assert.NotEmpty(t, e.body.Error)
			assert.NotEmpty(t, e.body.Details)
			assert.NotContains(t, e.body.Details, "/data", "internals stay in the log")
		})
	}
}

// TestAdminFullDisk fills the file system under a served table and posts
// an update feed: the answer is 507 with the JSON error body, and once
// space is freed the same feed is applied.
func TestAdminFullDisk(t *testing.T) {
	fullDiskSkipped.Store(true) // until a disk is full
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs to fill needs root; run the tests as root to cover a full disk end to end")
	}
	if _, err := exec.LookPath("mount"); err != nil {
		t.Skip("mount not found (Debian package mount)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (%v: %s); a full disk is covered by TestStorageFailure only", err, out)
	}
	t.Cleanup(func() {
		// A closed table's mapping may outlive Close until a collection;
		// a lazy unmount detaches the file system now all the same.
		runtime.GC()
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	path := filepath.Join(dir, "us.lnpdb")
	_, err := build.Build(context.Background(), lnpdb.Sample(), path, build.Options{BuiltAt: testdb.BuiltAt})
	require.NoError(t, err, "the sample table fits in 4 MiB")
	db, err := format.OpenWriter(path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	s := newAdminServerOn(t, db)
	before := s.lrnOf(t, "12025550123")

	fill := filepath.Join(dir, "fill")
	fillUp(t, fill)
	fullDiskSkipped.Store(false)
	const feed = "action,tn,lrn,spid,activated_at\nU,2025550123,7327370999,0987,2026-11-20T10:00:00Z\n"
	m := checkErrorBody(t, s.feed(t, "text/csv", feed), http.StatusInsufficientStorage, CodeInsufficientStorage)
	assert.Equal(t, errDiskFull.body.Details, m["details"])
	assert.Equal(t, before, s.lrnOf(t, "12025550123"), "the refused update is not visible")

	require.NoError(t, os.Remove(fill))
	r := s.feed(t, "text/csv", feed)
	require.Equal(t, http.StatusOK, r.StatusCode, "%s", r.body)
	assert.Equal(t, "17327370999", s.lrnOf(t, "12025550123"))
}

// fillUp writes path until its file system has no byte left.
func fillUp(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	for _, size := range []int{64 << 10, 4 << 10, 1} {
		buf := make([]byte, size)
		for {
			if _, err := f.Write(buf); err != nil {
				require.ErrorIs(t, err, syscall.ENOSPC)
				break
			}
		}
	}
}
