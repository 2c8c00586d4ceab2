package auth

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// KeyFile is a KeyStore read from a keys file (see [ParseKeys]) that can be
// read again while requests are served, so that an operator revokes or adds
// a key without a restart. Reload swaps the whole set at once: a request
// authenticates against the old set or the new one, never a mix.
type KeyFile struct {
	path  string
	extra []Key // kept across reloads, e.g. a development key

	mu  sync.Mutex // serializes Reload
	set atomic.Pointer[KeySet]
}

// LoadKeyFile reads the keys file at path and returns it as a KeyStore that
// also accepts extra. An empty path means no file: only extra. It is an
// error when the file cannot be read or parsed, or when there is no key at
// all (no request could be served).
func LoadKeyFile(path string, extra ...Key) (*KeyFile, error) {
	f := &KeyFile{path: path, extra: append([]Key(nil), extra...)}
	s, err := f.read(false)
	if err != nil {
		return nil, err
	}
	f.set.Store(s)
	return f, nil
}

// ErrNoKeys is the error of a keys file that leaves no key at all.
var ErrNoKeys = errors.New("holds no keys")

// read reads the file; with none there may be no key at all only when
// empty is set.
func (f *KeyFile) read(empty bool) (*KeySet, error) {
	keys := f.extra
	if f.path != "" {
		s, err := LoadKeys(f.path)
		if err != nil {
			return nil, err
		}
		keys = append(s.Keys(), f.extra...)
	}
	if len(keys) == 0 && !empty {
		return nil, fmt.Errorf("%s %w", f.path, ErrNoKeys)
	}
	return NewKeySet(keys...), nil
}

// Reload reads the file again and, if it reads and parses whole, serves
// its keys from now on; it reports how many keys were added and removed.
// A file that holds no key is read as no key: every key it held is
// revoked at once (emptying the file is how an operator locks everyone
// out). On error — the file cannot be read, is gone, or does not parse (a
// line caught half written) — the previous keys stay in force.
func (f *KeyFile) Reload() (added, removed int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, err := f.read(true)
	if err != nil {
		return 0, 0, err
	}
	old := f.set.Swap(s)
	was := make(map[[32]byte]bool, len(old.keys))
	for _, k := range old.keys {
		was[k.Hash] = true
	}
	for _, k := range s.keys {
		if was[k.Hash] {
			delete(was, k.Hash)
		} else {
			added++
		}
	}
	return added, len(was), nil
}

// Path returns the file's path ("" for none).
func (f *KeyFile) Path() string { return f.path }

// Len returns the number of keys now in force.
func (f *KeyFile) Len() int { return f.set.Load().Len() }

// Authenticate implements [KeyStore] with the keys now in force.
func (f *KeyFile) Authenticate(token string) (Key, bool) {
	return f.set.Load().Authenticate(token)
}

// Has reports whether the key with hash h is in force now (see
// [KeySet.Has]): a key removed from the file and reloaded is not.
func (f *KeyFile) Has(h [32]byte) bool { return f.set.Load().Has(h) }
