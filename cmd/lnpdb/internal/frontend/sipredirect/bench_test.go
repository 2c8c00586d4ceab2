package sipredirect

import (
	"net"
	"strings"
	"testing"

	"github.com/emiago/sipgo/sip"
)

// BenchmarkRespondWire is one INVITE's work besides the socket: parse it
// (sipgo), answer it, write the response.
func BenchmarkRespondWire(b *testing.B) {
	s, _, nums := sampleServer(b)
	wire := []byte(invite("INVITE", "sip:+"+nums.Ported+"@example.net", "127.0.0.1:5099", 1))
	p := sip.NewParser()
	var out strings.Builder
	b.ReportAllocs()
	for b.Loop() {
		m, err := p.ParseSIP(wire)
		if err != nil {
			b.Fatal(err)
		}
		res := s.Respond(m.(*sip.Request))
		out.Reset()
		res.StringWrite(&out)
	}
}

// BenchmarkAnswerDatagram is a dip on the UDP path: an INVITE's bytes
// parsed, checked, answered and written.
func BenchmarkAnswerDatagram(b *testing.B) {
	s, _, _ := sampleServer(b)
	from := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5099}
	in := []byte(invite("INVITE", "sip:+12014814567@example.net", "127.0.0.1:5099", 1))
	dst := make([]byte, 0, 2048)
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = s.answerDatagram(dst[:0], in, from)
	}
	if len(dst) == 0 {
		b.Fatal("no answer")
	}
}
