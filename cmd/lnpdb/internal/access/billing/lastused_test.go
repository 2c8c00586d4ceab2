package billing

import (
	"context"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testclock"
)

// TestKeysUsed: a key's last use only moves forward, to the second; an
// unknown id is skipped; the key's other fields are left alone.
func TestKeysUsed(t *testing.T) {
	stores(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := mustAccount(t, s, 0)
		k1, err := s.AddKey(ctx, KeyRecord{AccountID: a.ID, Label: "one", Hash: hash("one"), Limit: 7}, t0)
		if err != nil {
			t.Fatal(err)
		}
		k2, err := s.AddKey(ctx, KeyRecord{AccountID: a.ID, Label: "two", Hash: hash("two")}, t0)
		if err != nil {
			t.Fatal(err)
		}
		lastUsed := func() map[string]time.Time {
			keys, err := s.Keys(ctx, a.ID)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]time.Time{}
			for _, k := range keys {
				out[k.ID] = k.LastUsed
				if k.ID == k1.ID && (k.Label != "one" || k.Limit != 7 || k.Hash != hash("one") || !k.Revoked.IsZero()) {
					t.Fatalf("KeysUsed changed the key: %+v", k)
				}
			}
			return out
		}
		if got := lastUsed(); !got[k1.ID].IsZero() || !got[k2.ID].IsZero() {
			t.Fatalf("a new key's last use: %v", got)
		}
		if err := s.KeysUsed(ctx, nil); err != nil {
			t.Fatal(err)
		}
		at := t0.Add(90*time.Second + 300*time.Millisecond)
		if err := s.KeysUsed(ctx, map[string]time.Time{k1.ID: at, "key_none": at}); err != nil {
			t.Fatal(err)
		}
		got := lastUsed()
		if want := t0.Add(90 * time.Second); !got[k1.ID].Equal(want) || !got[k2.ID].IsZero() {
			t.Fatalf("after a use: %v, want %s for %s only", got, want, k1.ID)
		}
		// An older report (another process's, late) does not move it back.
		if err := s.KeysUsed(ctx, map[string]time.Time{k1.ID: t0, k2.ID: t0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		got = lastUsed()
		if !got[k1.ID].Equal(t0.Add(90*time.Second)) || !got[k2.ID].Equal(t0.Add(time.Hour)) {
			t.Fatalf("after an older report: %v", got)
		}
		if got[k1.ID].Location() != time.UTC {
			t.Fatalf("last use in %v, want UTC", got[k1.ID].Location())
		}
	})
}

// TestEngineReportsLastUse: the engine notes each key's last lookup and
// reports it to the store, and a key reloaded keeps what was noted.
func TestEngineReportsLastUse(t *testing.T) {
	s := newBolt(t)
	ctx := context.Background()
	a := mustAccount(t, s, 10*MicrosPerDollar)
	k := addKey(t, s, a.ID, "k")
	addKey(t, s, a.ID, "idle")
	c := testclock.New(t0)
	e := newEngine(t, s, c, MicrosPerDollar)
	used := func(label string) time.Time {
		keys, err := s.Keys(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range keys {
			if r.Hash == hash(label) {
				return r.LastUsed
			}
		}
		t.Fatalf("no key %s", label)
		return time.Time{}
	}
	if err := deliver(e, ctx, k, KindLRN, false); err != nil {
		t.Fatal(err)
	}
	c.Advance(5 * time.Second)
	if err := e.ReloadKeys(ctx); err != nil {
		t.Fatal(err)
	}
	if err := deliver(e, ctx, k, KindCNAM, false); err != nil {
		t.Fatal(err)
	}
	if err := e.flushUses(ctx); err != nil {
		t.Fatal(err)
	}
	if got := used("k"); !got.Equal(t0.Add(5 * time.Second)) {
		t.Fatalf("last use %s, want %s", got, t0.Add(5*time.Second))
	}
	if got := used("idle"); !got.IsZero() {
		t.Fatalf("an unused key's last use: %s", got)
	}
	// Nothing new: no write. A use after: written at Close.
	counting := &usesCounter{Store: s}
	e.store = counting
	if err := e.flushUses(ctx); err != nil || counting.n != 0 {
		t.Fatalf("a report with nothing new: %d writes, %v", counting.n, err)
	}
	c.Advance(time.Minute)
	if err := deliver(e, ctx, k, KindLRN, false); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := used("k"); !got.Equal(t0.Add(65 * time.Second)) {
		t.Fatalf("after Close: last use %s", got)
	}
}

type usesCounter struct {
	Store
	n int
}

func (s *usesCounter) KeysUsed(ctx context.Context, used map[string]time.Time) error {
	s.n++
	return s.Store.KeysUsed(ctx, used)
}
