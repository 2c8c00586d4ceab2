package nanp

import "testing"

var (
	sinkNumber Number
	sinkBool   bool
	sinkErr    error
	sinkString string
	sinkTel    TelURI
)

func benchParse(b *testing.B, s string) {
	b.ReportAllocs()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		sinkNumber, sinkBool, sinkErr = Parse(s)
	}
}

func BenchmarkParseCanonical(b *testing.B)  { benchParse(b, "12025550123") }
func BenchmarkParsePunctuated(b *testing.B) { benchParse(b, "+1 (202) 555-0123") }
func BenchmarkParseTenDigits(b *testing.B)  { benchParse(b, "2025550123") }
func BenchmarkParseTel(b *testing.B)        { benchParse(b, "tel:+12025550123;npdi;rn=+12025550000") }
func BenchmarkParseInvalid(b *testing.B)    { benchParse(b, "1-800-FLOWERS") }

func BenchmarkParseBytes(b *testing.B) {
	in := []byte("12025550123")
	b.ReportAllocs()
	for b.Loop() {
		sinkNumber, sinkErr = ParseBytes(in)
	}
}

func BenchmarkParseDigits(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkNumber, sinkErr = ParseDigits("2025550123")
	}
}

func BenchmarkString(b *testing.B) {
	n := Number(2025550123)
	b.ReportAllocs()
	for b.Loop() {
		sinkString = n.String()
	}
}

func BenchmarkAppendCanonical(b *testing.B) {
	n := Number(2025550123)
	buf := make([]byte, 0, 11)
	b.ReportAllocs()
	for b.Loop() {
		buf = n.AppendCanonical(buf[:0])
	}
}

func BenchmarkParseTelURI(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		sinkTel, sinkErr = ParseTelURI("tel:+12025550123;npdi;rn=+12025550000")
	}
}

func BenchmarkAppendTelURI(b *testing.B) {
	u := TelURI{Number: 2025550123, RN: 2025550000, NPDI: true}
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = u.AppendTelURI(buf[:0])
	}
}
