package kamailiopdb

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The wire values of protocol version 1 (Kamailio's modules/pdb/common.h).
const (
	Version1 = 1 // the only versioned protocol; any other first byte is the legacy one

	TypeRequest = 0
	TypeReply   = 1

	CodeDefault   = 0 // in requests
	CodeOK        = 1 // the number was found; the payload carries its carrier id
	CodeNotNumber = 2 // the number has characters other than digits
	CodeNotFound  = 3 // no carrier id for the number

	// HeaderLen is the size of the version 1 header: version, type, code,
	// length, id (2 bytes).
	HeaderLen = 6
	// MaxPacket bounds what a client sends: the header and a 256-byte
	// payload (PAYLOADSIZE); longer datagrams are not requests.
	MaxPacket = HeaderLen + 256
	// maxEcho is the longest number a version 1 reply can echo: its length
	// byte counts the whole message, header, NUL and carrier id included.
	maxEcho = 255 - HeaderLen - 1 - 2
)

// Carrier ids (common.h): 1–999 name carriers the operator routes to,
// OtherCarrier the merged rest.
const (
	MinCarrier   = 1
	MaxCarrier   = 999
	OtherCarrier = 1000
)

// Errors of ParseRequest; a server drops such a datagram without answering.
var (
	ErrEmpty    = errors.New("pdb: empty datagram")
	ErrTooLong  = fmt.Errorf("pdb: datagram longer than %d bytes", MaxPacket)
	ErrShort    = fmt.Errorf("pdb: version 1 datagram shorter than its %d-byte header", HeaderLen)
	ErrNotQuery = errors.New("pdb: version 1 datagram is not a request (type must be 0)")
	ErrLength   = errors.New("pdb: version 1 length field is shorter than the header or longer than the datagram")
)

// Request is a decoded query.
type Request struct {
	// Legacy is set for the pre-version protocol: the datagram is the
	// number's digits, and the answer is those digits, a NUL and the
	// carrier id, with no header.
	Legacy bool
	// ID is the version 1 message id, echoed in the reply.
	ID uint16
	// Number is the queried number as sent, without its NUL terminator; it
	// aliases the datagram. In the legacy protocol it holds only the
	// leading digits, as pdb_server reads it.
	Number []byte
}

// ParseRequest decodes a datagram received by a server. Number aliases b.
func ParseRequest(b []byte) (Request, error) {
	switch {
	case len(b) == 0:
		return Request{}, ErrEmpty
	case len(b) > MaxPacket:
		return Request{}, ErrTooLong
	case b[0] != Version1:
		i := 0
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		return Request{Legacy: true, Number: b[:i]}, nil
	case len(b) < HeaderLen:
		return Request{}, ErrShort
	case b[1] != TypeRequest:
		return Request{}, ErrNotQuery
	}
	n := int(b[3])
	if n < HeaderLen || n > len(b) {
		return Request{}, ErrLength
	}
	payload := b[HeaderLen:n]
	for i, c := range payload {
		if c == 0 {
			payload = payload[:i]
			break
		}
	}
	return Request{ID: binary.BigEndian.Uint16(b[4:6]), Number: payload}, nil
}

// IsDigits reports whether s is a non-empty run of ASCII digits, the only
// numbers pdb_server looks up (anything else is CodeNotNumber).
func IsDigits(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// AppendReply appends the answer to req: for version 1 a reply with code and,
// when code is CodeOK, the number, a NUL and carrier in network byte order;
// for the legacy protocol the number, a NUL and carrier (0 for anything
// but CodeOK). A version 1 number too long to echo in a message of at most
// 255 bytes is answered CodeNotNumber (no NANP number is that long).
func AppendReply(dst []byte, req Request, code uint8, carrier int16) []byte {
	if code != CodeOK {
		carrier = 0
	}
	if req.Legacy {
		dst = append(append(dst, req.Number...), 0)
		return binary.BigEndian.AppendUint16(dst, uint16(carrier))
	}
	if code == CodeOK && len(req.Number) > maxEcho {
		code = CodeNotNumber
	}
	length := HeaderLen
	if code == CodeOK {
		length += len(req.Number) + 1 + 2
	}
	dst = append(dst, Version1, TypeReply, code, byte(length))
	dst = binary.BigEndian.AppendUint16(dst, req.ID)
	if code == CodeOK {
		dst = append(append(dst, req.Number...), 0)
		dst = binary.BigEndian.AppendUint16(dst, uint16(carrier))
	}
	return dst
}

// AppendRequest appends a version 1 query for number with id, as Kamailio's
// pdb_query sends it: the header, the number and a NUL. Load clients and
// tests use it; a number longer than a message can carry is an error.
func AppendRequest(dst []byte, id uint16, number string) ([]byte, error) {
	length := HeaderLen + len(number) + 1
	if length > 255 {
		return dst, fmt.Errorf("pdb: number of %d bytes does not fit a request", len(number))
	}
	dst = append(dst, Version1, TypeRequest, CodeDefault, byte(length))
	dst = binary.BigEndian.AppendUint16(dst, id)
	return append(append(dst, number...), 0), nil
}

// Reply is a decoded version 1 answer, as a client reads it.
type Reply struct {
	ID      uint16
	Code    uint8
	Number  string // the echoed number (CodeOK only)
	Carrier int16  // the carrier id (CodeOK only)
}

// ParseReply decodes a version 1 reply; load clients and tests use it.
func ParseReply(b []byte) (Reply, error) {
	if len(b) < HeaderLen || b[0] != Version1 || b[1] != TypeReply {
		return Reply{}, errors.New("pdb: not a version 1 reply")
	}
	if int(b[3]) != len(b) {
		return Reply{}, fmt.Errorf("pdb: reply length field %d, datagram %d bytes", b[3], len(b))
	}
	r := Reply{ID: binary.BigEndian.Uint16(b[4:6]), Code: b[2]}
	if r.Code != CodeOK {
		return r, nil
	}
	p := b[HeaderLen:]
	if len(p) < 3 || p[len(p)-3] != 0 {
		return Reply{}, errors.New("pdb: OK reply without a NUL-terminated number and carrier id")
	}
	r.Number = string(p[:len(p)-3])
	r.Carrier = int16(binary.BigEndian.Uint16(p[len(p)-2:]))
	return r, nil
}
