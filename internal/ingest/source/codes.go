package source

import "strings"

// codeTable hands out OCNs and SPIDs, upper-cased, one string per distinct
// code: a ported file names a few thousand SPIDs across hundreds of millions
// of rows, so sharing saves an allocation a row and memory downstream. Codes
// are keyed by their four upper-cased bytes, which hashes faster than a
// string.
type codeTable struct {
	m map[uint32]string
}

// get returns s, which must satisfy isCode, upper-cased and shared.
func (t *codeTable) get(s string) string {
	k := codeKey(s)
	if v, ok := t.m[k]; ok {
		return v
	}
	v := strings.ToUpper(s)
	if t.m == nil {
		t.m = make(map[uint32]string)
	}
	if len(t.m) < maxInterned {
		t.m[k] = v
	}
	return v
}

// getBytes is get for a slice that is not retained.
func (t *codeTable) getBytes(b []byte) string {
	if v, ok := t.m[codeKey(b)]; ok {
		return v
	}
	return t.get(string(b))
}

func codeKey[T text](s T) uint32 {
	return uint32(upper(s[0]))<<24 | uint32(upper(s[1]))<<16 | uint32(upper(s[2]))<<8 | uint32(upper(s[3]))
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}
