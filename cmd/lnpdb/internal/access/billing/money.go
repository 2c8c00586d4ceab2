package billing

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Micros is an amount of money in micro-dollars (1 USD = 1,000,000). Money
// is never a float: amounts are parsed, added and stored as integers.
type Micros int64

// MicrosPerDollar is one dollar in Micros.
const MicrosPerDollar = 1_000_000

// The largest amounts the stores accept. They keep every sum the stores
// and the engine make far from the int64 bound: a wallet's balance, its
// leases and its ledger never exceed what was credited, and a lookup's
// price plus its add-on's is at most 2 × MaxPrice.
const (
	// MaxCredit is the largest top-up: $1,000,000,000.
	MaxCredit Micros = 1_000_000_000 * MicrosPerDollar
	// MaxCredited is the most a wallet may be credited in all:
	// $1,000,000,000,000.
	MaxCredited Micros = 1_000_000_000_000 * MicrosPerDollar
	// MaxPrice is the highest price of a lookup: $1,000.
	MaxPrice Micros = 1_000 * MicrosPerDollar
)

// addMicros returns a+b, and false when the sum overflows.
func addMicros(a, b Micros) (Micros, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

// ErrAmount is what ParseAmount returns (wrapped) for text that is not an
// amount.
var ErrAmount = errors.New("not an amount of dollars")

// ParseAmount parses a non-negative amount of dollars with at most six
// decimals ("25", "25.00", "0.000125"), exactly.
func ParseAmount(s string) (Micros, error) {
	bad := func(why string) (Micros, error) {
		return 0, fmt.Errorf("%w: %q %s", ErrAmount, s, why)
	}
	if s == "" {
		return bad("is empty")
	}
	if s[0] == '-' {
		return bad("is negative")
	}
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || (dot && frac == "") {
		return bad("needs digits on both sides of the point")
	}
	if len(frac) > 6 {
		return bad("has more than 6 decimals (the unit is a micro-dollar)")
	}
	for _, part := range []string{whole, frac} {
		for _, c := range part {
			if c < '0' || c > '9' {
				return bad("is not a number of dollars like 25.00")
			}
		}
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > math.MaxInt64/MicrosPerDollar-1 {
		return bad("is too large")
	}
	f := int64(0)
	if frac != "" {
		f, _ = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
	}
	return Micros(w*MicrosPerDollar + f), nil
}

// String formats m as dollars with at least two and at most six decimals:
// "25.00", "0.0005", "-1.25".
func (m Micros) String() string {
	sign := ""
	u := uint64(m)
	if m < 0 {
		sign, u = "-", uint64(-m)
	}
	s := fmt.Sprintf("%s%d.%06d", sign, u/MicrosPerDollar, u%MicrosPerDollar)
	for strings.HasSuffix(s, "0") && len(s)-strings.IndexByte(s, '.') > 3 {
		s = s[:len(s)-1]
	}
	return s
}
