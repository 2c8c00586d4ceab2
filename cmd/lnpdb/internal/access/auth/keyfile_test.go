package auth

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeKeys writes a keys file holding the hashes of keys.
func writeKeys(t *testing.T, path string, keys ...string) {
	t.Helper()
	var b []byte
	for _, k := range keys {
		b = append(b, HashKey(k).Line()+"\n"...)
	}
	// Replaced by rename, as an operator's tools do, so that a concurrent
	// reader sees the old file or the new one.
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, b, 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

func TestKeyFileReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys")
	writeKeys(t, path, "lnp_alice", "lnp_bob")
	f, err := LoadKeyFile(path)
	require.NoError(t, err)
	assert.Equal(t, 2, f.Len())
	assert.Equal(t, path, f.Path())
	_, ok := f.Authenticate("lnp_alice")
	assert.True(t, ok)

	// Revoke alice, add carol.
	writeKeys(t, path, "lnp_bob", "lnp_carol")
	added, removed, err := f.Reload()
	require.NoError(t, err)
	assert.Equal(t, 1, added)
	assert.Equal(t, 1, removed)
	for key, want := range map[string]bool{"lnp_alice": false, "lnp_bob": true, "lnp_carol": true} {
		_, ok := f.Authenticate(key)
		assert.Equal(t, want, ok, key)
		assert.Equal(t, want, f.Has(HashKey(key).Hash), "Has %s", key)
	}

	// A file that does not parse or is gone leaves the keys as they were.
	for name, setup := range map[string]func(){
		"bad line":   func() { require.NoError(t, os.WriteFile(path, []byte("sha256:nothex\n"), 0o600)) },
		"unreadable": func() { require.NoError(t, os.Remove(path)); require.NoError(t, os.Mkdir(path, 0o700)) },
		"missing":    func() { require.NoError(t, os.RemoveAll(path)) },
	} {
		t.Run(name, func(t *testing.T) {
			setup()
			_, _, err := f.Reload()
			require.Error(t, err)
			assert.Contains(t, err.Error(), "keys")
			_, ok := f.Authenticate("lnp_carol")
			assert.True(t, ok, "the previous keys stay in force")
			_, ok = f.Authenticate("lnp_alice")
			assert.False(t, ok, "and a revoked key stays revoked")
			assert.Equal(t, 2, f.Len())
		})
	}

	// A file read whole that holds no key (empty, or comments only)
	// revokes every key it held.
	for name, content := range map[string]string{"empty": "", "comments only": "# every key revoked\n\n"} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, os.RemoveAll(path))
			writeKeys(t, path, "lnp_bob", "lnp_carol")
			_, _, err := f.Reload()
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
			added, removed, err := f.Reload()
			require.NoError(t, err)
			assert.Equal(t, [2]int{0, 2}, [2]int{added, removed})
			assert.Equal(t, 0, f.Len())
			for _, key := range []string{"lnp_bob", "lnp_carol"} {
				_, ok := f.Authenticate(key)
				assert.False(t, ok, key)
				assert.False(t, f.Has(HashKey(key).Hash), key)
			}
		})
	}
}

func TestKeyFileExtraKeys(t *testing.T) {
	dev := HashKey("lnp_dev")
	f, err := LoadKeyFile("", dev)
	require.NoError(t, err, "no file, a development key only")
	_, _, err = f.Reload()
	require.NoError(t, err)
	_, ok := f.Authenticate("lnp_dev")
	assert.True(t, ok)

	path := filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(path, nil, 0o600))
	_, err = LoadKeyFile(path)
	require.ErrorIs(t, err, ErrNoKeys)
	f, err = LoadKeyFile(path, dev)
	require.NoError(t, err, "an empty file beside a development key, as at start")
	writeKeys(t, path, "lnp_alice")
	added, removed, err := f.Reload()
	require.NoError(t, err)
	assert.Equal(t, [2]int{1, 0}, [2]int{added, removed})
	_, ok = f.Authenticate("lnp_dev")
	assert.True(t, ok, "the development key survives reloads")
}

// TestKeyFileReloadRace authenticates from many goroutines while the file
// is reloaded over and over: with -race this checks the swap; every
// answer comes from one whole set.
func TestKeyFileReloadRace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys")
	writeKeys(t, path, "lnp_always", "lnp_a")
	f, err := LoadKeyFile(path)
	require.NoError(t, err)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, ok := f.Authenticate("lnp_always"); !ok {
					t.Error("a key in every version of the file was refused")
					return
				}
				// Either may hold at any moment; the race detector
				// checks the swap under them.
				f.Authenticate("lnp_a")
				f.Authenticate("lnp_b")
			}
		})
	}
	for i := range 200 {
		if i%2 == 0 {
			writeKeys(t, path, "lnp_always", "lnp_b")
		} else {
			writeKeys(t, path, "lnp_always", "lnp_a")
		}
		_, _, err := f.Reload()
		require.NoError(t, err)
	}
	close(stop)
	wg.Wait()
	_, ok := f.Authenticate("lnp_a")
	assert.True(t, ok, "the last file read is in force")
	_, ok = f.Authenticate("lnp_b")
	assert.False(t, ok)
}
