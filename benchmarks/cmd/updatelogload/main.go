// Command updatelogload posts one-update feeds to one lnpdb serve node at a
// fixed rate and, with -watch, measures how long each takes to be applied
// on another node that follows the same shared update log: from the moment
// the post is sent to the first time the other node's /api/v1/status shows
// an applied sequence at or past the batch's (the node applies a batch to
// its table before it advances that number, so the figure errs long).
//
//	updatelogload -post http://node1 -watch http://node3 -admin KEY -rows FILE -rate 1000 -duration 10s
//
// FILE holds update rows without a header (U,tn,lrn,spid,activated_at),
// posted one per request in turn. It prints one line, "RESULT <json>".
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	post := flag.String("post", "", "base URL of the node updates are posted to")
	watch := flag.String("watch", "", "base URL of the node whose applied sequence is watched (none: post only)")
	admin := flag.String("admin", "", "admin key")
	rowsFile := flag.String("rows", "", "file of update rows, no header")
	rate := flag.Int("rate", 1000, "posts per second")
	dur := flag.Duration("duration", 10*time.Second, "how long to post")
	workers := flag.Int("workers", 64, "posts in flight at most")
	flag.Parse()
	if *post == "" || *admin == "" || *rowsFile == "" || *rate < 1 {
		flag.Usage()
		os.Exit(2)
	}
	rows, err := readRows(*rowsFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: *workers}}

	// The watcher: every change of the watched node's applied sequence,
	// with when it was first seen.
	type seen struct {
		at  time.Time
		seq int64
	}
	var (
		watchMu sync.Mutex
		changes []seen
		stopW   = make(chan struct{})
		watched = make(chan struct{})
	)
	if *watch != "" {
		go func() {
			defer close(watched)
			var last int64 = -1
			for {
				select {
				case <-stopW:
					return
				default:
				}
				seq, err := appliedSeq(client, *watch)
				if err == nil && seq != last {
					watchMu.Lock()
					changes = append(changes, seen{time.Now(), seq})
					watchMu.Unlock()
					last = seq
				}
				time.Sleep(500 * time.Microsecond)
			}
		}()
	} else {
		close(watched)
	}

	type sent struct {
		at  time.Time
		seq int64
	}
	var (
		mu      sync.Mutex
		posts   []sent
		failed  atomic.Int64
		skipped atomic.Int64
		next    atomic.Int64
	)
	work := make(chan struct{}, *workers)
	var wg sync.WaitGroup
	for range *workers {
		wg.Go(func() {
			for range work {
				row := rows[int(next.Add(1)-1)%len(rows)]
				at := time.Now()
				seq, err := postRow(client, *post, *admin, row)
				if err != nil {
					failed.Add(1)
					fmt.Fprintln(os.Stderr, "post:", err)
					continue
				}
				mu.Lock()
				posts = append(posts, sent{at, seq})
				mu.Unlock()
			}
		})
	}
	start := time.Now()
	tick := time.NewTicker(time.Second / time.Duration(*rate))
	for time.Since(start) < *dur {
		<-tick.C
		select {
		case work <- struct{}{}:
		default:
			skipped.Add(1) // every worker busy: the rate is not reached
		}
	}
	tick.Stop()
	close(work)
	wg.Wait()
	elapsed := time.Since(start)
	if *watch != "" {
		var maxSeq int64
		for _, p := range posts {
			maxSeq = max(maxSeq, p.seq)
		}
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			watchMu.Lock()
			done := len(changes) > 0 && changes[len(changes)-1].seq >= maxSeq
			watchMu.Unlock()
			if done {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		close(stopW)
	}
	<-watched

	res := map[string]any{
		"posted": len(posts), "failed": failed.Load(), "skipped": skipped.Load(),
		"rate": float64(len(posts)) / elapsed.Seconds(),
	}
	if *watch != "" {
		var lat []time.Duration
		for _, p := range posts {
			i, ok := slices.BinarySearchFunc(changes, p.seq, func(s seen, seq int64) int {
				switch {
				case s.seq < seq:
					return -1
				case s.seq > seq:
					return 1
				}
				return 0
			})
			if i < len(changes) && (ok || changes[i].seq >= p.seq) {
				lat = append(lat, changes[i].at.Sub(p.at))
			}
		}
		slices.Sort(lat)
		q := func(f float64) float64 {
			if len(lat) == 0 {
				return 0
			}
			return float64(lat[min(int(f*float64(len(lat))), len(lat)-1)].Microseconds()) / 1000
		}
		res["measured"], res["p50_ms"], res["p99_ms"], res["max_ms"] = len(lat), q(0.50), q(0.99), q(1)
	}
	b, _ := json.Marshal(res)
	fmt.Printf("RESULT %s\n", b)
}

func readRows(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			rows = append(rows, l)
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no rows", path)
	}
	return rows, sc.Err()
}

// postRow posts one row as a feed, answered as soon as it is durable in
// the shared log (wait=0), and returns its sequence number.
func postRow(c *http.Client, base, admin, row string) (int64, error) {
	req, _ := http.NewRequest("POST", base+"/admin/v1/updates?wait=0", strings.NewReader("action,tn,lrn,spid,activated_at\n"+row+"\n"))
	req.Header.Set("Content-Type", "text/csv")
	req.Header.Set("Authorization", "Bearer "+admin)
	res, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%d %s", res.StatusCode, b)
	}
	var body struct {
		Seq int64 `json:"seq"`
	}
	if err := json.Unmarshal(b, &body); err != nil || body.Seq == 0 {
		return 0, fmt.Errorf("no seq in %s", b)
	}
	return body.Seq, nil
}

func appliedSeq(c *http.Client, base string) (int64, error) {
	res, err := c.Get(base + "/api/v1/status")
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	var body struct {
		UpdateLog struct {
			AppliedSeq int64 `json:"applied_seq"`
		} `json:"update_log"`
	}
	err = json.NewDecoder(res.Body).Decode(&body)
	return body.UpdateLog.AppliedSeq, err
}
