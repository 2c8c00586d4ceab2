package billing

import (
	"bufio"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
)

// The multi-process tests run this test binary again as independent
// billing processes: each opens the PostgreSQL store, runs its own Engine
// and hammers one account from several goroutines until the wallet is
// empty.
const helperEnv = "LNPDB_BILLING_HAMMER"

// helperMain is a hammering process. It prints "paid N" lines as it goes
// and "done PAID UNBILLED SYNCERRORS" when the wallet is empty.
func helperMain() int {
	ctx := context.Background()
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "hammer:", err)
		return 1
	}
	h, err := hex.DecodeString(os.Getenv("HAMMER_KEY"))
	if err != nil || len(h) != 32 {
		return fail(fmt.Errorf("HAMMER_KEY: %v", err))
	}
	var key [32]byte
	copy(key[:], h)
	ttl, _ := time.ParseDuration(os.Getenv("HAMMER_TTL"))
	s, err := Open(ctx, os.Getenv("HAMMER_DSN"))
	if err != nil {
		return fail(err)
	}
	defer s.Close()
	e, err := NewEngine(ctx, EngineConfig{Store: s, LeaseTTL: ttl, SyncEvery: ttl / 20, LeaseCredit: 20_000})
	if err != nil {
		return fail(err)
	}
	// Each process answers a first lookup (it has synced a lease of the
	// account), says it is ready and waits for the word: the processes
	// start hammering together, and one slow to start or to sync (a busy
	// machine, the race detector) has answered before the other can
	// empty the wallet. Past that, which answers how many is the
	// machine's scheduling, not billing's.
	var paid atomic.Int64
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := deliver(e, ctx, key, KindLRN, false)
		if err == nil {
			paid.Add(1)
			break
		}
		if errors.Is(err, ErrInsufficientBalance) || !time.Now().Before(deadline) {
			return fail(fmt.Errorf("the first lookup: %w", err))
		}
		time.Sleep(ttl / 50) // the store busy: again
	}
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fail(fmt.Errorf("waiting for the start: %w", err))
	}
	var wg sync.WaitGroup
	deadline = time.Now().Add(30 * time.Second)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			refused := time.Time{}
			for time.Now().Before(deadline) {
				err := deliver(e, ctx, key, KindLRN, false)
				switch {
				case err == nil:
					paid.Add(1)
					refused = time.Time{}
				case errors.Is(err, ErrInsufficientBalance):
					// Empty, unless another process returns credit: it
					// is empty for good after a lease's lifetime of
					// refusals.
					if refused.IsZero() {
						refused = time.Now()
					} else if time.Since(refused) > 2*ttl {
						return
					}
					time.Sleep(ttl / 50)
				default:
					fmt.Fprintln(os.Stderr, "hammer: charge:", err)
					time.Sleep(ttl / 50)
				}
			}
		}()
	}
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				fmt.Printf("paid %d\n", paid.Load())
			}
		}
	}()
	wg.Wait()
	close(stop)
	if err := e.Close(ctx); err != nil {
		return fail(err)
	}
	st := e.Stats()
	fmt.Printf("done %d %d %d\n", paid.Load(), st.Unbilled, st.SyncErrors)
	return 0
}

// hammerTogether waits until every hammer is ready, then starts them all.
func hammerTogether(t *testing.T, hs ...*hammer) {
	t.Helper()
	for _, h := range hs {
		select {
		case <-h.ready:
		case err := <-h.exit:
			t.Fatalf("hammer process ended before it was ready: %v", err)
		case <-time.After(60 * time.Second):
			t.Fatal("hammer process not ready in 60 s")
		}
	}
	for _, h := range hs {
		if _, err := io.WriteString(h.start, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
}

type hammer struct {
	cmd   *exec.Cmd
	start io.WriteCloser // a line on it starts the hammering
	ready chan struct{}  // closed once the process says it is ready
	mu    sync.Mutex
	paid  int64 // the last count it printed
	done  []int64
	exit  chan error
}

func startHammer(t *testing.T, dsn string, key [32]byte, ttl time.Duration) *hammer {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=1", "HAMMER_DSN="+dsn, "HAMMER_KEY="+hex.EncodeToString(key[:]),
		"HAMMER_TTL="+ttl.String())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &hammer{cmd: cmd, start: in, ready: make(chan struct{}), exit: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			h.mu.Lock()
			switch {
			case len(f) == 1 && f[0] == "ready":
				close(h.ready)
			case len(f) == 2 && f[0] == "paid":
				h.paid, _ = strconv.ParseInt(f[1], 10, 64)
			case len(f) == 4 && f[0] == "done":
				for _, x := range f[1:] {
					n, _ := strconv.ParseInt(x, 10, 64)
					h.done = append(h.done, n)
				}
			}
			h.mu.Unlock()
		}
		h.exit <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return h
}

func (h *hammer) wait(t *testing.T) (paid, unbilled, syncErrs int64) {
	t.Helper()
	select {
	case err := <-h.exit:
		if err != nil {
			t.Fatalf("hammer process: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("hammer process did not finish in 60 s")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.done) != 3 {
		t.Fatal("hammer process did not report")
	}
	return h.done[0], h.done[1], h.done[2]
}

// hammerSetup makes an account with credits and a key on a new PostgreSQL
// database, and returns a watcher that fails the test if the balance is
// ever seen below zero.
func hammerSetup(t *testing.T, credits Micros) (dsn string, s Store, a Account, key [32]byte, stop func()) {
	dsn = testpg.New(t)
	ctx := context.Background()
	var err error
	if s, err = Open(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if a, err = s.CreateAccount(ctx, "hammered", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, _, err = s.Credit(ctx, a.ID, credits, "INV-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	key = hash("hammer key")
	if _, err = s.AddKey(ctx, KeyRecord{AccountID: a.ID, Hash: key}, time.Now()); err != nil {
		t.Fatal(err)
	}
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-quit:
				return
			case <-time.After(20 * time.Millisecond):
			}
			acc, err := s.Account(ctx, a.ID)
			if err == nil && (acc.Balance < 0 || acc.Leased < 0) {
				t.Errorf("balance below zero: %+v", acc)
			}
		}
	}()
	return dsn, s, a, key, func() { close(quit); wg.Wait() }
}

func ledger(t *testing.T, s Store, id string) (lookups, free int64, charged Micros) {
	t.Helper()
	now := time.Now().UTC()
	for _, m := range []string{Month(now.AddDate(0, 0, -1)), Month(now)} {
		rows, err := s.Usage(context.Background(), id, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			lookups += r.Lookups
			free += r.Free
			charged += r.Amount
		}
		if Month(now.AddDate(0, 0, -1)) == Month(now) {
			break
		}
	}
	return
}

// TestTwoProcessesEmptyOneWallet: two processes hammer one account on one
// PostgreSQL until its wallet is empty. Every paid lookup is charged once,
// the charges are the credit, the balance is never negative.
func TestTwoProcessesEmptyOneWallet(t *testing.T) {
	const credits = 3_000_000 // 3,000 lookups at $0.001, after 10 free
	dsn, s, a, key, stop := hammerSetup(t, credits)
	ttl := 2 * time.Second
	h1, h2 := startHammer(t, dsn, key, ttl), startHammer(t, dsn, key, ttl)
	hammerTogether(t, h1, h2)
	p1, u1, e1 := h1.wait(t)
	p2, u2, e2 := h2.wait(t)
	stop()
	// A sync that fails (a busy machine can time one out) is sent again
	// as it was, so it may happen; a lookup left unbilled may not.
	if u1+u2 != 0 {
		t.Fatalf("unbilled %d+%d (sync errors %d+%d)", u1, u2, e1, e2)
	}
	acc, err := s.Account(context.Background(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	lookups, free, charged := ledger(t, s, a.ID)
	t.Logf("sync errors %d+%d; process 1 paid %d, process 2 paid %d; ledger %d lookups (%d free), charged %d; balance %d", e1, e2, p1, p2, lookups, free, charged, acc.Balance)
	price := DefaultPrices[KindLRN]
	switch {
	case p1 == 0 || p2 == 0: // each answers one before the start
		t.Errorf("a process answered nothing: %d and %d", p1, p2)
	case lookups != p1+p2:
		t.Errorf("ledger has %d lookups, the processes answered %d", lookups, p1+p2)
	case free != FreeTier:
		t.Errorf("%d free lookups, want %d", free, FreeTier)
	case charged != Micros(lookups-free)*price:
		t.Errorf("charged %d for %d paid lookups at %d", charged, lookups-free, price)
	case charged != credits || acc.Balance != 0 || acc.Leased != 0:
		t.Errorf("charged %d of %d credits; balance %d, leased %d", charged, credits, acc.Balance, acc.Leased)
	}
}

// TestKilledProcessCreditReturns: as above, with one process killed (kill
// -9) mid-run. Once its lease expires, credit is conserved: balance +
// charged == credits; what the survivor answered is all charged.
func TestKilledProcessCreditReturns(t *testing.T) {
	const credits = 5_000_000
	dsn, s, a, key, stop := hammerSetup(t, credits)
	ttl := 2 * time.Second
	victim, survivor := startHammer(t, dsn, key, ttl), startHammer(t, dsn, key, ttl)
	hammerTogether(t, victim, survivor)
	// The victim is killed once it has paid for a lease's worth of lookups
	// (LeaseCredit 20,000 at $0.001 each): it has held credit. Waiting for
	// more let the survivor, on a busy machine, empty the wallet first.
	const killAfter = 20
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		victim.mu.Lock()
		n := victim.paid
		victim.mu.Unlock()
		if n >= killAfter {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the first process answered %d lookups in 30 s", n)
		}
	}
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.exit
	victim.mu.Lock()
	victimPaid := victim.paid // at least this many; it may have answered more
	victim.mu.Unlock()
	paid, _, _ := survivor.wait(t)
	stop()
	// Whatever the victim's leases still hold comes back at expiry.
	time.Sleep(ttl + 100*time.Millisecond)
	if _, err := s.ExpireLeases(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	acc, err := s.Account(context.Background(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	lookups, free, charged := ledger(t, s, a.ID)
	t.Logf("victim paid ≥ %d before kill -9, survivor %d; ledger %d lookups (%d free), charged %d; balance %d", victimPaid, paid, lookups, free, charged, acc.Balance)
	switch {
	case acc.Leased != 0:
		t.Errorf("leases still hold %d after expiry", acc.Leased)
	case acc.Balance+charged != credits:
		t.Errorf("credit not conserved: balance %d + charged %d != %d", acc.Balance, charged, credits)
	case charged != Micros(lookups-free)*DefaultPrices[KindLRN]:
		t.Errorf("charged %d for %d paid lookups", charged, lookups-free)
	case lookups < paid:
		t.Errorf("ledger has %d lookups, the survivor alone answered %d", lookups, paid)
	case acc.Balance < 0:
		t.Errorf("negative balance %d", acc.Balance)
	}
}
