package kamailiopdb

import (
	"bytes"
	"testing"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/diptest"
)

// FuzzParseRequest: any datagram decodes or is refused without a panic; a
// decoded request's reply decodes back to the request's id and number.
func FuzzParseRequest(f *testing.F) {
	for _, s := range [][]byte{
		{1, 0, 0, 18, 0x12, 0x34, '1', '2', '0', '1', '4', '8', '1', '4', '5', '6', '7', 0},
		{1, 0, 0, 6, 0, 0},
		{1, 1, 1, 6, 0, 0},
		{1, 0, 0, 200, 0, 0, '1'},
		[]byte("12025550123\x00"),
		[]byte("+12025550123"),
		{},
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		req, err := ParseRequest(b)
		if err != nil {
			return
		}
		if !req.Legacy && bytes.IndexByte(req.Number, 0) >= 0 {
			t.Fatalf("number %q holds a NUL", req.Number)
		}
		out := AppendReply(nil, req, CodeOK, 7)
		if req.Legacy {
			if !bytes.Equal(out[:len(req.Number)], req.Number) || len(out) != len(req.Number)+3 {
				t.Fatalf("legacy reply % x to %q", out, req.Number)
			}
			return
		}
		rep, err := ParseReply(out)
		if err != nil {
			t.Fatalf("reply % x to % x: %v", out, b, err)
		}
		if rep.ID != req.ID {
			t.Fatalf("id %d, want %d", rep.ID, req.ID)
		}
		if rep.Code == CodeOK && (rep.Number != string(req.Number) || rep.Carrier != 7) {
			t.Fatalf("reply %+v to %q", rep, req.Number)
		}
	})
}

// FuzzAnswer: the server's whole handling of a datagram never panics and
// only ever sends a well-formed reply.
func FuzzAnswer(f *testing.F) {
	s, _, _ := diptest.Sample(f, func(tables diptest.FixedTables) (*Server, error) { return New(Config{Tables: tables}) })
	f.Add([]byte{1, 0, 0, 18, 0x12, 0x34, '1', '2', '0', '1', '4', '8', '1', '4', '5', '6', '7', 0})
	f.Add([]byte("12025550123"))
	f.Add([]byte{1, 0, 0, 10, 0, 1, '+', '1', '2', 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		out, ok := s.Answer(nil, b)
		if !ok || len(b) == 0 || b[0] != Version1 {
			return
		}
		if _, err := ParseReply(out); err != nil {
			t.Fatalf("reply % x to % x: %v", out, b, err)
		}
	})
}
