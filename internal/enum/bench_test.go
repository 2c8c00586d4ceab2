package enum

import (
	"testing"

	"github.com/lnpdb/lnpdb/internal/diptest"
	"github.com/lnpdb/lnpdb/internal/testdb"
	"github.com/miekg/dns"
)

// BenchmarkAnswerWire is one UDP query's work besides the socket: unpack
// the query, answer it, pack the answer; ".../wire" through AnswerWire, as
// the UDP server does, the others through Answer and Pack.
func BenchmarkAnswerWire(b *testing.B) {
	db := testdb.Sample(b)
	nums := diptest.Find(b, db)
	h, err := New(Config{Tables: fixedTable{db}})
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range [][2]string{{"ported", nums.Ported}, {"vacant", nums.Vacant}} {
		q := new(dns.Msg)
		q.SetQuestion(enumName(k[1], "e164.arpa."), dns.TypeNAPTR)
		wire, _ := q.Pack()
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
