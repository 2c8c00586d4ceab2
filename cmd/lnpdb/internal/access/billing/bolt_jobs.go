package billing

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/webhook"
)

var (
	bJobs       = []byte("jobs")        // job id → Job
	bJobQueue   = []byte("jobqueue")    // created (big-endian ns) id → job id, of queued and running jobs
	bJobChunks  = []byte("jobchunks")   // job id \0 seq (big-endian) → boltChunk
	bJobInputs  = []byte("jobinputs")   // job id \0 seq (big-endian) → zstd numbers
	bJobResults = []byte("jobresults")  // job id \0 seq part (big-endian) → zstd answers
	bWebSecrets = []byte("hooksecrets") // account → webhook secret
	bOutbox     = []byte("outbox")      // webhook id → boltDelivery
)

// jobBuckets are created with the store's own.
var jobBuckets = [][]byte{bJobs, bJobQueue, bJobChunks, bJobInputs, bJobResults, bWebSecrets, bOutbox}

// boltChunk is a chunk's state; its numbers are in bJobInputs, so that
// finding a chunk to claim reads a few bytes a chunk.
type boltChunk struct {
	Size  int       `json:"size"`
	Done  int       `json:"done"`
	Parts int       `json:"parts"`
	Claim string    `json:"claim,omitempty"`
	Until time.Time `json:"until,omitzero"`
}

type boltDelivery struct {
	webhook.Delivery
	Next      time.Time `json:"next"`
	State     string    `json:"state"`
	LastError string    `json:"last_error,omitempty"`
}

func queueKey(j *Job) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(j.Created.UnixNano())), j.ID...)
}

func chunkKey(job string, seq int) []byte {
	return binary.BigEndian.AppendUint32(append([]byte(job), 0), uint32(seq))
}

func resultKey(job string, seq, part int) []byte {
	return binary.BigEndian.AppendUint32(chunkKey(job, seq), uint32(part))
}

// putJob stores j and keeps the queue of active jobs.
func putJob(tx *bolt.Tx, j *Job) error {
	q := tx.Bucket(bJobQueue)
	var err error
	if j.Status.active() {
		err = q.Put(queueKey(j), []byte(j.ID))
	} else {
		err = q.Delete(queueKey(j))
	}
	if err != nil {
		return err
	}
	return put(tx.Bucket(bJobs), []byte(j.ID), j)
}

func loadJob(tx *bolt.Tx, accountID, id string) (*Job, error) {
	var j Job
	ok, err := get(tx.Bucket(bJobs), []byte(id), &j)
	if err != nil {
		return nil, err
	}
	if !ok || (accountID != "" && j.AccountID != accountID) {
		return nil, fmt.Errorf("job %q: %w", id, ErrNotFound)
	}
	return &j, nil
}

// CreateJob implements [Jobs].
func (s *BoltStore) CreateJob(_ context.Context, spec JobSpec, lim JobLimits, now time.Time) (Job, error) {
	if err := checkSpec(&spec); err != nil {
		return Job{}, err
	}
	j, inputs, sizes := newJob(&spec, now)
	err := s.db.Update(func(tx *bolt.Tx) error {
		if _, err := s.account(tx, j.AccountID); err != nil {
			return err
		}
		unfinished, recent := 0, int64(0)
		err := tx.Bucket(bJobs).ForEach(func(_, v []byte) error {
			var o Job
			if err := json.Unmarshal(v, &o); err != nil {
				return err
			}
			if o.AccountID != j.AccountID {
				return nil
			}
			if o.Status.active() || o.Status == JobInsufficientBalance {
				unfinished++
			}
			if o.Created.After(now.Add(-time.Hour)) {
				recent += o.Total
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := checkLimits(lim, unfinished, recent, j.Total); err != nil {
			return err
		}
		cb, ib := tx.Bucket(bJobChunks), tx.Bucket(bJobInputs)
		for i := range inputs {
			if err := put(cb, chunkKey(j.ID, i), boltChunk{Size: sizes[i]}); err != nil {
				return err
			}
			if err := ib.Put(chunkKey(j.ID, i), inputs[i]); err != nil {
				return err
			}
		}
		return putJob(tx, &j)
	})
	return j, err
}

// Job implements [Jobs].
func (s *BoltStore) Job(_ context.Context, accountID, id string) (j Job, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		p, err := loadJob(tx, accountID, id)
		if err == nil {
			j = *p
		}
		return err
	})
	return j, err
}

// ListJobs implements [Jobs].
func (s *BoltStore) ListJobs(_ context.Context, accountID string, limit int) (out []Job, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bJobs).ForEach(func(_, v []byte) error {
			var j Job
			if err := json.Unmarshal(v, &j); err != nil {
				return err
			}
			if accountID == "" || j.AccountID == accountID {
				out = append(out, j)
			}
			return nil
		})
	})
	sort.Slice(out, func(a, b int) bool {
		return out[a].Created.After(out[b].Created) || out[a].Created.Equal(out[b].Created) && out[a].ID > out[b].ID
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, err
}

func (s *BoltStore) changeJob(accountID, id string, change func(*Job) error) (j Job, err error) {
	err = s.db.Update(func(tx *bolt.Tx) error {
		p, err := loadJob(tx, accountID, id)
		if err != nil {
			return err
		}
		if err := change(p); err != nil {
			return err
		}
		j = *p
		return putJob(tx, p)
	})
	return j, err
}

// CancelJob implements [Jobs].
func (s *BoltStore) CancelJob(_ context.Context, accountID, id string, now time.Time) (Job, error) {
	return s.changeJob(accountID, id, func(j *Job) error { cancelJob(j, now); return nil })
}

// ResumeJob implements [Jobs].
func (s *BoltStore) ResumeJob(_ context.Context, accountID, id string, _ time.Time) (Job, error) {
	return s.changeJob(accountID, id, resumeJob)
}

// ClaimChunk implements [Jobs].
func (s *BoltStore) ClaimChunk(_ context.Context, now time.Time, lease time.Duration) (c *JobChunk, err error) {
	err = s.db.Update(func(tx *bolt.Tx) error {
		qc := tx.Bucket(bJobQueue).Cursor()
		cb := tx.Bucket(bJobChunks)
		for k, id := qc.First(); k != nil; k, id = qc.Next() {
			j, err := loadJob(tx, "", string(id))
			if err != nil {
				return err
			}
			if !j.Status.active() {
				continue
			}
			cc := cb.Cursor()
			pre := append([]byte(j.ID), 0)
			for ck, cv := cc.Seek(pre); ck != nil && bytes.HasPrefix(ck, pre); ck, cv = cc.Next() {
				var ch boltChunk
				if err := json.Unmarshal(cv, &ch); err != nil {
					return err
				}
				if ch.Done >= ch.Size || (ch.Claim != "" && !ch.Until.Before(now)) {
					continue
				}
				seq := int(binary.BigEndian.Uint32(ck[len(pre):]))
				nums, err := chunkNumbers(tx.Bucket(bJobInputs).Get(ck), ch.Done)
				if err != nil {
					return err
				}
				ch.Claim, ch.Until = newID("claim_"), now.Add(lease)
				if err := put(cb, chunkKey(j.ID, seq), &ch); err != nil {
					return err
				}
				if j.Status == JobQueued {
					j.Status = JobRunning
					if err := putJob(tx, j); err != nil {
						return err
					}
				}
				c = &JobChunk{JobID: j.ID, AccountID: j.AccountID, Seq: seq, Offset: ch.Done, Numbers: nums,
					Kind: j.Kind, Enhanced: j.Enhanced, Messaging: j.Messaging, Claim: ch.Claim, Until: ch.Until}
				return nil
			}
		}
		return nil
	})
	return c, err
}

// loadClaimed loads the job and the chunk, as stored, of a claimed chunk.
func loadClaimed(tx *bolt.Tx, c *JobChunk) (*Job, boltChunk, error) {
	var ch boltChunk
	j, err := loadJob(tx, c.AccountID, c.JobID)
	if err != nil {
		return nil, ch, err
	}
	ok, err := get(tx.Bucket(bJobChunks), chunkKey(c.JobID, c.Seq), &ch)
	if err == nil && !ok {
		err = fmt.Errorf("chunk %d of job %q: %w", c.Seq, c.JobID, ErrNotFound)
	}
	return j, ch, err
}

// RenewChunk implements [Jobs].
func (s *BoltStore) RenewChunk(_ context.Context, c *JobChunk, now time.Time, lease time.Duration) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		j, ch, err := loadClaimed(tx, c)
		if err != nil {
			return err
		}
		if ch.Until, err = renewChunk(c, j.Status, ch.Claim, ch.Done, now, lease); err != nil {
			return err
		}
		return put(tx.Bucket(bJobChunks), chunkKey(c.JobID, c.Seq), &ch)
	})
}

// CommitChunk implements [Jobs].
func (s *BoltStore) CommitChunk(_ context.Context, c *JobChunk, lines [][]byte, answered []bool, now time.Time) (j Job, err error) {
	err = s.db.Update(func(tx *bolt.Tx) error {
		a, err := s.account(tx, c.AccountID)
		if err != nil {
			return err
		}
		p, ch, err := loadClaimed(tx, c)
		if err != nil {
			return err
		}
		cb := tx.Bucket(bJobChunks)
		month := Month(now)
		fb := tx.Bucket(bFree)
		st := chunkCommit{job: p, status: a.Status, balance: a.Balance, freeTaken: freeTaken(fb, a.ID, month), claim: ch.Claim, done: ch.Done, size: ch.Size}
		if st.prices, err = s.prices(tx, a.ID); err != nil {
			return err
		}
		if err := commitChunk(c, lines, answered, now, &st); err != nil {
			return err
		}
		if st.part != nil {
			if err := tx.Bucket(bJobResults).Put(resultKey(c.JobID, c.Seq, ch.Parts), st.part); err != nil {
				return err
			}
			ch.Parts++
		}
		ch.Done += st.keep
		ch.Claim, ch.Until = "", time.Time{}
		if err := put(cb, chunkKey(c.JobID, c.Seq), &ch); err != nil {
			return err
		}
		a.Balance = st.balance
		if err := put(tx.Bucket(bAccounts), []byte(a.ID), a); err != nil {
			return err
		}
		if err := fb.Put(key(a.ID, month), fmt.Appendf(nil, "%d", st.freeTaken)); err != nil {
			return err
		}
		if err := addUsage(tx.Bucket(bUsage), st.usage); err != nil {
			return err
		}
		if st.recall {
			if _, err := s.otherLeases(tx.Bucket(bLeases), &LeaseSync{Account: a.ID, Recall: true}, &syncState{}); err != nil {
				return err
			}
		}
		if d := st.delivery; d != nil {
			if err := put(tx.Bucket(bOutbox), []byte(d.ID), boltDelivery{Delivery: *d, Next: d.CreatedAt, State: "pending"}); err != nil {
				return err
			}
		}
		j = *p
		return putJob(tx, p)
	})
	return j, err
}

// JobResults implements [Jobs]: one chunk in one read transaction at a
// time, so that a slow reader does not hold the file's pages.
func (s *BoltStore) JobResults(ctx context.Context, accountID, id string, fn func(string, []byte) error) error {
	j, err := s.Job(ctx, accountID, id)
	if err != nil {
		return err
	}
	for seq := 0; seq < j.Chunks; seq++ {
		var parts [][]byte
		var ch boltChunk
		var input []byte
		err := s.db.View(func(tx *bolt.Tx) error {
			if _, err := get(tx.Bucket(bJobChunks), chunkKey(id, seq), &ch); err != nil {
				return err
			}
			input = bytes.Clone(tx.Bucket(bJobInputs).Get(chunkKey(id, seq)))
			rb := tx.Bucket(bJobResults)
			for p := 0; p < ch.Parts; p++ {
				parts = append(parts, bytes.Clone(rb.Get(resultKey(id, seq, p))))
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := chunkResults(input, parts, fn); err != nil {
			return err
		}
		if ch.Done < ch.Size {
			return nil
		}
	}
	return nil
}

// DeleteJobs implements [Jobs].
func (s *BoltStore) DeleteJobs(_ context.Context, cutoff time.Time) (n int, err error) {
	err = s.db.Update(func(tx *bolt.Tx) error {
		var old []Job
		err := tx.Bucket(bJobs).ForEach(func(_, v []byte) error {
			var j Job
			if err := json.Unmarshal(v, &j); err != nil {
				return err
			}
			if !j.Status.active() && !j.Finished.IsZero() && j.Finished.Before(cutoff) {
				old = append(old, j)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, j := range old {
			for _, b := range [][]byte{bJobChunks, bJobInputs, bJobResults} {
				c := tx.Bucket(b).Cursor()
				pre := append([]byte(j.ID), 0)
				for k, _ := c.Seek(pre); k != nil && bytes.HasPrefix(k, pre); k, _ = c.Seek(pre) {
					if err := c.Delete(); err != nil {
						return err
					}
				}
			}
			if err := tx.Bucket(bJobs).Delete([]byte(j.ID)); err != nil {
				return err
			}
		}
		n = len(old)
		ob := tx.Bucket(bOutbox)
		var ended [][]byte
		err = ob.ForEach(func(k, v []byte) error {
			var d boltDelivery
			if err := json.Unmarshal(v, &d); err != nil {
				return err
			}
			if d.State != "pending" && d.Next.Before(cutoff) {
				ended = append(ended, k)
			}
			return nil
		})
		for _, k := range ended {
			if err == nil {
				err = ob.Delete(k)
			}
		}
		return err
	})
	return n, err
}

// SetWebhookSecret implements [Jobs].
func (s *BoltStore) SetWebhookSecret(_ context.Context, accountID, secret string, _ time.Time) error {
	if err := checkSecret(secret); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		if _, err := s.account(tx, accountID); err != nil {
			return err
		}
		return tx.Bucket(bWebSecrets).Put([]byte(accountID), []byte(secret))
	})
}

// WebhooksDue implements [Jobs].
func (s *BoltStore) WebhooksDue(_ context.Context, now time.Time, limit int) (out []webhook.Delivery, err error) {
	err = s.db.Update(func(tx *bolt.Tx) error {
		ob := tx.Bucket(bOutbox)
		var due []boltDelivery
		err := ob.ForEach(func(_, v []byte) error {
			var d boltDelivery
			if err := json.Unmarshal(v, &d); err != nil {
				return err
			}
			if d.State == "pending" && !d.Next.After(now) {
				due = append(due, d)
			}
			return nil
		})
		if err != nil {
			return err
		}
		sort.Slice(due, func(a, b int) bool { return due[a].Next.Before(due[b].Next) })
		due = due[:min(len(due), max(limit, 1))]
		for _, d := range due {
			d.Next = now.Add(webhook.Lease)
			if err := put(ob, []byte(d.ID), d); err != nil {
				return err
			}
			d.Secret = string(tx.Bucket(bWebSecrets).Get([]byte(d.AccountID)))
			out = append(out, d.Delivery)
		}
		return nil
	})
	return out, err
}

func (s *BoltStore) webhookAttempt(id, state string, next time.Time, attempts int, lastErr string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		ob := tx.Bucket(bOutbox)
		var d boltDelivery
		ok, err := get(ob, []byte(id), &d)
		if err != nil || !ok || d.State != "pending" {
			return err
		}
		d.State, d.Next, d.Attempts, d.LastError = state, next, attempts, clip(lastErr)
		return put(ob, []byte(id), d)
	})
}

// WebhookDone implements [Jobs].
func (s *BoltStore) WebhookDone(_ context.Context, id string, at time.Time, attempts int) error {
	return s.webhookAttempt(id, "done", at, attempts, "")
}

// WebhookRetry implements [Jobs].
func (s *BoltStore) WebhookRetry(_ context.Context, id string, next time.Time, attempts int, lastErr string) error {
	return s.webhookAttempt(id, "pending", next, attempts, lastErr)
}

// WebhookFail implements [Jobs].
func (s *BoltStore) WebhookFail(_ context.Context, id string, at time.Time, attempts int, lastErr string) error {
	return s.webhookAttempt(id, "failed", at, attempts, lastErr)
}
