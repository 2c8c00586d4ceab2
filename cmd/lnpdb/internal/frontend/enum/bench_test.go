package enum

import (
	"testing"

	"github.com/miekg/dns"
)

// BenchmarkAnswerWire is one UDP query's work besides the socket: unpack
// the query, answer it, pack the answer; ".../wire" through AnswerWire, as
// the UDP server does, the others through Answer and Pack.
func BenchmarkAnswerWire(b *testing.B) {
	h, _, nums := sampleHandler(b)
	for _, k := range [][2]string{{"ported", nums.Ported}, {"vacant", nums.Vacant}} {
		wire, _ := query(k[1]).Pack()
		b.Run(k[0]+"/wire", func(b *testing.B) {
			b.ReportAllocs()
			dst := make([]byte, 0, maxUDP)
			for b.Loop() {
				if _, ok := h.AnswerWire(dst, wire); !ok {
					b.Fatal("no answer")
				}
			}
		})
		b.Run(k[0], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := new(dns.Msg)
				if err := req.Unpack(wire); err != nil {
					b.Fatal(err)
				}
				if _, err := h.Answer(req, true).Pack(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
