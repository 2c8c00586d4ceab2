package billing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/webhook"
)

// Lookup jobs: lists of up to MaxJobNumbers numbers, answered in chunks by
// any serving process and paid by the same rules as every lookup (the
// free tier first, each number at its kind's price, only answers stored).
//
// A job's numbers are cut into chunks when it is made. A worker claims a
// chunk for a while ([Jobs.ClaimChunk]: a lease, claimed_until), and
// extends the claim while it works ([Jobs.RenewChunk]); its answers and their charge are committed together ([Jobs.CommitChunk]),
// and only by the claim that is current, so a worker killed mid-chunk
// loses its work and charges nothing, and the chunk is claimed again once
// the lease has passed. When the wallet cannot pay for an answer the
// chunk keeps what was paid for, and the job stops insufficient_balance
// until [Jobs.ResumeJob]. Answers are stored zstd-compressed, one part
// per commit, and read back in input order ([Jobs.JobResults]).

// MaxJobNumbers is the most numbers a job may hold.
const MaxJobNumbers = 1_000_000

// JobChunkSize is how many numbers a chunk holds unless the spec says.
const JobChunkSize = 10_000

// JobStatus is where a job stands.
type JobStatus string

// The statuses of a job. Queued, running and insufficient_balance jobs
// are unfinished; the others are final.
const (
	JobQueued              JobStatus = "queued"
	JobRunning             JobStatus = "running"
	JobSucceeded           JobStatus = "succeeded"
	JobFailed              JobStatus = "failed"
	JobCanceled            JobStatus = "canceled"
	JobInsufficientBalance JobStatus = "insufficient_balance"
)

// active reports whether chunks of a job in status s may be claimed.
func (s JobStatus) active() bool { return s == JobQueued || s == JobRunning }

// The lookup kinds a job may ask for.
var jobKinds = []string{"lrn", "cnam", "messaging", "trust"}

// JobSpec is what a job is made of.
type JobSpec struct {
	AccountID string
	// Kind is lrn, cnam, messaging or trust.
	Kind string
	// Enhanced and Messaging are the LRN lookup's options.
	Enhanced, Messaging bool
	// WebhookURL, when not "", is told of the job's end.
	WebhookURL string
	Numbers    []string
	// ChunkSize is the numbers per chunk; 0 means JobChunkSize.
	ChunkSize int
}

// JobLimits are an account's limits on making jobs; 0 is no limit.
type JobLimits struct {
	// MaxUnfinished is the most jobs an account may have queued or
	// running (a job that ran out of credit counts until it is resumed
	// or canceled).
	MaxUnfinished int
	// MaxNumbersPerHour is the most numbers the jobs an account made in
	// the last hour may hold together.
	MaxNumbersPerHour int64
}

// Job is a job as the store keeps it.
type Job struct {
	ID         string    `json:"id"`
	AccountID  string    `json:"account_id"`
	Kind       string    `json:"kind"`
	Enhanced   bool      `json:"enhanced"`
	Messaging  bool      `json:"messaging"`
	WebhookURL string    `json:"webhook_url"`
	Status     JobStatus `json:"status"`
	Total      int64     `json:"total"`
	// Done is how many numbers have their answer stored.
	Done int64 `json:"done"`
	// Paid is how many of them were charged (the free tier's included);
	// the others are invalid or unknown numbers, which cost nothing.
	Paid    int64     `json:"paid"`
	Free    int64     `json:"free"`
	Charged Micros    `json:"charged"`
	Chunks  int       `json:"chunks"`
	Created time.Time `json:"created"`
	// Finished is when the job last stopped (zero while it is queued or
	// running).
	Finished time.Time `json:"finished,omitzero"`
}

// JobView is a job as the API shows it and its webhook tells it.
type JobView struct {
	ID         string     `json:"id"`
	Status     JobStatus  `json:"status"`
	Kind       string     `json:"kind"`
	Total      int64      `json:"total"`
	Done       int64      `json:"done"`
	Charged    string     `json:"charged"`
	CreatedAt  lnpdb.Time `json:"created_at"`
	FinishedAt lnpdb.Time `json:"finished_at"` // null while queued or running
}

// View returns j as the API shows it: money as the usage report writes
// it, times as every answer does (to the second).
func (j Job) View() JobView {
	return JobView{ID: j.ID, Status: j.Status, Kind: j.Kind, Total: j.Total, Done: j.Done, Charged: j.Charged.String(),
		CreatedAt: lnpdb.Time{Time: j.Created.UTC().Truncate(time.Second)}, FinishedAt: lnpdb.Time{Time: j.Finished.UTC().Truncate(time.Second)}}
}

// JobChunk is a chunk claimed by a worker: the numbers still to answer.
type JobChunk struct {
	JobID     string
	AccountID string
	Seq       int
	// Offset is how many of the chunk's numbers were answered before.
	Offset  int
	Numbers []string
	// The job's lookup.
	Kind                string
	Enhanced, Messaging bool
	// Claim identifies this claim: a commit with another is refused.
	Claim string
	Until time.Time
}

// Jobs is the durable side of lookup jobs and their webhooks. Both stores
// implement it; every method is one transaction.
type Jobs interface {
	// CreateJob stores a new queued job, refused with ErrJobLimit past
	// lim (counted in the same transaction).
	CreateJob(ctx context.Context, spec JobSpec, lim JobLimits, now time.Time) (Job, error)
	// Job returns accountID's job id.
	Job(ctx context.Context, accountID, id string) (Job, error)
	// ListJobs returns accountID's jobs ("" for all), newest first, at
	// most limit (0: all).
	ListJobs(ctx context.Context, accountID string, limit int) ([]Job, error)
	// CancelJob stops an unfinished job (a final one is returned as it
	// is); a chunk being worked on is then not committed.
	CancelJob(ctx context.Context, accountID, id string, now time.Time) (Job, error)
	// ResumeJob queues again a job stopped insufficient_balance; other
	// statuses are ErrConflict.
	ResumeJob(ctx context.Context, accountID, id string, now time.Time) (Job, error)
	// ClaimChunk claims for lease the next chunk to answer (of the oldest
	// queued or running job), or returns nil when there is none.
	ClaimChunk(ctx context.Context, now time.Time, lease time.Duration) (*JobChunk, error)
	// RenewChunk extends c's claim to now+lease (and sets c.Until), so
	// that a worker slower than its lease keeps its chunk; a claim no
	// longer current (another worker claimed the chunk, or the job was
	// canceled or stopped) is refused with ErrClaimLost and nothing
	// changes.
	RenewChunk(ctx context.Context, c *JobChunk, now time.Time, lease time.Duration) error
	// CommitChunk stores the answers of c's numbers (lines[i] is the
	// answer of c.Numbers[i]; answered[i] says it is charged) and their
	// charge, together; lines past what the wallet pays are not stored
	// and the job stops insufficient_balance. A claim no longer current
	// (the lease passed and another worker claimed the chunk, or the job
	// was canceled) is refused with ErrClaimLost and nothing changes.
	CommitChunk(ctx context.Context, c *JobChunk, lines [][]byte, answered []bool, now time.Time) (Job, error)
	// JobResults calls fn with each number of accountID's job id and its
	// stored answer, in input order, up to the first number not answered
	// yet.
	JobResults(ctx context.Context, accountID, id string, fn func(number string, line []byte) error) error
	// DeleteJobs deletes the jobs that stopped (final, or out of
	// credit) before cutoff, with their answers, and the webhook
	// deliveries that ended before cutoff; it says how many jobs.
	DeleteJobs(ctx context.Context, cutoff time.Time) (int, error)

	// SetWebhookSecret sets accountID's webhook signing secret.
	SetWebhookSecret(ctx context.Context, accountID, secret string, now time.Time) error
	// WebhooksDue claims for webhook.Lease up to limit deliveries due at
	// now, with their account's current secret.
	WebhooksDue(ctx context.Context, now time.Time, limit int) ([]webhook.Delivery, error)
	// WebhookDone and WebhookFail end a delivery; WebhookRetry makes it
	// due again at next. attempts counts the attempt just made. An id no
	// longer pending is not an error.
	WebhookDone(ctx context.Context, id string, at time.Time, attempts int) error
	WebhookRetry(ctx context.Context, id string, next time.Time, attempts int, lastErr string) error
	WebhookFail(ctx context.Context, id string, at time.Time, attempts int, lastErr string) error
}

// The jobs' errors.
var (
	// ErrJobLimit refuses a job past the account's JobLimits.
	ErrJobLimit = errors.New("job limit reached")
	// ErrClaimLost refuses the commit or renewal of a chunk whose claim
	// is not current.
	ErrClaimLost = errors.New("the chunk's claim is no longer current")
)

var (
	_ Jobs = (*BoltStore)(nil)
	_ Jobs = (*PostgresStore)(nil)
)

// checkSpec checks what every store checks of a job before storing it.
func checkSpec(spec *JobSpec) error {
	if spec.Kind == "" {
		spec.Kind = "lrn"
	}
	ok := false
	for _, k := range jobKinds {
		ok = ok || k == spec.Kind
	}
	switch {
	case !ok:
		return fmt.Errorf("%w: kind %q: want one of %s", ErrInvalid, spec.Kind, strings.Join(jobKinds, ", "))
	case spec.Kind != "lrn" && (spec.Enhanced || spec.Messaging):
		return fmt.Errorf("%w: include_enhanced_lrn and messaging_lookup are options of an lrn job", ErrInvalid)
	case len(spec.Numbers) == 0 || len(spec.Numbers) > MaxJobNumbers:
		return fmt.Errorf("%w: a job holds 1 to %d numbers, not %d", ErrInvalid, MaxJobNumbers, len(spec.Numbers))
	case len(spec.WebhookURL) > 2000:
		return fmt.Errorf("%w: webhook_url is longer than 2000 bytes", ErrInvalid)
	}
	for _, n := range spec.Numbers {
		if strings.IndexByte(n, '\n') >= 0 {
			return fmt.Errorf("%w: a number holds a new line", ErrInvalid)
		}
	}
	if spec.ChunkSize <= 0 {
		spec.ChunkSize = JobChunkSize
	}
	return nil
}

// checkLimits applies lim to an account that has unfinished jobs and made
// jobs of recent numbers in the last hour.
func checkLimits(lim JobLimits, unfinished int, recent, adding int64) error {
	if lim.MaxUnfinished > 0 && unfinished >= lim.MaxUnfinished {
		return fmt.Errorf("%w: the account has %d unfinished jobs, the most allowed", ErrJobLimit, unfinished)
	}
	if lim.MaxNumbersPerHour > 0 && recent+adding > lim.MaxNumbersPerHour {
		return fmt.Errorf("%w: the account's jobs of the last hour hold %d numbers; %d more would pass the %d allowed an hour", ErrJobLimit, recent, adding, lim.MaxNumbersPerHour)
	}
	return nil
}

// newJob returns the job spec makes, and its chunks' inputs, compressed.
func newJob(spec *JobSpec, now time.Time) (Job, [][]byte, []int) {
	j := Job{ID: newID("job_"), AccountID: spec.AccountID, Kind: spec.Kind, Enhanced: spec.Enhanced, Messaging: spec.Messaging,
		WebhookURL: spec.WebhookURL, Status: JobQueued, Total: int64(len(spec.Numbers)), Created: now.UTC().Truncate(time.Microsecond)}
	var inputs [][]byte
	var sizes []int
	for i := 0; i < len(spec.Numbers); i += spec.ChunkSize {
		part := spec.Numbers[i:min(i+spec.ChunkSize, len(spec.Numbers))]
		inputs = append(inputs, compress([]byte(strings.Join(part, "\n"))))
		sizes = append(sizes, len(part))
	}
	j.Chunks = len(inputs)
	return j, inputs, sizes
}

// The codec of stored inputs and answers: zstd, one encoder and decoder
// for the process (both are safe for concurrent EncodeAll/DecodeAll).
var (
	zOnce sync.Once
	zEnc  *zstd.Encoder
	zDec  *zstd.Decoder
)

func codec() (*zstd.Encoder, *zstd.Decoder) {
	zOnce.Do(func() {
		zEnc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
		zDec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<30))
	})
	return zEnc, zDec
}

func compress(b []byte) []byte {
	enc, _ := codec()
	return enc.EncodeAll(b, nil)
}

func decompress(b []byte) ([]byte, error) {
	_, dec := codec()
	out, err := dec.DecodeAll(b, nil)
	if err != nil {
		return nil, fmt.Errorf("accounts store: a job's stored data: %w", err)
	}
	return out, nil
}

// chunkNumbers returns the numbers of a chunk's stored input from offset.
func chunkNumbers(input []byte, offset int) ([]string, error) {
	raw, err := decompress(input)
	if err != nil {
		return nil, err
	}
	all := strings.Split(string(raw), "\n")
	if offset > len(all) {
		return nil, fmt.Errorf("accounts store: a chunk answered past its end")
	}
	return all[offset:], nil
}

// chunkResults calls fn with each number of a chunk's stored input and
// its answer, from the chunk's stored parts, in order.
func chunkResults(input []byte, parts [][]byte, fn func(string, []byte) error) error {
	numbers, err := chunkNumbers(input, 0)
	if err != nil {
		return err
	}
	i := 0
	for _, p := range parts {
		raw, err := decompress(p)
		if err != nil {
			return err
		}
		for len(raw) > 0 {
			end := bytes.IndexByte(raw, '\n')
			if end < 0 {
				end = len(raw)
			}
			if i >= len(numbers) {
				return fmt.Errorf("accounts store: a chunk holds more answers than numbers")
			}
			if err := fn(numbers[i], raw[:end]); err != nil {
				return err
			}
			i++
			raw = raw[min(end+1, len(raw)):]
		}
	}
	return nil
}

// chunkCommit is what a store loads, under the account's and the job's
// locks, to commit a chunk, and what commitChunk decides it writes.
type chunkCommit struct {
	job       *Job
	status    Status // the account's
	balance   Micros
	freeTaken int64 // this month's
	prices    Prices
	// The chunk as stored: its claim, and how many were answered.
	claim string
	done  int
	size  int
	// Set by commitChunk:
	keep     int    // lines to store
	part     []byte // compressed, nil when keep is 0
	usage    []UsageRow
	spent    Micros
	free     int64
	recall   bool              // the wallet ran short: ask the leases back
	delivery *webhook.Delivery // the job stopped and has a webhook
}

// claimCurrent reports whether c is the current claim of its chunk, whose
// stored claim and count of answered numbers are claim and done, in a job
// of status: only such a claim may be renewed or committed.
func claimCurrent(c *JobChunk, status JobStatus, claim string, done int) bool {
	return claim != "" && claim == c.Claim && done == c.Offset && status.active()
}

// renewChunk applies a renewal of c at now to its chunk as stored (claim,
// done, in a job of status): the rule both stores share. It returns the
// claim's new end, and sets c.Until to it.
func renewChunk(c *JobChunk, status JobStatus, claim string, done int, now time.Time, lease time.Duration) (time.Time, error) {
	if !claimCurrent(c, status, claim, done) {
		return time.Time{}, ErrClaimLost
	}
	c.Until = now.Add(lease)
	return c.Until, nil
}

// commitChunk applies a chunk's answers to st: the one rule both stores
// share. The free tier pays first (for LRN), then the wallet; answers are
// kept in order up to the first the wallet cannot pay.
func commitChunk(c *JobChunk, lines [][]byte, answered []bool, now time.Time, st *chunkCommit) error {
	j := st.job
	switch {
	case len(lines) != len(answered) || len(lines) != len(c.Numbers):
		return fmt.Errorf("%w: %d answers for %d numbers", ErrInvalid, len(lines), len(c.Numbers))
	case !claimCurrent(c, j.Status, st.claim, st.done):
		return ErrClaimLost
	case c.Offset+len(lines) > st.size:
		return fmt.Errorf("%w: answers past the chunk's end", ErrInvalid)
	}
	for _, l := range lines {
		if bytes.IndexByte(l, '\n') >= 0 {
			return fmt.Errorf("%w: an answer holds a new line", ErrInvalid)
		}
	}
	kind, addon := jobCharge(j)
	price, addonPrice := st.prices[kind], Micros(0)
	if addon {
		addonPrice = st.prices[KindMessagingAddon]
	}
	freeLeft := max(FreeTier-st.freeTaken, 0)
	var paid, paidFree int64
	var credit Micros
	short := st.status != StatusActive
	keep := 0
	for ; keep < len(lines) && !short; keep++ {
		if !answered[keep] {
			continue
		}
		cost := price + addonPrice
		useFree := kind.Free() && freeLeft > 0
		if useFree {
			cost = addonPrice
		}
		if credit+cost > st.balance {
			short = true
			break
		}
		credit += cost
		paid++
		if useFree {
			freeLeft--
			paidFree++
		}
	}
	st.keep, st.spent, st.free = keep, credit, paidFree
	if keep > 0 {
		st.part = compress(bytes.Join(lines[:keep], []byte("\n")))
	}
	if paid > 0 {
		day := Day(now)
		st.usage = append(st.usage, UsageRow{AccountID: j.AccountID, Day: day, Kind: kind, Lookups: paid, Free: paidFree, Amount: credit - addonPrice*Micros(paid)})
		if addon {
			st.usage = append(st.usage, UsageRow{AccountID: j.AccountID, Day: day, Kind: KindMessagingAddon, Lookups: paid, Amount: addonPrice * Micros(paid)})
		}
	}
	st.balance -= credit
	st.freeTaken += paidFree
	j.Done += int64(keep)
	j.Paid += paid
	j.Free += paidFree
	j.Charged += credit
	j.Status = JobRunning
	switch {
	case st.status != StatusActive:
		j.Status = JobFailed
	case short:
		j.Status = JobInsufficientBalance
		st.recall = true
	case j.Done == j.Total:
		j.Status = JobSucceeded
	}
	if j.Status != JobRunning {
		return stopJob(j, now, st)
	}
	return nil
}

// stopJob marks j stopped at now and makes its webhook, if it has one.
func stopJob(j *Job, now time.Time, st *chunkCommit) error {
	j.Finished = now.UTC().Truncate(time.Microsecond)
	if j.WebhookURL == "" || j.Status == JobCanceled {
		return nil
	}
	typ := "job.completed"
	switch j.Status {
	case JobFailed:
		typ = "job.failed"
	case JobInsufficientBalance:
		typ = "job.insufficient_balance"
	}
	body, err := webhook.NewEvent(typ, j.Finished, j.View())
	if err != nil {
		return err
	}
	st.delivery = &webhook.Delivery{ID: webhook.NewID(), AccountID: j.AccountID, URL: j.WebhookURL, Body: body, CreatedAt: j.Finished}
	return nil
}

// jobCharge returns the kind a job's lookups are charged as, and whether
// the messaging add-on is charged with each.
func jobCharge(j *Job) (Kind, bool) {
	switch {
	case j.Kind != "lrn":
		return Kind(j.Kind), false
	case j.Enhanced:
		return KindLRNEnhanced, j.Messaging
	}
	return KindLRN, j.Messaging
}

// checkSecret checks a webhook secret before it is stored.
func checkSecret(secret string) error {
	if !strings.HasPrefix(secret, "whsec_") || len(secret) > 200 || !PlainText(secret) {
		return fmt.Errorf("%w: a webhook secret is whsec_ and base64", ErrInvalid)
	}
	return nil
}

// cancelJob stops an unfinished job.
func cancelJob(j *Job, now time.Time) {
	if j.Status.active() || j.Status == JobInsufficientBalance {
		j.Status = JobCanceled
		j.Finished = now.UTC().Truncate(time.Microsecond)
	}
}

// resumeJob queues again a job that ran out of credit.
func resumeJob(j *Job) error {
	if j.Status != JobInsufficientBalance {
		return fmt.Errorf("%w: job %s is %s; only a job stopped insufficient_balance resumes", ErrConflict, j.ID, j.Status)
	}
	j.Status, j.Finished = JobQueued, time.Time{}
	return nil
}

// clip shortens an error kept with a delivery.
func clip(s string) string {
	if len(s) > 500 {
		s = s[:500]
	}
	return s
}

// WebhookOutbox is the outbox of s as the webhook deliverer takes it.
func WebhookOutbox(s Jobs) webhook.Outbox { return outbox{s} }

type outbox struct{ s Jobs }

func (o outbox) Due(ctx context.Context, now time.Time, limit int) ([]webhook.Delivery, error) {
	return o.s.WebhooksDue(ctx, now, limit)
}

func (o outbox) Done(ctx context.Context, id string, at time.Time, attempts int) error {
	return o.s.WebhookDone(ctx, id, at, attempts)
}

func (o outbox) Retry(ctx context.Context, id string, next time.Time, attempts int, lastErr string) error {
	return o.s.WebhookRetry(ctx, id, next, attempts, lastErr)
}

func (o outbox) Fail(ctx context.Context, id string, at time.Time, attempts int, lastErr string) error {
	return o.s.WebhookFail(ctx, id, at, attempts, lastErr)
}
