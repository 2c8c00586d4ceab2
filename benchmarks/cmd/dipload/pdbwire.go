package main

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The client side of Kamailio's pdb protocol, version 1 (modules/pdb and
// utils/pdbt in Kamailio's sources), written here from the protocol rather
// than taken from the server's package: a load client that shares the
// server's codec would not notice the two drifting apart together.
//
// A request is version 1, type 0 (request), code 0, the whole message's
// length, a 2-byte id, then the number and a NUL. A reply is version 1,
// type 1, a code (1 found), the length, the id, and when found the echoed
// number, a NUL and the carrier id as a big-endian int16.

const (
	pdbHeaderLen = 6
	pdbCodeOK    = 1
)

func appendPDBRequest(dst []byte, id uint16, number string) ([]byte, error) {
	length := pdbHeaderLen + len(number) + 1
	if length > 255 {
		return dst, fmt.Errorf("pdb: number of %d bytes does not fit a request", len(number))
	}
	dst = append(dst, 1, 0, 0, byte(length))
	dst = binary.BigEndian.AppendUint16(dst, id)
	return append(append(dst, number...), 0), nil
}

type pdbReply struct {
	ID      uint16
	Code    uint8
	Carrier int16
}

func parsePDBReply(b []byte) (pdbReply, error) {
	if len(b) < pdbHeaderLen || b[0] != 1 || b[1] != 1 || int(b[3]) != len(b) {
		return pdbReply{}, errors.New("pdb: not a version 1 reply")
	}
	r := pdbReply{ID: binary.BigEndian.Uint16(b[4:6]), Code: b[2]}
	if r.Code == pdbCodeOK {
		p := b[pdbHeaderLen:]
		if len(p) < 3 || p[len(p)-3] != 0 {
			return pdbReply{}, errors.New("pdb: OK reply without a NUL-terminated number and carrier id")
		}
		r.Carrier = int16(binary.BigEndian.Uint16(p[len(p)-2:]))
	}
	return r, nil
}
