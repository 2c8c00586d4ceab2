package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/internal/core/lineio"
)

func TestParseKeys(t *testing.T) {
	a, b := HashKey("alpha"), HashKey("beta")
	file := "# keys\n\n" +
		a.Line() + "\n" +
		"  sha256:" + strings.ToUpper(hex.EncodeToString(b.Hash[:])) + " , 500   # beta's own limit\n" +
		"\t# indented comment\n"
	ks, err := ParseKeys(strings.NewReader(file), "keys.txt")
	require.NoError(t, err)
	require.Equal(t, 2, ks.Len())

	k, ok := ks.Authenticate("alpha")
	require.True(t, ok)
	assert.Equal(t, 0, k.Limit)
	assert.Equal(t, sha256.Sum256([]byte("alpha")), k.Hash)
	k, ok = ks.Authenticate("beta")
	require.True(t, ok)
	assert.Equal(t, 500, k.Limit)
	assert.Equal(t, b.ID(), k.ID())
	_, ok = ks.Authenticate("gamma")
	assert.False(t, ok)
	_, ok = ks.Authenticate("")
	assert.False(t, ok)
}

func TestParseKeysErrors(t *testing.T) {
	h := HashKey("x").Line()
	for name, c := range map[string]struct{ file, want string }{
		"no prefix":      {"abc\n", "keys.txt:1: want sha256:"},
		"plain key":      {"\n\nlnp_abc\n", "keys.txt:3:"},
		"short hash":     {"sha256:abcd\n", "keys.txt:1: the hash must be 64 hex digits"},
		"not hex":        {"sha256:" + strings.Repeat("g", 64) + "\n", "keys.txt:1: the hash must be 64 hex digits"},
		"zero limit":     {h + ",0\n", "keys.txt:1: the rate limit"},
		"negative limit": {h + ",-5\n", "keys.txt:1: the rate limit"},
		"word limit":     {h + ",lots\n", "keys.txt:1: the rate limit"},
		"duplicate":      {h + "\n" + h + ",10\n", "keys.txt:2: key already listed on line 1"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseKeys(strings.NewReader(c.file), "keys.txt")
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestParseKeysNeverQuotesAKey: a key pasted into a keys file is named as
// such, and no part of it is in the error, which reloads log.
func TestParseKeysNeverQuotesAKey(t *testing.T) {
	key := NewKey()
	for _, line := range []string{key, "  " + key + ",100", "x" + key} {
		_, err := ParseKeys(strings.NewReader(line+"\n"), "keys.txt")
		require.Error(t, err)
		assert.NotContains(t, err.Error(), key[:8], "no part of the line is quoted")
		assert.NotContains(t, err.Error(), key[len(key)-8:])
	}
	_, err := ParseKeys(strings.NewReader(key+"\n"), "keys.txt")
	assert.Contains(t, err.Error(), "keys.txt:1: this line holds an API key itself")
}

func TestNewKey(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		k := NewKey()
		assert.Regexp(t, `^lnp_[a-z2-7]{32}$`, k)
		assert.False(t, seen[k])
		seen[k] = true
	}
	k := NewKey()
	key := HashKey(k)
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, key.Line())
	assert.NotContains(t, key.Line(), k)
	assert.Equal(t, key.Line()[7:15], key.ID())
	key.Limit = 9
	ks, err := ParseKeys(strings.NewReader(key.Line()), "k")
	require.NoError(t, err)
	got, ok := ks.Authenticate(k)
	require.True(t, ok)
	assert.Equal(t, 9, got.Limit)
}

func TestKeyFromElsewhere(t *testing.T) {
	// A KeyStore of its own may build Keys from hashes alone.
	k := Key{Hash: sha256.Sum256([]byte("k"))}
	assert.Equal(t, HashKey("k").ID(), k.ID())
	k.Fill()
	assert.Equal(t, HashKey("k").Line(), k.Line())
}

func BenchmarkAuthenticate(b *testing.B) {
	keys := make([]Key, 100)
	for i := range keys {
		keys[i] = HashKey(NewKey())
	}
	ks := NewKeySet(keys...)
	b.ReportAllocs()
	for b.Loop() {
		ks.Authenticate("lnp_notakeyofthesetatallxxxxxxxxxxxx")
	}
}

// TestParseKeysLines: a keys file is read as every text input is
// (internal/core/lineio): lines end in LF, CR or CRLF, and a line longer
// than 1 MiB is an error naming its line, read no further than the bound.
func TestParseKeysLines(t *testing.T) {
	a, b := HashKey("alpha"), HashKey("beta")
	ks, err := ParseKeys(strings.NewReader("\ufeff"+a.Line()+"\r# "+strings.Repeat("c", 100<<10)+"\r\n"+b.Line()), "keys.txt")
	require.NoError(t, err)
	assert.Equal(t, 2, ks.Len())

	_, err = ParseKeys(strings.NewReader(a.Line()+"\n"+strings.Repeat("#", 2<<20)+"\n"), "keys.txt")
	assert.ErrorIs(t, err, lineio.ErrTooLong)
	assert.EqualError(t, err, "keys.txt:2: line longer than 1048576 bytes")
}
