// Command dipload is the load client of benchmarks/dip: it writes the query files the
// SIP, ENUM and pdb load runs read, loads lnpdb's pdb front end as a client,
// and measures in-process lrn.Lookup on the same queries, for the same run.
//
//	dipload queries -src DIR -out DIR [-n 65536]
//	dipload pdb -addr 127.0.0.1:5574 -src DIR [-d 10s] [-clients 4] [-window 64]
//	dipload lookup -db us.lnpdb -src DIR [-d 5s]
//
// The queries are the side-by-side benchmarks' random-vacant mix
// (bench.MakeQueries with bench.MixRandomVacant, the mix of the published dip
// results): half ported numbers, a quarter unported numbers in assigned
// codes, a quarter numbers in vacant codes anywhere, shuffled.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/lnpdb/lnpdb/benchmarks/internal/bench"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/lrn"
	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: dipload queries|pdb|lookup [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "queries":
		err = queries(os.Args[2:])
	case "pdb":
		err = pdbLoad(os.Args[2:])
	case "lookup":
		err = lookup(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dipload:", err)
		os.Exit(1)
	}
}

func makeQueries(src string, n int) (*bench.Queries, error) {
	recs, err := bench.ReadPorted(src)
	if err != nil {
		return nil, err
	}
	if err := bench.SortRecs(recs); err != nil {
		return nil, err
	}
	return bench.MakeQueries(src, recs, n, 1, bench.MixRandomVacant)
}

// queries writes sipp.csv (SIPp injection: +1NUMBER per line), dnsperf.txt
// (ENUM names with type NAPTR) and numbers.txt (11 digits per line).
func queries(args []string) error {
	fs := flag.NewFlagSet("queries", flag.ExitOnError)
	src := fs.String("src", "", "source directory the table was built from")
	out := fs.String("out", "", "directory to write the files to")
	n := fs.Int("n", 1<<16, "queries (a power of two)")
	fs.Parse(args)
	q, err := makeQueries(*src, *n)
	if err != nil {
		return err
	}
	var sipp, dnsperf, nums strings.Builder
	sipp.WriteString("SEQUENTIAL\n")
	for _, c := range q.Canonical {
		sipp.WriteString("+" + c + "\n")
		nums.WriteString(c + "\n")
		for i := len(c) - 1; i >= 0; i-- {
			dnsperf.WriteByte(c[i])
			dnsperf.WriteByte('.')
		}
		dnsperf.WriteString("e164.arpa. NAPTR\n")
	}
	for name, s := range map[string]string{"sipp.csv": sipp.String(), "dnsperf.txt": dnsperf.String(), "numbers.txt": nums.String()} {
		if err := os.WriteFile(filepath.Join(*out, name), []byte(s), 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("queries: %d (ported %d, unported in assigned codes %d, vacant %d)\n", q.Len(), q.Hits, q.MissAssigned, q.MissVacant)
	return nil
}

// pdbLoad sends version 1 queries from several UDP sockets, each keeping
// up to window queries outstanding, for a fixed time; it reports answers
// per second and the round-trip time's percentiles. A query unanswered
// after 200 ms is counted lost and its slot reused. Each burst of queries
// leaves as one segmented send (-segment, Linux's UDP_SEGMENT): the server
// receives the same datagrams, and the client, which shares the cores with
// the server, pays the send path once per burst.
func pdbLoad(args []string) error {
	fs := flag.NewFlagSet("pdb", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:5574", "pdb server")
	src := fs.String("src", "", "source directory the table was built from")
	d := fs.Duration("d", 10*time.Second, "how long to load")
	clients := fs.Int("clients", 2, "sockets, each in its own goroutine")
	window := fs.Int("window", 64, "queries outstanding per socket")
	segment := fs.Bool("segment", true, "send each burst of equal-sized queries as one UDP_SEGMENT send (Linux)")
	fs.Parse(args)
	q, err := makeQueries(*src, 1<<16)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), *d)
	defer cancel()
	var (
		answered, lost, bad atomic.Int64
		mu                  sync.Mutex
		rtts                []time.Duration
		wg                  sync.WaitGroup
	)
	start := time.Now()
	for c := range *clients {
		conn, err := net.Dial("udp", *addr)
		if err != nil {
			return err
		}
		defer conn.Close()
		wg.Add(1)
		pc := ipv4.NewPacketConn(conn.(*net.UDPConn))
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 1<<20)
			sent := make([]time.Time, 1<<16) // by id
			inflight := 0
			next := c * 997
			// Batch I/O on the client too: it shares the cores with the
			// server, and a system call per query would measure the client.
			out := make([]ipv4.Message, *window)
			in := make([]ipv4.Message, *window)
			seg := [1]ipv4.Message{{Buffers: make([][]byte, 0, *window)}}
			for i := range out {
				out[i].Buffers = [][]byte{make([]byte, 0, 64)}
				in[i].Buffers = [][]byte{make([]byte, 512)}
			}
			for ctx.Err() == nil {
				k := 0
				// Refill when half the window is answered, so that each
				// system call carries many queries.
				for ; inflight <= *window/2 && inflight+k < *window && k < len(out); k++ {
					id := uint16(next)
					out[k].Buffers[0], _ = appendPDBRequest(out[k].Buffers[0][:0], id, q.Canonical[next&(len(q.Canonical)-1)])
					next++
					sent[id] = time.Now()
				}
				msgs := out[:k]
				if *segment && k > 1 && sameLen(out[:k]) {
					// One segmented send: the kernel cuts it into the k
					// queries, the server receives k datagrams.
					seg[0].Buffers = seg[0].Buffers[:0]
					for i := range k {
						seg[0].Buffers = append(seg[0].Buffers, out[i].Buffers[0])
					}
					seg[0].OOB = segmentOOB(len(out[0].Buffers[0]))
					msgs = seg[:]
				}
				for w := 0; w < len(msgs); {
					m, err := pc.WriteBatch(msgs[w:], 0)
					if err != nil {
						bad.Add(int64(k))
						break
					}
					w += m
				}
				inflight += k
				conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
				n, err := pc.ReadBatch(in, 0)
				if err != nil {
					var ne net.Error
					if errors.As(err, &ne) && ne.Timeout() {
						lost.Add(int64(inflight))
						inflight = 0
						continue
					}
					bad.Add(1)
					continue
				}
				now := time.Now()
				for i := range n {
					rep, err := parsePDBReply(in[i].Buffers[0][:in[i].N])
					if err != nil {
						bad.Add(1)
						continue
					}
					// An answer that arrives after its query was
					// counted lost leaves inflight as it is.
					inflight = max(inflight-1, 0)
					answered.Add(1)
					if len(local) < cap(local) {
						local = append(local, now.Sub(sent[rep.ID]))
					}
				}
			}
			mu.Lock()
			rtts = append(rtts, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	slices.Sort(rtts)
	pct := func(p float64) time.Duration {
		if len(rtts) == 0 {
			return 0
		}
		return rtts[int(p*float64(len(rtts)-1))]
	}
	fmt.Printf("pdb: answered=%d qps=%.0f lost=%d bad=%d p50_us=%.1f p99_us=%.1f clients=%d window=%d seconds=%.1f\n",
		answered.Load(), float64(answered.Load())/el, lost.Load(), bad.Load(),
		float64(pct(.5).Nanoseconds())/1e3, float64(pct(.99).Nanoseconds())/1e3, *clients, *window, el)
	return nil
}

func sameLen(ms []ipv4.Message) bool {
	for _, m := range ms[1:] {
		if len(m.Buffers[0]) != len(ms[0].Buffers[0]) {
			return false
		}
	}
	return true
}

// segmentOOB is the UDP_SEGMENT control message for segments of size bytes.
func segmentOOB(size int) []byte {
	oob := make([]byte, unix.CmsgSpace(2))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	h.Level, h.Type = unix.SOL_UDP, unix.UDP_SEGMENT
	h.SetLen(unix.CmsgLen(2))
	binary.NativeEndian.PutUint16(oob[unix.CmsgLen(0):], uint16(size))
	return oob
}

// lookup measures lrn.Lookup on the queries in-process: one goroutine,
// then GOMAXPROCS goroutines.
func lookup(args []string) error {
	fs := flag.NewFlagSet("lookup", flag.ExitOnError)
	path := fs.String("db", "", "table")
	src := fs.String("src", "", "source directory the table was built from")
	d := fs.Duration("d", 5*time.Second, "how long each measurement runs")
	fs.Parse(args)
	q, err := makeQueries(*src, 1<<16)
	if err != nil {
		return err
	}
	// Open reads beside the server run.sh started, the table's writer.
	db, err := format.Open(*path)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, procs := range []int{1, runtime.GOMAXPROCS(0)} {
		var total atomic.Int64
		var wg sync.WaitGroup
		deadline := time.Now().Add(*d)
		start := time.Now()
		for p := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := int64(0)
				for i := p * 4099; ; i++ {
					if i&1023 == 0 && time.Now().After(deadline) {
						break
					}
					_, _ = lrn.Lookup(db, q.Canonical[i&(len(q.Canonical)-1)], lrn.Options{})
					n++
				}
				total.Add(n)
			}()
		}
		wg.Wait()
		fmt.Printf("lookup: goroutines=%d qps=%.0f\n", procs, float64(total.Load())/time.Since(start).Seconds())
	}
	return nil
}
