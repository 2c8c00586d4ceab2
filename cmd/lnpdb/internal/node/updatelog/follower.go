package updatelog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/metric"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/vfs"
)

// readLimit is how many entries one read of the log returns.
const readLimit = 1000

// maxApply is how many updates of consecutive entries go to the journal as
// one batch (one fsync) while catching up.
const maxApply = 100000

// Config configures a Follower. DB, Node and Log or DSN are required.
type Config struct {
	// Log is the log to follow, or nil for the Follower to open DSN
	// itself: then it starts even while PostgreSQL cannot be reached,
	// refusing posts and retrying in the background until it can.
	Log *Log
	DSN string
	// Schema holds the log's tables when the Follower opens DSN: see
	// OpenIn; "" is the connection's search_path.
	Schema string
	DB     *format.DB
	// Node names this node in the log (who posted a batch, who applied
	// how far); unique among the nodes that share the log.
	Node   string
	Logger *slog.Logger // nil discards
	// Poll is how often the log is read when no notification came: the
	// fallback for notifications missed. 0 is 1 s; while the LISTEN
	// connection is down, a quarter of it.
	Poll time.Duration
	// Applied is called after each run of applied batches (the live
	// runner's compaction threshold).
	Applied func()
	// Registerer receives the metrics; nil registers none.
	Registerer prometheus.Registerer

	fs vfs.FS // the state file's; nil is vfs.Default (tests fail it)
}

// Follower applies the log into one table, in order, and answers posts of
// new batches. Its methods are safe for concurrent use.
type Follower struct {
	lp      atomic.Pointer[Log] // nil until the log is open
	ownLog  bool                // opened from DSN: closed by Stop
	db      *format.DB
	node    string
	log     *slog.Logger
	poll    time.Duration
	onApply func()
	state   string // the state file
	fs      vfs.FS
	m       *metrics
	tableID string // the table whose refusals skipped holds (follow's own)
	// unrecorded: the state file lacks the latest position (follow's own).
	unrecorded bool

	applied, head atomic.Int64
	pgUp          atomic.Bool
	listening     atomic.Bool
	refused       atomic.Int64
	lastErr       atomic.Pointer[string]

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when applied advances
	skipped []int64       // batches up to applied the table refused, ascending
	stateN  atomic.Int64  // counts changes of applied and skipped, for the reporter

	wake   chan struct{}
	report chan struct{} // wakes the reporter
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start reads the node's recorded position and starts following the log.
// A position recorded for another log (a recreated database) starts from
// the beginning: re-applying batches is harmless (see the package doc).
func Start(cfg Config) (*Follower, error) {
	if (cfg.Log == nil && cfg.DSN == "") || cfg.DB == nil || cfg.Node == "" {
		return nil, errors.New("updatelog: Config.DB, Node and Log or DSN are required")
	}
	f := &Follower{db: cfg.DB, node: cfg.Node, log: cfg.Logger, poll: cfg.Poll,
		onApply: cfg.Applied, state: StatePath(cfg.DB.Path()), fs: cfg.fs,
		changed: make(chan struct{}), wake: make(chan struct{}, 1), report: make(chan struct{}, 1)}
	if f.log == nil {
		f.log = slog.New(slog.DiscardHandler)
	}
	if f.poll <= 0 {
		f.poll = time.Second
	}
	if f.fs == nil {
		f.fs = vfs.Default
	}
	st, err := readState(f.fs, f.state)
	if err != nil {
		return nil, err
	}
	f.applied.Store(st.Seq)
	f.skipped = st.Skipped
	f.stateN.Store(1)
	f.head.Store(st.Seq)
	if f.m, err = newMetrics(cfg.Registerer, f); err != nil {
		return nil, err
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	l := cfg.Log
	if l == nil {
		f.ownLog = true
		if l, err = OpenIn(f.ctx, cfg.DSN, cfg.Schema); err != nil {
			if !unreachable(err) {
				f.cancel()
				return nil, err
			}
			msg := err.Error()
			f.lastErr.Store(&msg)
			f.log.Error("update log unreachable at start: updates are refused, lookups go on from the local table; retrying", "error", err)
			f.wg.Go(func() { f.connect(cfg.DSN, cfg.Schema, st) })
			return f, nil
		}
	}
	f.run(l, st)
	return f, nil
}

// unreachable tells an error of a server that could not be reached (or is
// starting or stopping) from one of configuration.
func unreachable(err error) bool {
	var ne net.Error
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &ne), errors.Is(err, context.DeadlineExceeded), errors.Is(err, syscall.ECONNREFUSED):
		return true
	case errors.As(err, &pe):
		return pe.Code == "57P03" || pe.Code == "57P01" // cannot_connect_now, admin_shutdown
	}
	return false
}

// connect opens the log at dsn in schema, retrying until it can or Stop,
// then follows it.
func (f *Follower) connect(dsn, schema string, st state) {
	pause := 500 * time.Millisecond
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
		l, err := OpenIn(f.ctx, dsn, schema)
		if err != nil {
			msg := err.Error()
			f.lastErr.Store(&msg)
			continue
		}
		f.log.Info("update log reachable: following it", "log", l.ID(), "applied_seq", st.Seq)
		f.run(l, st)
		return
	}
}

// run follows l from st.
func (f *Follower) run(l *Log, st state) {
	if st.Seq > 0 && st.Log != l.ID() {
		f.log.Warn("the recorded update log position belongs to another log; applying this log from its start",
			"state", f.state, "recorded_log", st.Log, "recorded_seq", st.Seq, "log", l.ID())
		f.applied.Store(0)
		f.head.Store(0)
		f.mu.Lock()
		f.skipped = nil
		f.mu.Unlock()
	}
	f.lastErr.Store(nil)
	f.pgUp.Store(true)
	f.lp.Store(l)
	f.report <- struct{}{} // the recorded position, for a node that has nothing to apply
	f.wg.Go(f.listen)
	f.wg.Go(f.follow)
	f.wg.Go(f.reporter)
}

// Stop stops following and waits until the follower has; a batch being
// applied is finished first. A log the Follower opened is closed.
func (f *Follower) Stop() {
	f.cancel()
	f.wg.Wait()
	if l := f.lp.Load(); l != nil && f.ownLog {
		l.Close()
	}
}

// LogID names the log followed; empty until it is open.
func (f *Follower) LogID() string {
	if l := f.lp.Load(); l != nil {
		return l.ID()
	}
	return ""
}

// Applied is the last sequence of the log this node has passed: applied
// to the table, or refused by it (Skipped).
func (f *Follower) Applied() int64 { return f.applied.Load() }

// Skipped returns the batches up to Applied that the table refused: they
// are not in it. A table that gains what they lacked (reloaded, or pulled
// from an origin) applies them then, with every batch after them again.
func (f *Follower) Skipped() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.skipped)
}

func (f *Follower) isSkipped(seq int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, found := slices.BinarySearch(f.skipped, seq)
	return found
}

// kick wakes the follower now.
func (f *Follower) kick() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// WaitApplied waits until the table has the log up to seq, or ctx ends.
func (f *Follower) WaitApplied(ctx context.Context, seq int64) error {
	for {
		f.mu.Lock()
		ch := f.changed
		f.mu.Unlock()
		if f.applied.Load() >= seq {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// record writes the position and the skipped batches to the state file;
// after a failure, catchUp writes them again until it succeeds.
func (f *Follower) record(l *Log, seq int64, skipped []int64) error {
	err := writeState(f.fs, f.state, state{Log: l.ID(), Seq: seq, Skipped: skipped})
	f.unrecorded = err != nil
	return err
}

// advanced records a new position and set of skipped batches in memory,
// wakes the waiters and the reporter.
func (f *Follower) advanced(seq int64, skipped []int64) {
	f.mu.Lock()
	f.skipped = skipped
	f.applied.Store(seq)
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
	f.stateN.Add(1)
	select {
	case f.report <- struct{}{}:
	default:
	}
}

// listen keeps a LISTEN connection open and wakes the follower on each
// notification, reconnecting with a growing pause while it cannot.
func (f *Follower) listen() {
	pause := 100 * time.Millisecond
	for f.ctx.Err() == nil {
		c, err := f.lp.Load().listen(f.ctx)
		if err != nil {
			f.listening.Store(false)
			select {
			case <-f.ctx.Done():
				return
			case <-time.After(pause):
			}
			pause = min(2*pause, 5*time.Second)
			continue
		}
		pause = 100 * time.Millisecond
		f.listening.Store(true)
		f.kick() // whatever was appended while not listening
		for {
			n, err := c.WaitForNotification(f.ctx)
			if err != nil {
				break
			}
			if seq, err := strconv.ParseInt(n.Payload, 10, 64); err == nil && seq > f.head.Load() {
				f.head.Store(seq)
			}
			f.kick()
		}
		f.listening.Store(false)
		c.Close(context.Background())
		if f.ctx.Err() == nil {
			f.log.Warn("update log: the LISTEN connection was lost; polling until it is back")
		}
	}
}

// follow reads and applies the log until Stop: at once when woken, else
// every poll interval.
func (f *Follower) follow() {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		if err := f.retrySkipped(); err != nil && f.ctx.Err() == nil {
			f.log.Warn("update log: re-applying the batches this table refused failed; retrying", "error", err)
		}
		more, err := f.catchUp()
		if err != nil {
			msg := err.Error()
			f.lastErr.Store(&msg)
		}
		wait := f.poll
		switch {
		case more && err == nil:
			wait = 0
		case !f.listening.Load() || err != nil:
			wait = f.poll / 4
		}
		t.Reset(wait)
		select {
		case <-f.ctx.Done():
			return
		case <-f.wake:
		case <-t.C:
		}
	}
}

// reporter tells the log how far this node has passed it and which batches
// it skipped (for ?wait=N), apart from the applying, which never waits for
// it: the latest state only, once per change, retried while the log is
// unreachable.
func (f *Follower) reporter() {
	var reported int64
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-f.report:
		}
		for n := f.stateN.Load(); n != reported; n = f.stateN.Load() {
			f.mu.Lock()
			seq, skipped := f.applied.Load(), f.skipped
			f.mu.Unlock()
			if err := f.lp.Load().ReportApplied(f.ctx, f.node, seq, skipped); err != nil {
				if f.ctx.Err() != nil {
					return
				}
				f.log.Debug("update log: reporting the applied position failed", "applied_seq", seq, "error", err)
				select {
				case <-f.ctx.Done():
					return
				case <-time.After(f.poll / 4):
				}
				continue
			}
			reported = n
		}
	}
}

// catchUp applies what the log has after the table's position, up to one
// read; more is true when the log holds more.
func (f *Follower) catchUp() (more bool, err error) {
	from := f.applied.Load()
	l := f.lp.Load()
	entries, head, err := l.Read(f.ctx, from, readLimit)
	if err != nil {
		if f.ctx.Err() != nil {
			return false, nil
		}
		if f.pgUp.Swap(false) {
			f.log.Error("update log unreachable: updates are refused, lookups go on from the local table", "error", err)
		}
		return false, err
	}
	if !f.pgUp.Swap(true) {
		f.log.Info("update log reachable again", "applied_seq", from, "head_seq", head)
	}
	if head > f.head.Load() {
		f.head.Store(head)
	}
	if len(entries) == 0 {
		if f.unrecorded {
			// The last position could not be recorded: again, until
			// the disk takes it.
			if err := f.record(l, f.applied.Load(), f.Skipped()); err != nil {
				return false, err
			}
		}
		f.lastErr.Store(nil)
		return false, nil
	}
	last, refused, err := f.apply(entries)
	if last > from {
		// The journal has them (fsync'd): record the position, then
		// tell the log and the waiters.
		skipped := append(f.Skipped(), refused...)
		if werr := f.record(l, last, skipped); werr != nil && err == nil {
			err = werr
		}
		f.advanced(last, skipped)
		if f.onApply != nil {
			f.onApply()
		}
	}
	if err != nil {
		return false, err
	}
	f.lastErr.Store(nil)
	return len(entries) == readLimit, nil
}

// apply applies entries in order and returns the last sequence passed and
// the ones among them the table refused. Consecutive entries go to the
// journal together (the last update of a number wins within a batch as
// across batches); a group refused as invalid is applied entry by entry,
// and an entry the table refuses is skipped with an error log line: this
// table lacks what the posting node's table had (a new SPID), and holding
// the log back for it would stop every later update too. A skipped batch is
// not counted as applied by this node (Log.AppliedBy), and is applied once
// the table takes it (retrySkipped).
func (f *Follower) apply(entries []Entry) (last int64, refused []int64, err error) {
	last = entries[0].Seq - 1
	type decoded struct {
		seq int64
		ups []format.Update
	}
	var group []decoded
	n := 0
	flush := func() error {
		if len(group) == 0 {
			return nil
		}
		all := make([]format.Update, 0, n)
		for _, d := range group {
			all = append(all, d.ups...)
		}
		_, err := f.db.ApplyBatch(all, "")
		if errors.Is(err, format.ErrInvalidUpdate) && len(group) > 1 {
			for _, d := range group {
				ok, err := f.applyOne(d.seq, d.ups)
				if err != nil {
					return err
				}
				if !ok {
					refused = append(refused, d.seq)
				}
				last = d.seq
			}
			group, n = group[:0], 0
			return nil
		}
		if err != nil && !errors.Is(err, format.ErrInvalidUpdate) {
			return err
		}
		if err != nil {
			f.refuse(group[0].seq, err)
			refused = append(refused, group[0].seq)
		} else {
			f.m.batches.Add(float64(len(group)))
		}
		last = group[len(group)-1].seq
		group, n = group[:0], 0
		return nil
	}
	for i := range entries {
		e := &entries[i]
		ups, err := e.Updates()
		if err != nil {
			if ferr := flush(); ferr != nil {
				return last, refused, ferr
			}
			f.refuse(e.Seq, err)
			refused = append(refused, e.Seq)
			last = e.Seq
			continue
		}
		if n+len(ups) > maxApply {
			if err := flush(); err != nil {
				return last, refused, err
			}
		}
		group = append(group, decoded{e.Seq, ups})
		n += len(ups)
	}
	if err := flush(); err != nil {
		return last, refused, err
	}
	return last, refused, nil
}

// applyOne applies one batch; ok is false when the table refused it.
func (f *Follower) applyOne(seq int64, ups []format.Update) (ok bool, err error) {
	_, err = f.db.ApplyBatch(ups, "")
	switch {
	case err == nil:
		f.m.batches.Inc()
		return true, nil
	case errors.Is(err, format.ErrInvalidUpdate):
		f.refuse(seq, err)
		return false, nil
	}
	return false, err
}

func (f *Follower) refuse(seq int64, err error) {
	f.refused.Add(1)
	f.m.refused.Inc()
	f.log.Error("update log: this table refuses a batch the posting node accepted; skipped (not applied here, so this node differs from the others for its numbers until its table takes it)",
		"seq", seq, "table", f.db.Path(), "error", err)
}

// retryChunk is how many skipped batches retrySkipped reads at once.
const retryChunk = 200

// retrySkipped applies the skipped batches once the table takes them: when
// the table is another file than the last time it looked (reloaded,
// pulled, compacted, or at start), it checks the skipped batches against
// it, and from the first one it now takes it applies the log again, in
// order, up to the position: a skipped batch applied alone would undo the
// later batches that set the same numbers, whereas the run applied again
// in order leaves every number as the last batch of the log set it (the
// package doc). Those the table still refuses stay skipped.
func (f *Follower) retrySkipped() error {
	id := f.db.Info().ID
	if id == f.tableID {
		return nil
	}
	l := f.lp.Load()
	skipped := f.Skipped()
	var from int64
	for i := 0; i < len(skipped) && from == 0; i += retryChunk {
		entries, err := l.Get(f.ctx, skipped[i:min(i+retryChunk, len(skipped))])
		if err != nil {
			return err
		}
		for j := range entries {
			ups, err := entries[j].Updates()
			if err == nil && f.db.CheckBatch(ups) == nil {
				from = entries[j].Seq
				break
			}
		}
	}
	if from == 0 {
		f.tableID = id
		return nil
	}
	end := f.applied.Load()
	var refused []int64
	for pos := from - 1; pos < end; {
		entries, _, err := l.Read(f.ctx, pos, readLimit)
		if err != nil {
			return err
		}
		k := 0
		for k < len(entries) && entries[k].Seq <= end {
			k++
		}
		if k == 0 {
			break
		}
		last, ref, err := f.apply(entries[:k])
		refused = append(refused, ref...)
		if err != nil {
			return err // the table differs: all of it again next time
		}
		pos = last
	}
	kept := append(skipped[:0:0], skipped[:firstFrom(skipped, from)]...)
	kept = append(kept, refused...)
	if err := f.record(l, end, kept); err != nil {
		f.log.Warn("update log: recording the re-applied batches failed; a restart applies them again", "error", err)
	}
	f.advanced(end, kept)
	f.tableID = id
	f.log.Info("update log: the table now takes batches it had refused; applied the log again from the first of them",
		"from_seq", from, "to_seq", end, "applied_now", len(skipped)-len(kept), "still_skipped", len(kept))
	if f.onApply != nil {
		f.onApply()
	}
	return nil
}

// firstFrom returns the index of the first of the ascending seqs at or
// after from.
func firstFrom(seqs []int64, from int64) int {
	i, _ := slices.BinarySearch(seqs, from)
	return i
}

// Result is the answer to a post.
type Result struct {
	Entry
	// Pending is this node's number of numbers awaiting compaction.
	Pending int
	// Nodes is how many nodes had applied the batch when Post returned;
	// Complete is true when that is the number asked for.
	Nodes    int
	Complete bool
	// Refused names the nodes known, when Post returned, to have passed
	// the batch without applying it (their table refused it).
	Refused []string
}

// Post checks a batch against this node's table, appends it to the log
// (see Log.Append) and waits until wait nodes, this one first, have
// applied it, or until ctx ends, or until every node the log knows has
// passed it with some having refused it: then it returns with Complete
// false. A batch the table refuses is refused with the error of
// format.CheckBatch and never logged.
func (f *Follower) Post(ctx context.Context, ups []format.Update, key string, wait int) (Result, error) {
	if err := f.db.CheckBatch(ups); err != nil {
		return Result{}, err
	}
	l := f.lp.Load()
	if l == nil {
		f.m.appends.WithLabelValues("unavailable").Inc()
		return Result{}, fmt.Errorf("%w: not connected yet", ErrUnavailable)
	}
	e, err := l.Append(ctx, f.node, key, EncodeFeed(ups))
	switch {
	case errors.Is(err, ErrUnavailable):
		f.m.appends.WithLabelValues("unavailable").Inc()
		return Result{}, err
	case err != nil:
		return Result{}, err
	case e.Replayed:
		f.m.appends.WithLabelValues("replayed").Inc()
	default:
		f.m.appends.WithLabelValues("ok").Inc()
		if e.Seq > f.head.Load() {
			f.head.Store(e.Seq)
		}
	}
	r := Result{Entry: e}
	if wait > 0 {
		f.kick()
		if f.WaitApplied(ctx, e.Seq) == nil {
			// This node knows its own outcome before it reports it.
			if f.isSkipped(e.Seq) {
				r.Refused = []string{f.node}
			} else {
				r.Nodes = 1
			}
		}
	}
	self := func(n string) bool { return n == f.node }
	selfApplied := r.Nodes == 1
wait:
	for r.Nodes+len(r.Refused) > 0 && r.Nodes < wait {
		// Other nodes report their state after applying; this one may
		// not have reported yet, and knows its own.
		if a, err := l.AppliedBy(ctx, e.Seq); err == nil {
			nodes, refused := len(slices.DeleteFunc(a.Applied, self)), slices.DeleteFunc(a.Refused, self)
			if selfApplied {
				nodes++
			} else {
				refused = append(refused, f.node)
			}
			r.Nodes, r.Refused = max(r.Nodes, nodes), refused
			if r.Nodes >= wait || (len(slices.DeleteFunc(a.Behind, self)) == 0 && len(r.Refused) > 0) {
				break // as asked, or no node left that could still apply it
			}
		}
		select {
		case <-ctx.Done():
			break wait
		case <-time.After(10 * time.Millisecond):
		}
	}
	slices.Sort(r.Refused)
	r.Complete = r.Nodes >= wait
	r.Pending = f.db.PendingUpdates()
	return r, nil
}

// Status is the node's place in the log, for /api/v1/status.
type Status struct {
	Node       string `json:"node"`
	AppliedSeq int64  `json:"applied_seq"`
	HeadSeq    int64  `json:"head_seq"` // as last seen: stale while PostgreSQL is unreachable
	Lag        int64  `json:"lag"`      // batches in the log not applied here
	// Postgres is "ok", or "unavailable" while the log cannot be read.
	Postgres       string `json:"postgres"`
	Listening      bool   `json:"listening"`       // woken by LISTEN/NOTIFY, not polling alone
	RefusedBatches int64  `json:"refused_batches"` // refusals since start (a batch refused again counts again)
	// SkippedBatches counts the batches up to AppliedSeq this table refused
	// and therefore does not hold; SkippedSeqs lists the first of them.
	SkippedBatches int     `json:"skipped_batches"`
	SkippedSeqs    []int64 `json:"skipped_seqs,omitempty"`
	LastError      string  `json:"last_error,omitempty"`
}

// maxStatusSkipped is how many skipped sequences Status lists.
const maxStatusSkipped = 100

// Status reports the node's place in the log.
func (f *Follower) Status() Status {
	st := Status{Node: f.node, AppliedSeq: f.applied.Load(), HeadSeq: f.head.Load(),
		Postgres: "ok", Listening: f.listening.Load(), RefusedBatches: f.refused.Load()}
	st.Lag = max(st.HeadSeq-st.AppliedSeq, 0)
	f.mu.Lock()
	st.SkippedBatches = len(f.skipped)
	if len(f.skipped) > 0 {
		st.SkippedSeqs = slices.Clone(f.skipped[:min(len(f.skipped), maxStatusSkipped)])
	}
	f.mu.Unlock()
	if !f.pgUp.Load() {
		st.Postgres = "unavailable"
	}
	if e := f.lastErr.Load(); e != nil {
		st.LastError = *e
	}
	return st
}

// Available reports whether the log could be read at the last attempt.
func (f *Follower) Available() bool { return f.pgUp.Load() }

type metrics struct {
	batches, refused prometheus.Counter
	appends          *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, f *Follower) (*metrics, error) {
	m := &metrics{
		batches: metric.Counter("lnpdb_update_log_batches_applied_total",
			"Batches of the shared update log applied to this node's table."),
		refused: metric.Counter("lnpdb_update_log_batches_refused_total",
			"Batches of the shared update log this node's table refused (skipped; logged)."),
		appends: metric.CounterVec("lnpdb_update_log_appends_total",
			"Batches posted to this node for the shared update log, by result: ok, replayed (idempotency key), unavailable (PostgreSQL unreachable: 503).", "result"),
	}
	if err := metric.Register(reg, m.batches, m.refused, m.appends,
		metric.GaugeFunc("lnpdb_update_log_applied_seq", "The last sequence number of the shared update log applied to this node's table.",
			func() float64 { return float64(f.applied.Load()) }),
		metric.GaugeFunc("lnpdb_update_log_skipped_batches", "Batches of the shared update log this node passed without applying them, because its table refused them (an SPID it lacks): its answers differ from the other nodes' for their numbers.",
			func() float64 { f.mu.Lock(); defer f.mu.Unlock(); return float64(len(f.skipped)) }),
		metric.GaugeFunc("lnpdb_update_log_head_seq", "The shared update log's highest sequence number, as last seen.",
			func() float64 { return float64(f.head.Load()) }),
		metric.GaugeFunc("lnpdb_update_log_lag", "Batches of the shared update log not yet applied here.",
			func() float64 { return float64(max(f.head.Load()-f.applied.Load(), 0)) }),
		metric.GaugeFunc("lnpdb_update_log_postgres_up", "1 when the last read of the shared update log in PostgreSQL succeeded, else 0.",
			func() float64 { return b2f(f.pgUp.Load()) }),
		metric.GaugeFunc("lnpdb_update_log_listening", "1 while a LISTEN connection wakes this node on new batches, else 0 (polling).",
			func() float64 { return b2f(f.listening.Load()) }),
	); err != nil {
		return nil, fmt.Errorf("updatelog: %w", err)
	}
	return m, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
