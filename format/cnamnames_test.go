package format

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nameHeapOf encodes names as a CNAMNAME section at offset 0 of a region
// and loads it.
func nameHeapOf(t testing.TB, names []string) (*region, *nameHeap) {
	hdr, frames := encodeNameChunks(names)
	b := hdr
	for _, f := range frames {
		b = append(b, f...)
	}
	m := newRegion(b, nil, "heap")
	var h nameHeap
	require.NoError(t, loadNameHeap(m, dirEntry{id: secCNAMNames, encoding: encRaw, length: uint64(len(b))}, &h))
	return m, &h
}

// Every name reads back as written, from goroutines whose chunks collide in
// the cache's slots (more chunks than slots, in random order, each chunk
// read many times), under the race detector in CI.
func TestNameHeapCache(t *testing.T) {
	chunks := 2*nameCacheSlots + 7
	names := make([]string, chunks*namesPerChunk-3)
	for i := range names {
		names[i] = fmt.Sprintf("NAME %d %s", i, string(rune('A'+i%26)))
	}
	m, h := nameHeapOf(t, names)
	require.EqualValues(t, chunks, h.chunks)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 20000 {
				i := rng.IntN(len(names))
				got, err := h.name(m, uint64(i))
				if !assert.NoError(t, err) || !assert.Equal(t, names[i], got, "name %d", i) {
					return
				}
			}
		})
	}
	wg.Wait()
	_, err := h.name(m, uint64(len(names)))
	assert.ErrorIs(t, err, errCorruptRecord, "an index past the names")
}

// A name whose frame is cached is read without an allocation.
func TestNameHeapCachedNameAllocatesNothing(t *testing.T) {
	m, h := nameHeapOf(t, []string{"ALPHA", "BRAVO", "CHARLIE"})
	_, err := h.name(m, 1)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(100, func() {
		if n, err := h.name(m, 2); err != nil || n != "CHARLIE" {
			t.Fatalf("%q, %v", n, err)
		}
	})
	assert.Zero(t, allocs)
}

// A name whose frame is not kept is decoded from the mapped bytes in
// place: two allocations, the decoded frame and the cache's entry for it,
// and none for a copy of the compressed frame.
func TestNameHeapUncachedNameAllocatesTheFrameOnly(t *testing.T) {
	if raceOn {
		t.Skip("the race detector allocates in zstd's decoder: counted without it")
	}
	names := make([]string, (nameCacheSlots+1)*namesPerChunk)
	for i := range names {
		names[i] = fmt.Sprintf("NAME %d", i)
	}
	m, h := nameHeapOf(t, names)
	// Chunks 0 and nameCacheSlots share a slot: each read evicts the other.
	a, b := uint64(1), uint64(nameCacheSlots*namesPerChunk+1)
	allocs := testing.AllocsPerRun(50, func() {
		for _, i := range []uint64{a, b} {
			if n, err := h.name(m, i); err != nil || n != names[i] {
				t.Fatalf("%q, %v", n, err)
			}
		}
	})
	assert.Equal(t, 4.0, allocs, "allocations for two names whose frames are not kept")
}
