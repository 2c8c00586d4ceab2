package udpbatch

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"
)

// segmentSupported: Linux has UDP_SEGMENT since 4.18; an older kernel
// refuses the first segmented send, and the loop stops segmenting.
const segmentSupported = true

func newSegmentOOB() []byte { return make([]byte, unix.CmsgSpace(2)) }

// setSegment writes into oob a UDP_SEGMENT control message for segments of
// size bytes and returns it.
func setSegment(oob []byte, size int) []byte {
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	h.Level = unix.SOL_UDP
	h.Type = unix.UDP_SEGMENT
	h.SetLen(unix.CmsgLen(2))
	binary.NativeEndian.PutUint16(oob[unix.CmsgLen(0):], uint16(size))
	return oob
}
