package gen

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/lnpdb/lnpdb/internal/core/nanp"
)

// carrier is one row of carriers.csv and what the generator knows about it.
type carrier struct {
	ocn, name, ctype string
	provider         string // default messaging provider; "" for none
	enabled          bool   // default messaging enabled
	weight           float64
	portWeight       float64 // how often numbers port to it
	wireless         bool
}

// region is a (state, LATA): an LRN serves one LATA, and a ported number's
// LRN is an LRN of its new carrier in the number's own state and LATA.
type region struct {
	carriers []int32   // carriers holding a code or block here
	lrns     []int64   // their LRN here (10 digits), parallel to carriers
	cum      []float64 // running totals of their port weights
	pos      map[int32]int32
}

// code is one assigned NPA-NXX code and its thousands-blocks.
type code struct {
	npa, nxx int32
	place    int32
	region   int32
	holder   int32 // OCN of the code holder (index into world.carriers)
	split    bool  // split into thousands-blocks
	// For split codes: the block holder of each thousands-block, or -1 when
	// the block is not assigned (it stays in the pool); the position of a
	// pooled block's LRN in its region, or -1 when the block is not pooled;
	// and the pooled block's activation time.
	owner   [10]int32
	lrnPos  [10]int32
	blockAt [10]uint32
	lines   int32 // numbers in service: 10,000, or 1,000 per assigned block
	ported  int32 // ported numbers to write in this code
}

// world is everything but the per-number rows, which are streamed from it.
type world struct {
	ref      *reference
	carriers []carrier
	regions  []region
	codes    []code
	refIDs   []string
	homes    carrierStates
}

// Limits of the shape.
const (
	maxCarriers    = 3000 // default cap: a few thousand carriers, like the LERG
	portFill       = 0.8  // at most this share of a code's numbers are ported
	unportedListed = 3    // one unported listed number per this many ported
)

// nxxPool lists the central office codes an NPA may assign: [2-9]XX, not
// N11, and not the special 555, 950, 958, 959 and 976.
var nxxPool = func() []int32 {
	var p []int32
	for n := int32(200); n <= 999; n++ {
		switch {
		case !nanp.ValidNXX(int(n)), n == 555, n == 950, n == 958, n == 959, n == 976:
			continue
		}
		p = append(p, n)
	}
	return p
}()

// sampleNPA and sampleNXX are always assigned: 202-555 (Washington, DC) is
// the code the docs and examples use.
const (
	sampleNPA  = 202
	sampleNXX  = 555
	sampleLine = 123 // 202-555-0123: listed first in its code, so ported when the code has a port
)

func buildWorld(cfg Config, ref *reference) (*world, error) {
	w := &world{ref: ref}
	r := newRNG(cfg.Seed, 1)
	w.makeCarriers(&r, cfg.Carriers)
	eligible := w.eligibleByState()
	if err := w.makeCodes(&r, cfg.Codes, eligible); err != nil {
		return nil, err
	}
	w.makeRegions(&r)
	if err := w.allocatePorts(&r, cfg.Ported); err != nil {
		return nil, err
	}
	listed := float64(cfg.Ported) * (1 + 1.0/unportedListed)
	w.refIDs = makeRefIDs(&r, clamp(int(listed*cfg.Messaging/50), 10, 3000))
	return w, nil
}

// states returns the states of the reference table and how many NPAs each
// has, in a fixed order.
func (w *world) states() ([]string, []float64) {
	count := map[string]int{}
	var names []string
	for _, n := range w.ref.npas {
		if count[n.state] == 0 {
			names = append(names, n.state)
		}
		count[n.state]++
	}
	sort.Strings(names)
	weights := make([]float64, len(names))
	for i, s := range names {
		weights[i] = float64(count[s])
	}
	return names, weights
}

// carrierStates lists, per state, the carriers that operate there:
// nationals everywhere, the others in a home state and sometimes one more.
type carrierStates map[string][]int32

func (w *world) makeCarriers(r *rng, n int) {
	names, weights := w.states()
	stateCum := cumulative(weights)
	national := clamp(n/8, 1, len(nationalTypes))
	ocns := map[string]bool{}
	carrierNames := map[string]bool{}
	w.carriers = make([]carrier, n)
	homes := make(carrierStates)
	for i := range w.carriers {
		c := &w.carriers[i]
		if i < national {
			c.ctype = nationalTypes[i]
		} else {
			c.ctype = carrierTypes[r.pick(carrierTypeWeights)]
		}
		c.wireless = c.ctype == typeWireless
		c.weight = 1 / math.Pow(float64(i+1), 0.9)
		c.portWeight = c.weight * map[string]float64{typeWireless: 3, typeVOIP: 1.5, typeCLEC: 1, typeILEC: 0.6}[c.ctype]
		c.ocn = uniqueOCN(r, ocns)
		var home string
		if i < national {
			for _, s := range names {
				homes[s] = append(homes[s], int32(i))
			}
		} else {
			home = names[r.pick(stateCum)]
			homes[home] = append(homes[home], int32(i))
			if r.chance(0.25) {
				if s := names[r.pick(stateCum)]; s != home {
					homes[s] = append(homes[s], int32(i))
				}
			}
		}
		c.name = uniqueCarrierName(r, c.ctype, home, carrierNames)
		if r.chance(map[string]float64{typeWireless: 0.9, typeVOIP: 0.7, typeCLEC: 0.4, typeILEC: 0.2}[c.ctype]) {
			c.provider = messagingProviders[r.intn(len(messagingProviders))]
			c.enabled = r.chance(0.9)
		}
	}
	w.homes = homes
}

// uniqueOCN draws a 4-character OCN in the shapes the LERG uses: four
// digits, or three digits and a letter, or a letter and three digits.
func uniqueOCN(r *rng, seen map[string]bool) string {
	const digits, letters = "0123456789", "ABCDEFGHJKLMNPQRSTUVWXYZ"
	for {
		var b [4]byte
		for i := range b {
			b[i] = digits[r.intn(10)]
		}
		switch u := r.float(); {
		case u < 0.2:
			b[3] = letters[r.intn(len(letters))]
		case u < 0.35:
			b[0] = letters[r.intn(len(letters))]
		}
		if s := string(b[:]); !seen[s] {
			seen[s] = true
			return s
		}
	}
}

// uniqueCarrierName invents a carrier name from coined words and a word for
// its type, e.g. "Kelvale Rural Telephone, Inc." or "Norbrook Wireless - TX".
func uniqueCarrierName(r *rng, ctype, home string, seen map[string]bool) string {
	words := typeWords[ctype]
	for try := 0; ; try++ {
		var b strings.Builder
		b.WriteString(nameHeads[r.intn(len(nameHeads))])
		b.WriteString(nameTails[r.intn(len(nameTails))])
		b.WriteByte(' ')
		word := words[r.intn(len(words))]
		b.WriteString(word)
		if suffix := legalSuffixes[r.intn(len(legalSuffixes))]; !strings.HasSuffix(word, "Company") && !strings.HasSuffix(word, "Cooperative") {
			b.WriteString(suffix)
		}
		if home != "" && (try > 0 || r.chance(0.3)) {
			b.WriteString(" - ")
			b.WriteString(home)
		}
		if try > 3 {
			fmt.Fprintf(&b, " %d", try)
		}
		if s := b.String(); !seen[s] {
			seen[s] = true
			return s
		}
	}
}

// eligible lists, per state, the carriers that may hold codes there and the
// running totals of their weights.
type eligible struct {
	carriers []int32
	cum      []float64
}

func (w *world) eligibleByState() map[string]eligible {
	out := map[string]eligible{}
	for s, list := range w.homes {
		ws := make([]float64, len(list))
		for i, c := range list {
			ws[i] = w.carriers[c].weight
		}
		out[s] = eligible{carriers: list, cum: cumulative(ws)}
	}
	return out
}

func (e eligible) pick(r *rng) int32 { return e.carriers[r.pick(e.cum)] }

// makeCodes assigns n NPA-NXX codes across the NPAs (skewed: some NPAs are
// busy metros), gives each a rate center of its NPA, a code holder and, for
// about half, thousands-blocks.
func (w *world) makeCodes(r *rng, n int, elig map[string]eligible) error {
	npas := w.ref.npas
	weights := make([]float64, len(npas))
	caps := make([]int, len(npas))
	sample := -1
	for i, a := range npas {
		weights[i] = math.Exp(0.8 * r.norm())
		caps[i] = len(nxxPool)
		if a.npa == sampleNPA {
			caps[i]++
			sample = i
		}
	}
	counts, err := allocate(n, weights, caps)
	if err != nil {
		return fmt.Errorf("gen: %d codes: %w", n, err)
	}
	if sample >= 0 && counts[sample] == 0 && n > 0 {
		// Take the code from the busiest NPA.
		big := 0
		for i, c := range counts {
			if c > counts[big] {
				big = i
			}
		}
		counts[big]--
		counts[sample]++
	}
	pool := make([]int32, len(nxxPool))
	w.codes = make([]code, 0, n)
	for i, a := range npas {
		k := counts[i]
		if k == 0 {
			continue
		}
		copy(pool, nxxPool)
		chosen := make([]int32, 0, k)
		if a.npa == sampleNPA {
			chosen = append(chosen, sampleNXX)
		}
		for j := 0; len(chosen) < k; j++ {
			s := j + r.intn(len(pool)-j)
			pool[j], pool[s] = pool[s], pool[j]
			chosen = append(chosen, pool[j])
		}
		sort.Slice(chosen, func(x, y int) bool { return chosen[x] < chosen[y] })
		placeW := make([]float64, len(a.places))
		for j := range placeW {
			placeW[j] = 1
		}
		placeW[0] = 2
		placeCum := cumulative(placeW)
		for _, nxx := range chosen {
			p := a.places[r.pick(placeCum)]
			e := elig[w.ref.places[p].state]
			c := code{npa: int32(a.npa), nxx: nxx, place: int32(p), holder: e.pick(r), lines: 10000}
			for x := range c.owner {
				c.owner[x], c.lrnPos[x] = -1, -1
			}
			if r.chance(0.5) {
				w.splitCode(r, &c, e)
				if c.npa == sampleNPA && c.nxx == sampleNXX && c.owner[0] < 0 {
					c.owner[0] = c.holder // keep 202-555-0123 in service
					c.lines += 1000
				}
			}
			w.codes = append(w.codes, c)
		}
	}
	return nil
}

// splitCode divides a code into thousands-blocks: some stay in the pool
// (unassigned), some are retained by the code holder, and the rest are
// pooled, most of them to other carriers.
func (w *world) splitCode(r *rng, c *code, e eligible) {
	c.split = true
	assigned := 0
	for x := range c.owner {
		switch u := r.float(); {
		case u < 0.3:
			continue
		case u < 0.55:
			c.owner[x] = c.holder
		default:
			owner := c.holder
			if r.chance(0.8) {
				owner = e.pick(r)
				if owner == c.holder {
					owner = e.pick(r)
				}
			}
			c.owner[x] = owner
			c.lrnPos[x] = 0 // pooled; the real position is set by makeRegions
		}
		assigned++
	}
	if assigned == 0 {
		c.owner[r.intn(10)] = c.holder
		assigned = 1
	}
	c.lines = int32(1000 * assigned)
}

// makeRegions gives every carrier an LRN in each (state, LATA) where it
// holds a code or block: a number of that code or block (one whose most
// specific block row names that carrier), ending the way LRNs usually do.
func (w *world) makeRegions(r *rng) {
	index := map[string]int32{}
	codeEnds := []int{0, 9999, 9998, 1, 9990, 99}
	blockEnds := []int{0, 999, 998, 1}
	for i := range w.codes {
		c := &w.codes[i]
		p := w.ref.places[c.place]
		key := p.state + "|" + p.lata
		ri, ok := index[key]
		if !ok {
			ri = int32(len(w.regions))
			index[key] = ri
			w.regions = append(w.regions, region{pos: map[int32]int32{}})
		}
		c.region = ri
		reg := &w.regions[ri]
		base := int64(c.npa)*10_000_000 + int64(c.nxx)*10_000
		if !c.split {
			reg.add(c.holder, base+int64(codeEnds[r.intn(len(codeEnds))]))
			continue
		}
		// The holder's numbers outside assigned blocks route by the code row.
		for x := range c.owner {
			if c.owner[x] == -1 || c.owner[x] == c.holder {
				reg.add(c.holder, base+int64(x*1000+blockEnds[r.intn(len(blockEnds))]))
				break
			}
		}
		for x, o := range c.owner {
			if o >= 0 {
				reg.add(o, base+int64(x*1000+blockEnds[r.intn(len(blockEnds))]))
			}
		}
		for x := range c.lrnPos {
			if c.lrnPos[x] >= 0 {
				c.lrnPos[x] = reg.pos[c.owner[x]]
				c.blockAt[x] = uint32(activation(r, poolingStart, 0.03))
			}
		}
	}
	for i := range w.regions {
		reg := &w.regions[i]
		ws := make([]float64, len(reg.carriers))
		for j, c := range reg.carriers {
			ws[j] = w.carriers[c].portWeight
		}
		reg.cum = cumulative(ws)
		reg.pos = nil
	}
}

// add records c's LRN in the region unless it has one already.
func (reg *region) add(c int32, lrn int64) {
	if _, ok := reg.pos[c]; ok {
		return
	}
	reg.pos[c] = int32(len(reg.carriers))
	reg.carriers = append(reg.carriers, c)
	reg.lrns = append(reg.lrns, lrn)
}

// allocatePorts spreads the ported numbers over the codes, Zipf-like: a few
// busy codes hold many, most hold a few, none more than portFill of its
// numbers.
func (w *world) allocatePorts(r *rng, ported int) error {
	n := len(w.codes)
	rank := make([]int, n)
	for i := range rank {
		rank[i] = i
	}
	for i := n - 1; i > 0; i-- {
		j := r.intn(i + 1)
		rank[i], rank[j] = rank[j], rank[i]
	}
	weights := make([]float64, n)
	caps := make([]int, n)
	for i := range w.codes {
		weights[i] = 1 / math.Pow(float64(rank[i]+1), 0.8)
		caps[i] = int(float64(w.codes[i].lines) * portFill)
	}
	counts, err := allocate(ported, weights, caps)
	if err != nil {
		return fmt.Errorf("gen: %d ported numbers in %d codes: %w (raise --codes)", ported, n, err)
	}
	for i, k := range counts {
		w.codes[i].ported = int32(k)
	}
	// The docs' example number 202-555-0123 is ported when anything is.
	for i := range w.codes {
		if c := &w.codes[i]; c.npa == sampleNPA && c.nxx == sampleNXX && c.ported == 0 && ported > 0 {
			for j := range w.codes {
				if w.codes[j].ported > 1 {
					w.codes[j].ported--
					c.ported++
					break
				}
			}
		}
	}
	return nil
}

var errNoRoom = errors.New("more than fit")

// allocate splits total into integer parts proportional to weights (all
// positive), none above its cap: water-filling, then the rounding remainder
// to the largest fractions.
func allocate(total int, weights []float64, caps []int) ([]int, error) {
	counts := make([]int, len(weights))
	sum := 0
	for _, c := range caps {
		sum += c
	}
	if total > sum {
		return nil, errNoRoom
	}
	if total == 0 {
		return counts, nil
	}
	fill := func(l float64) float64 {
		s := 0.0
		for i, wt := range weights {
			s += math.Min(float64(caps[i]), l*wt)
		}
		return s
	}
	lo, hi := 0.0, 1.0
	for fill(hi) < float64(total) {
		hi *= 2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if fill(mid) <= float64(total) {
			lo = mid
		} else {
			hi = mid
		}
	}
	frac := make([]float64, len(weights))
	got := 0
	for i, wt := range weights {
		v := math.Min(float64(caps[i]), lo*wt)
		counts[i] = int(v)
		frac[i] = v - float64(counts[i])
		got += counts[i]
	}
	order := make([]int, len(weights))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return frac[order[a]] > frac[order[b]] })
	for got < total {
		for _, i := range order {
			if got == total {
				break
			}
			if counts[i] < caps[i] {
				counts[i]++
				got++
			}
		}
	}
	return counts, nil
}

// makeRefIDs draws n distinct messaging reference ids, shared by many rows
// (a reference id names a campaign or a customer account, not a number).
func makeRefIDs(r *rng, n int) []string {
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	seen := map[string]bool{}
	ids := make([]string, 0, n)
	for len(ids) < n {
		b := []byte("MR-0000000000")
		for i := 3; i < len(b); i++ {
			b[i] = alphabet[r.intn(len(alphabet))]
		}
		if s := string(b); !seen[s] {
			seen[s] = true
			ids = append(ids, s)
		}
	}
	return ids
}

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }
