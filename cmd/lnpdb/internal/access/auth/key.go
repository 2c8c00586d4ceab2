// Package auth owns API keys for every front end: a Key is the SHA-256 of
// a key's text with its rate limit, never the text; KeySet authenticates a
// token in constant time; keys files (sha256:<hex>[,<limit>] per line) are
// parsed here and KeyFile reloads one atomically. It knows nothing of HTTP:
// a front end finds the token (a Bearer header, a SIP header) and asks.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/lnpdb/lnpdb/internal/core/lineio"
)

// Key is an API key as the server knows it: the SHA-256 of the key, never
// the key itself.
type Key struct {
	// Hash is the SHA-256 of the key's text.
	Hash [32]byte
	// Limit is the key's request budget per rate-limit window; 0 means the
	// server's default.
	Limit int

	hexHash string // the limiter's id for the key
}

// ID returns the first 8 hex digits of the key's hash: enough to tell keys
// apart in logs, useless for authenticating.
func (k Key) ID() string {
	if k.hexHash == "" {
		return hex.EncodeToString(k.Hash[:4])
	}
	return k.hexHash[:8]
}

// Fill computes what a Key built outside this package (by a KeyStore of
// its own) lacks; a front end calls it once per authenticated request.
func (k *Key) Fill() {
	if k.hexHash == "" {
		k.hexHash = hex.EncodeToString(k.Hash[:])
	}
}

// HexHash is the key's hash in hex: its id for the rate limiter. It is
// computed on each call unless the Key was made here or Filled.
func (k Key) HexHash() string {
	if k.hexHash == "" {
		return hex.EncodeToString(k.Hash[:])
	}
	return k.hexHash
}

// Line returns the key's keys-file line: sha256:<64 hex>[,<limit>].
func (k Key) Line() string {
	if k.Limit > 0 {
		return "sha256:" + k.HexHash() + "," + strconv.Itoa(k.Limit)
	}
	return "sha256:" + k.HexHash()
}

// HashKey returns the Key for the key text key, with the server's default
// limit.
func HashKey(key string) Key {
	return newKey(sha256.Sum256([]byte(key)), 0)
}

// KeyOf returns the Key with hash h and limit, for a KeyStore of its own:
// built once per key, it costs nothing per request.
func KeyOf(h [32]byte, limit int) Key { return newKey(h, limit) }

func newKey(h [32]byte, limit int) Key {
	return Key{Hash: h, Limit: limit, hexHash: hex.EncodeToString(h[:])}
}

// KeyPrefix starts every key NewKey makes, so that a leaked key is easy to
// recognize (e.g. by secret scanners).
const KeyPrefix = "lnp_"

// NewKey returns a new random API key: KeyPrefix and 32 base32 characters
// (160 bits from crypto/rand).
func NewKey() string {
	var b [20]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return KeyPrefix + strings.ToLower(base32.StdEncoding.EncodeToString(b[:]))
}

// KeyStore authenticates API keys. It must be safe for concurrent use.
type KeyStore interface {
	// Authenticate returns the Key whose hash is the SHA-256 of token.
	Authenticate(token string) (Key, bool)
}

// KeySet is an immutable KeyStore. It compares the token's hash with every
// stored hash in constant time, without stopping at a match, so the time it
// takes says nothing about which key matched or how much of it did.
type KeySet struct {
	keys []Key
}

// NewKeySet returns a KeySet of keys.
func NewKeySet(keys ...Key) *KeySet {
	return &KeySet{keys: append([]Key(nil), keys...)}
}

// Keys returns a copy of the set's keys.
func (s *KeySet) Keys() []Key { return append([]Key(nil), s.keys...) }

// Len returns the number of keys.
func (s *KeySet) Len() int { return len(s.keys) }

// Authenticate implements [KeyStore].
func (s *KeySet) Authenticate(token string) (Key, bool) {
	var buf [64]byte // keys are short: hash them without allocating
	sum := sha256.Sum256(append(buf[:0], token...))
	found := -1
	for i := range s.keys {
		if subtle.ConstantTimeCompare(sum[:], s.keys[i].Hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Key{}, false
	}
	return s.keys[found], true
}

// LoadKeys reads a keys file; see [ParseKeys].
func LoadKeys(path string) (*KeySet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseKeys(f, path)
}

// ParseKeys reads a keys file from r; name is used in error messages. Each
// line is
//
//	sha256:<64 hex digits>[,<requests per window>]
//
// the hash being the SHA-256 of the key's text; '#' starts a comment that
// runs to the end of the line, and blank lines are ignored. A malformed line
// or a hash listed twice is an error naming the file and the line.
func ParseKeys(r io.Reader, name string) (*KeySet, error) {
	var keys []Key
	seen := map[[32]byte]int{}
	lr := lineio.NewReader(r)
	for {
		b, err := lr.Next()
		if err == io.EOF {
			break
		}
		n := lr.Line()
		if errors.Is(err, lineio.ErrTooLong) {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		line := string(b)
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		k, err := parseKeyLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if prev, dup := seen[k.Hash]; dup {
			return nil, fmt.Errorf("%s:%d: key already listed on line %d", name, n, prev)
		}
		seen[k.Hash] = n
		keys = append(keys, k)
	}
	return &KeySet{keys: keys}, nil
}

func parseKeyLine(line string) (Key, error) {
	hash, limit, hasLimit := strings.Cut(line, ",")
	hash = strings.TrimSpace(hash)
	digest, ok := strings.CutPrefix(hash, "sha256:")
	if !ok {
		// The line is never quoted: it may be a key itself, pasted in
		// by mistake, and this error is logged.
		if strings.HasPrefix(hash, "lnp_") {
			return Key{}, errors.New("this line holds an API key itself, not its hash: a keys file holds sha256:<64 hex digits> of each key (lnpdb key new writes it); remove the line, and revoke that key if the file was shared")
		}
		return Key{}, errors.New("want sha256:<64 hex digits>[,<requests per minute>]")
	}
	var h [32]byte
	if len(digest) != 64 {
		return Key{}, fmt.Errorf("the hash must be 64 hex digits, got %d characters", len(digest))
	}
	if _, err := hex.Decode(h[:], []byte(digest)); err != nil {
		return Key{}, fmt.Errorf("the hash must be 64 hex digits: %w", err)
	}
	n := 0
	if hasLimit {
		var err error
		n, err = strconv.Atoi(strings.TrimSpace(limit))
		if err != nil || n < 1 {
			return Key{}, fmt.Errorf("the rate limit must be a whole number of requests of at least 1, got %q", strings.TrimSpace(limit))
		}
	}
	return newKey(h, n), nil
}

// Has reports whether the set holds the key with hash h: for a holder of
// a key's hash, never its text (a web session), asking whether that key
// still stands.
func (s *KeySet) Has(h [32]byte) bool {
	for i := range s.keys {
		if s.keys[i].Hash == h {
			return true
		}
	}
	return false
}
