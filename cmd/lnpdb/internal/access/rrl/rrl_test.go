package rrl

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func count(l *Limiter, a netip.Addr, n int, now time.Time) (sent, dropped, truncated int) {
	for range n {
		switch l.Answer(a, now) {
		case Send:
			sent++
		case Drop:
			dropped++
		case Truncate:
			truncated++
		}
	}
	return
}

func TestLimiter(t *testing.T) {
	l := New(Config{Rate: 10, Slip: 2, Window: 5 * time.Second})
	t0 := time.Unix(1000, 0)
	a := netip.MustParseAddr("192.0.2.7")
	sent, dropped, truncated := count(l, a, 30, t0)
	assert.Equal(t, []int{10, 10, 10}, []int{sent, dropped, truncated}, "rate, then every second dropped one truncated")

	// The same /24 shares the account; another network has its own.
	sent, _, _ = count(l, netip.MustParseAddr("192.0.2.200"), 5, t0)
	assert.Zero(t, sent)
	sent, _, _ = count(l, netip.MustParseAddr("192.0.3.1"), 5, t0)
	assert.Equal(t, 5, sent)
	sent, _, _ = count(l, netip.MustParseAddr("::ffff:192.0.3.1"), 5, t0)
	assert.Equal(t, 5, sent, "IPv4-mapped is the same network")
	sent, _, _ = count(l, netip.MustParseAddr("2001:db8:0:ff::1"), 10, t0)
	assert.Equal(t, 10, sent)
	sent, _, _ = count(l, netip.MustParseAddr("2001:db8:0:1::1"), 1, t0)
	assert.Zero(t, sent, "the same /56")

	// The flood's debt (-25: 25 answers over) is paid back at Rate a
	// second: nothing is sent until it is.
	sent, _, _ = count(l, a, 1, t0.Add(2*time.Second))
	assert.Zero(t, sent, "still in debt after 2 s")
	sent, _, _ = count(l, a, 20, t0.Add(5*time.Second))
	assert.Equal(t, 10, sent, "a whole second's worth once paid back, never more")

	// The debt is bounded by the window: after a long flood, a network
	// is limited for at most Window.
	b := netip.MustParseAddr("198.51.100.1")
	count(l, b, 100000, t0)
	sent, _, _ = count(l, b, 1, t0.Add(5*time.Second+200*time.Millisecond))
	assert.Equal(t, 1, sent)
}

func TestLimiterSlip(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := netip.MustParseAddr("192.0.2.7")
	_, dropped, truncated := count(New(Config{Rate: 1, Slip: 0}), a, 11, t0)
	assert.Equal(t, []int{10, 0}, []int{dropped, truncated}, "slip 0: all dropped")
	_, dropped, truncated = count(New(Config{Rate: 1, Slip: 1}), a, 11, t0)
	assert.Equal(t, []int{0, 10}, []int{dropped, truncated}, "slip 1: all truncated")
	_, dropped, truncated = count(New(Config{Rate: 1, Slip: 3}), a, 10, t0)
	assert.Equal(t, []int{6, 3}, []int{dropped, truncated})
}

func TestDisabled(t *testing.T) {
	var l *Limiter = New(Config{})
	assert.Nil(t, l)
	assert.Equal(t, Send, l.Answer(netip.MustParseAddr("192.0.2.1"), time.Now()))
}

// TestBoundedMemory: a flood from many (spoofed) networks keeps at most
// about MaxNetworks of them.
func TestBoundedMemory(t *testing.T) {
	l := New(Config{Rate: 5, MaxNetworks: 1600})
	t0 := time.Unix(1000, 0)
	for i := range 100000 {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		l.Answer(a, t0.Add(time.Duration(i)*time.Microsecond))
	}
	assert.LessOrEqual(t, l.Networks(), 1600+16)
	assert.Greater(t, l.Networks(), 160, "forgets no more than it must")
}

func BenchmarkAnswer(b *testing.B) {
	l := New(Config{Rate: DefaultRate, Slip: DefaultSlip})
	a := netip.MustParseAddr("192.0.2.7")
	now := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l.Answer(a, now)
		}
	})
}
