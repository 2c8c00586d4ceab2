package sipredirect

import (
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
