package format

// Stages returns a ported number's lookup in the ported section cut short
// after each of its stages, for BenchmarkLookupStages: the bucket touched
// (aim and touch), the entry found (and find), and the ported record read
// (and its pair's strings). Each returns a value
// that depends on the bytes its last stage read, for the next lookup of a
// chain to depend on. They read the DB's current snapshot without holding
// a reference: the caller keeps the DB open and unchanged while it uses
// them.
func (db *DB) Stages() (touched, found, ported func(tn uint64) uint64) {
	s := db.snap.Load()
	sec := &s.num[numPorted]
	touched = func(tn uint64) uint64 {
		var q probe
		sec.aim(tn/10000000, tn%10000000, &q)
		return uint64(touch(s.b, &q))
	}
	found = func(tn uint64) uint64 {
		var q probe
		sec.aim(tn/10000000, tn%10000000, &q)
		keep(touch(s.b, &q))
		if err := sec.find(s.b, &q); err != nil || !q.hit {
			return 0
		}
		return q.w.lo
	}
	ported = func(tn uint64) uint64 {
		var q probe
		sec.aim(tn/10000000, tn%10000000, &q)
		keep(touch(s.b, &q))
		var p Ported
		if sec.find(s.b, &q) != nil || s.portedOf(tn, &q, &p) != nil {
			return 0
		}
		return p.ChainValue()
	}
	return touched, found, ported
}

// ChainValue is what a dependent benchmark chains on for a ported record:
// the last digit of its LRN plus the length of its SPID, bytes the lookup
// read (0 for no record).
func (p *Ported) ChainValue() uint64 {
	if !p.OK {
		return 0
	}
	return uint64(p.LRN[len(p.LRN)-1]) + uint64(len(p.Carrier.OCN))
}
