package billing

import (
	"fmt"
	"time"
)

// leaseRow is a lease as stores keep it: what it holds, unspent.
type leaseRow struct {
	ID      int64     `json:"id"`
	Account string    `json:"account"`
	Holder  string    `json:"holder"`
	Month   string    `json:"month"`  // of Free
	Credit  Micros    `json:"credit"` // unspent credit held
	Free    int64     `json:"free"`   // unspent free lookups held
	Seq     int64     `json:"seq"`    // the last sync applied
	Expires time.Time `json:"expires"`
	// Recall: another process found the wallet short and asks what this
	// lease holds back; its holder hands it back at its next sync.
	Recall bool `json:"recall,omitempty"`
	// Expired: the lease expired and what it held went back to the
	// balance; it is kept, empty, for tombstoneKeep, so that its holder,
	// back from beyond the store's reach, has what it spent charged
	// (settle) rather than lost.
	Expired bool `json:"expired,omitempty"`
}

// tombstoneKeep is how long an expired lease is kept for its holder to
// report what it spent of it.
const tombstoneKeep = 24 * time.Hour

// syncState is what a store loads for one account's sync, under the
// account's lock, and writes back after settle.
type syncState struct {
	status  Status
	balance Micros
	lease   *leaseRow // nil: a new lease, or one expired and returned
	// freeTaken is the free lookups granted to leases per month, for the
	// lease's month and the current one.
	freeTaken map[string]int64
	// Set by settle:
	usage   []UsageRow // to add to the ledger
	deleted bool       // the lease ended
	created bool       // the lease is new (its ID is for the store to set)
	// Set by the store after settle: the credit the account's other
	// leases hold; and whether this lease was recalled.
	othersLeased Micros
	recalled     bool
}

// settle applies req to st: the one lease algorithm both stores share.
// Amounts only move between the balance, the lease and the ledger, so
// credits = balance + leases + charged holds after every sync.
func settle(req *LeaseSync, now time.Time, ttl time.Duration, st *syncState) error {
	if err := req.validate(); err != nil {
		return err
	}
	cur := Month(now)
	l := st.lease
	if req.Lease != 0 && l != nil && l.Expired {
		// The lease expired and was returned while its holder could not
		// reach the store, and the holder is back: what it reports spent
		// of it (lookups it answered before its spending deadline, never
		// after the expiry) is charged from the balance the lease's credit
		// went back to, and the lease lives on. A report applied before
		// the expiry, sent again, finds its sequence number applied. Only
		// if the balance no longer holds what was spent (other leases
		// took it since) is the report refused: no balance goes below
		// zero.
		if req.Seq > l.Seq {
			if req.SpentCredit > st.balance {
				return ErrLeaseLost
			}
			st.balance -= req.SpentCredit
			st.freeTaken[l.Month] += req.SpentFree
			l.Credit, l.Free = req.SpentCredit, req.SpentFree
		}
		l.Expired = false
	}
	if req.Lease != 0 {
		if l == nil {
			return ErrLeaseLost // released, or never this account's
		}
		// A recall is reported once, to the sync that answers it.
		st.recalled, l.Recall = l.Recall, false
		if req.Seq > l.Seq {
			if req.SpentCredit > l.Credit || req.SpentFree > l.Free {
				return fmt.Errorf("%w: lease %d spends %d micros and %d free, it holds %d and %d", ErrInvalid, l.ID, req.SpentCredit, req.SpentFree, l.Credit, l.Free)
			}
			l.Credit -= req.SpentCredit
			l.Free -= req.SpentFree
			l.Seq = req.Seq
			for _, u := range req.Usage {
				u.AccountID = req.Account
				st.usage = append(st.usage, u)
			}
		}
	} else {
		if req.Release {
			return nil
		}
		l = &leaseRow{Account: req.Account, Holder: req.Holder, Month: cur, Seq: req.Seq}
		st.lease, st.created = l, true
	}
	wantCredit, wantFree := req.WantCredit, req.WantFree
	if req.Release || st.status != StatusActive {
		wantCredit, wantFree = 0, 0
	}
	if l.Month != cur {
		// Free lookups are a month's: what the lease holds of last month's
		// goes back to last month.
		st.freeTaken[l.Month] -= l.Free
		l.Free, l.Month = 0, cur
	}
	if l.Credit < wantCredit {
		add := min(wantCredit-l.Credit, st.balance)
		st.balance -= add
		l.Credit += add
	} else {
		st.balance += l.Credit - wantCredit
		l.Credit = wantCredit
	}
	if l.Free < wantFree {
		add := min(wantFree-l.Free, max(FreeTier-st.freeTaken[cur], 0))
		st.freeTaken[cur] += add
		l.Free += add
	} else {
		st.freeTaken[cur] -= l.Free - wantFree
		l.Free = wantFree
	}
	if req.Release {
		st.deleted = true
		return nil
	}
	l.Expires = now.Add(ttl)
	if req.Holder != "" {
		l.Holder = req.Holder
	}
	return nil
}

// state reports the lease and the account after a sync.
func (st *syncState) state(prices Prices, now time.Time) LeaseState {
	s := LeaseState{Balance: st.balance, Status: st.status, Prices: prices, Month: Month(now)}
	if l := st.lease; l != nil && !st.deleted {
		s.Lease, s.Credit, s.Free, s.Month, s.Expires = l.ID, l.Credit, l.Free, l.Month, l.Expires
	}
	s.FreeLeft = max(FreeTier-st.freeTaken[s.Month], 0)
	s.Leased, s.Recalled = st.othersLeased, st.recalled
	return s
}
