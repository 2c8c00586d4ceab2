package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testio"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// asLnpdbEnv makes this test binary run as lnpdb (see TestMain).
const asLnpdbEnv = "LNPDB_TEST_AS_LNPDB"

// serveProcess is a real lnpdb serve process.
type serveProcess struct {
	cmd  *exec.Cmd
	base string
	exit chan error
	logs *testio.Buffer
}

func startServeProcess(t *testing.T, args ...string) *serveProcess {
	t.Helper()
	p := &serveProcess{exit: make(chan error, 1)}
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--addr", "127.0.0.1:0", "--access-log=false"}, args...)...)
	p.cmd = cmd
	cmd.Env = append(os.Environ(), asLnpdbEnv+"=1")
	logs := new(testio.Buffer)
	p.logs = logs
	cmd.Stderr = logs
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("lnpdb serve %s's log:\n%s", p.base, logs.String())
		}
	})
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	sc := bufio.NewScanner(out)
	rx := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`)
	for sc.Scan() {
		if m := rx.FindStringSubmatch(sc.Text()); m != nil {
			p.base = m[1]
			break
		}
	}
	require.NotEmpty(t, p.base, "serve printed no address")
	go func() {
		_, _ = io.Copy(io.Discard, out)
		p.exit <- cmd.Wait()
	}()
	return p
}

func (p *serveProcess) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-p.exit:
		require.NoError(t, err, "serve exited badly")
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
}

// hammerServers posts LRN lookups with key to the servers from several
// goroutines until every server has answered only 402 for quiet. It
// returns how many lookups each server answered 200.
func hammerServers(t *testing.T, key string, quiet time.Duration, first *serveProcess, servers func() []*serveProcess) []int64 {
	t.Helper()
	ok := make([]atomic.Int64, 2)
	var lastRefusal atomic.Value
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	deadline := time.Now().Add(60 * time.Second)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var refusedSince time.Time
			for i := g; time.Now().Before(deadline); i++ {
				srv := servers()
				n := i % len(srv)
				req, _ := http.NewRequest("POST", srv[n].base+"/api/v1/lrn", strings.NewReader(`{"phone_number":"12025550123"}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+key)
				res, err := client.Do(req)
				if err != nil {
					continue // a killed server
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				switch res.StatusCode {
				case http.StatusOK:
					if srv[n] == first {
						ok[0].Add(1)
					} else {
						ok[1].Add(1)
					}
					refusedSince = time.Time{}
				case http.StatusPaymentRequired:
					lastRefusal.Store(srv[n].base + " " + string(b))
					if refusedSince.IsZero() {
						refusedSince = time.Now()
					} else if time.Since(refusedSince) > quiet {
						return
					}
					time.Sleep(5 * time.Millisecond)
				default:
					t.Errorf("status %d", res.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("last refusal: %v", lastRefusal.Load())
	return []int64{ok[0].Load(), ok[1].Load()}
}

// TestServeProcessesEmptyOneWallet: two lnpdb serve processes on one
// PostgreSQL, hammered on one account until its wallet is empty: every 200
// is charged once, the charges are the credit, the balance never goes
// below zero. Then again with kill -9 of one process mid-run: once its
// lease expires, balance + charged == credits, and no more lookups are
// charged than were answered.
func TestServeProcessesEmptyOneWallet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts lnpdb serve processes")
	}
	for _, kill := range []bool{false, true} {
		name := "both run"
		if kill {
			name = "one killed"
		}
		t.Run(name, func(t *testing.T) {
			dsn := testpg.New(t)
			ctx := context.Background()
			id := strings.TrimSpace(mustRun(t, "account", "create", "--accounts", dsn, "--name", "hammered"))
			key := strings.TrimSpace(mustRun(t, "key", "new", "--accounts", dsn, "--account", id, "--rpm", "100000000"))
			const credits = 2_000_000 // 2,000 lookups at $0.001 after the 10 free
			mustRun(t, "wallet", "credit", "--accounts", dsn, "--account", id, "--amount", "2", "--ref", "INV-1")
			st, err := billing.Open(ctx, dsn)
			require.NoError(t, err)
			defer st.Close()

			const ttl = 2 * time.Second
			// The test counts every answer as paid or refused for want of
			// credit: the store may wait its longest, for a machine that
			// runs it under the race detector beside other work.
			// Each node serves its own copy of the table, its writer.
			args := func() []string {
				return []string{"--db", testdb.Build(t, lnpdb.Sample()), "--accounts", dsn, "--lease-ttl", ttl.String(), "--accounts-timeout", "5s"}
			}
			p1, p2 := startServeProcess(t, args()...), startServeProcess(t, args()...)
			var mu sync.Mutex
			live := []*serveProcess{p1, p2}
			servers := func() []*serveProcess { mu.Lock(); defer mu.Unlock(); return live }

			// Watch the balance while the processes spend it.
			stopWatch := make(chan struct{})
			watched := make(chan struct{})
			go func() {
				defer close(watched)
				for {
					select {
					case <-stopWatch:
						return
					case <-time.After(10 * time.Millisecond):
					}
					if a, err := st.Account(ctx, id); err == nil && (a.Balance < 0 || a.Leased < 0) {
						t.Errorf("balance below zero: %+v", a)
					}
				}
			}()
			if kill {
				go func() {
					// Mid-run: once some credit is spent.
					for {
						time.Sleep(20 * time.Millisecond)
						if a, err := st.Account(ctx, id); err == nil && a.Balance+a.Leased < credits*3/4 {
							break
						}
					}
					_ = p1.cmd.Process.Signal(syscall.SIGKILL)
					mu.Lock()
					live = []*serveProcess{p2}
					mu.Unlock()
				}()
			}
			quiet := 2 * time.Second
			if kill {
				quiet = 3 * ttl // the killed process's lease comes back to the survivor
			}
			answered := hammerServers(t, key, quiet, p1, servers)
			if !kill {
				p1.stop(t)
			}
			p2.stop(t)
			close(stopWatch)
			<-watched
			if kill {
				time.Sleep(ttl)
				_, err := st.ExpireLeases(ctx, time.Now())
				require.NoError(t, err)
			}

			a, err := st.Account(ctx, id)
			require.NoError(t, err)
			rows, err := st.Usage(ctx, id, billing.Month(time.Now()))
			require.NoError(t, err)
			var lookups, free int64
			var charged billing.Micros
			for _, r := range rows {
				lookups += r.Lookups
				free += r.Free
				charged += r.Amount
			}
			total := answered[0] + answered[1]
			t.Logf("answered %d (%d, %d); ledger %d lookups, %d free, charged %d; balance %d, leased %d",
				total, answered[0], answered[1], lookups, free, charged, a.Balance, a.Leased)
			require.Zero(t, a.Leased, "leases left after the processes stopped")
			require.Equal(t, billing.Micros(credits), a.Balance+charged, "credit not conserved")
			require.Equal(t, charged, billing.Micros(lookups-free)*billing.DefaultPrices[billing.KindLRN])
			require.LessOrEqual(t, lookups, total, "more lookups charged than answered")
			if !kill {
				require.Equal(t, total, lookups, "every 200 is charged")
				require.Equal(t, billing.Micros(credits), charged, "the wallet is spent")
				require.Positive(t, answered[0])
				require.Positive(t, answered[1])
			} else {
				require.Equal(t, billing.Micros(0), a.Balance, "the survivor spent what the killed process had leased")
			}
		})
	}
}
