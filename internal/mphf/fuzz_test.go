package mphf

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzKeys turns fuzz input into a set of distinct keys (at most maxFuzzKeys).
// data[0] selects how the rest is read:
//
//	0: raw little-endian 8-byte keys;
//	1: phone-like clusters: a base number below 10^10 then 2-byte deltas
//	   (small deltas give runs, a zero delta a duplicate that is dropped);
//	2: a sequential run: an 8-byte start and a 2-byte length.
func fuzzKeys(data []byte) []uint64 {
	const maxFuzzKeys = 5000
	if len(data) == 0 {
		return nil
	}
	mode, data := data[0]%3, data[1:]
	u64 := func(b []byte) uint64 {
		var buf [8]byte
		copy(buf[:], b)
		return binary.LittleEndian.Uint64(buf[:])
	}
	var keys []uint64
	switch mode {
	case 0:
		for ; len(data) > 0 && len(keys) < maxFuzzKeys; data = data[min(8, len(data)):] {
			keys = append(keys, u64(data[:min(8, len(data))]))
		}
	case 1:
		k := 2_000_000_000 + u64(data[:min(4, len(data))])%8_000_000_000
		data = data[min(4, len(data)):]
		keys = append(keys, k)
		for ; len(data) >= 2 && len(keys) < maxFuzzKeys; data = data[2:] {
			k += uint64(binary.LittleEndian.Uint16(data))
			keys = append(keys, k)
		}
	case 2:
		start := u64(data[:min(8, len(data))])
		data = data[min(8, len(data)):]
		n := int(u64(data[:min(2, len(data))]) % maxFuzzKeys)
		for i := range n {
			keys = append(keys, start+uint64(i))
		}
	}
	seen := make(map[uint64]bool, len(keys))
	out := keys[:0]
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

func FuzzBuild(f *testing.F) {
	f.Add([]byte{}, uint64(0))
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8}, uint64(1))
	f.Add([]byte{1, 0x70, 0x5e, 0xbb, 0x78, 1, 0, 1, 0, 2, 0, 0, 0, 0xe8, 3}, uint64(2))
	f.Add([]byte{2, 0x70, 0x5e, 0xbb, 0x78, 0, 0, 0, 0, 0x10, 0x27}, uint64(3))
	f.Add([]byte{2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 100, 0}, uint64(1<<64-1))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		keys := fuzzKeys(data)
		tab, err := Build(keys, seed)
		require.NoError(t, err)
		requireBijection(t, tab, keys)
	})
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, HeaderSize))
	for _, keys := range [][]uint64{{7}, {1, 2, 3}, sequentialKeys(2025550000, 40)} {
		tab, err := Build(keys, 0)
		require.NoError(f, err)
		f.Add(tab.AppendBinary(nil))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := Decode(data)
		p, verr := Validate(data)
		if err != nil {
			require.Nil(t, tab)
			require.Error(t, verr)
			return
		}
		require.NoError(t, verr)
		require.Equal(t, tab.Params, p)
		require.True(t, bytes.Equal(data, tab.AppendBinary(nil)), "re-encoding differs")
		probe := []uint64{0, 1, 2025550123, 1<<64 - 1}
		for i := 0; i+8 <= len(data) && len(probe) < 64; i += 8 {
			probe = append(probe, binary.LittleEndian.Uint64(data[i:]))
		}
		for _, k := range probe {
			i := tab.Lookup(k)
			if tab.N == 0 {
				require.Zero(t, i)
			} else {
				require.Less(t, i, tab.N)
			}
			require.Equal(t, i, p.LookupBytes(data, k))
		}
	})
}
