// Package udpbatch owns the UDP loop the softswitch front ends share: read
// datagrams in batches (recvmmsg through golang.org/x/net), answer each with
// a handler, and send the answers in batches (sendmmsg), on a few goroutines
// per socket. A busy server thus pays two system calls per batch instead of
// two per query, and no goroutine or allocation per datagram of its own.
//
// Where the kernel offers UDP generic segmentation offload (Linux's
// UDP_SEGMENT), answers of one size (up to 1232 bytes) to one peer in a
// batch leave as one message that the kernel cuts into the datagrams: the
// peer receives the same datagrams, and the server pays the send path once
// per group instead of once per answer. When the kernel refuses a segmented
// send, the socket's loop stops segmenting and sends each answer on its own.
//
// A read error other than the socket's close never ends the loop: the
// kernel reports some of a peer's doing on the next read (an ICMP error for
// an answer sent, with IP_RECVERR), and memory pressure fails reads for a
// while (ENOBUFS, ENOMEM). Such an error is counted, logged at most once a
// second and retried after a growing pause, as a listener's failed accept
// is (internal/frontend/sockets's Retrier).
package udpbatch

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/sockets"
)

// Batch is how many datagrams one system call reads or writes.
const Batch = 64

// Handler appends to dst the answer to datagram, received from from, and
// reports whether there is one. dst has room for MaxAnswer bytes; datagram
// is reused once the handler returns.
type Handler func(dst, datagram []byte, from net.Addr) ([]byte, bool)

// Sizes of the buffers handed to a Handler.
const (
	MaxDatagram = 65535
	MaxAnswer   = 65535
)

// maxSegmented bounds the bytes of one segmented send: the payload of one
// UDP datagram over IPv6 (the kernel's limit for the whole group).
const maxSegmented = 65535 - 8 - 40

// maxSegment bounds the answers that are grouped: a segment must fit the
// path's MTU unfragmented (the kernel refuses the send otherwise), so only
// answers that fit any path do (1232 bytes, DNS's safe UDP size). Longer
// answers leave one by one and are fragmented as usual.
const maxSegment = 1232

type batchConn interface {
	ReadBatch([]ipv4.Message, int) (int, error)
	WriteBatch([]ipv4.Message, int) (int, error)
}

// Serve runs readers goroutines answering datagrams on conn with h until
// conn is closed; it returns nil. A failed read is retried through retry
// (nil: retried, neither counted nor logged). maxDatagram and maxAnswer size
// each goroutine's buffers; a longer datagram is cut to maxDatagram+1 bytes,
// so that h can tell it is too long.
func Serve(conn *net.UDPConn, readers, maxDatagram, maxAnswer int, h Handler, retry *sockets.Retrier) error {
	if retry == nil {
		retry = new(sockets.Retrier)
	}
	var bc batchConn = ipv6.NewPacketConn(conn)
	if a, ok := conn.LocalAddr().(*net.UDPAddr); ok && a.IP.To4() != nil {
		bc = ipv4.NewPacketConn(conn)
	}
	errc := make(chan error, readers)
	var wg sync.WaitGroup
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errc <- loop(bc, conn.LocalAddr(), maxDatagram, maxAnswer, h, retry)
		}()
	}
	err := <-errc
	conn.Close() // ends the other readers
	wg.Wait()
	return err
}

// ReadFailed is a socket loop's handling of a read error: it reports
// whether the loop ends, which only the socket's close does (the server is
// shutting down). A timeout (a read deadline passed) is retried at once;
// any other error is counted and logged through retry and retried after
// the pause it returns, the one after *pause, which ReadFailed sleeps and
// keeps in *pause (the loop sets it to 0 after a read that succeeds).
func ReadFailed(err error, addr net.Addr, retry *sockets.Retrier, pause *time.Duration) (end bool) {
	if errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	*pause = retry.Failed(addr, err, *pause)
	time.Sleep(*pause)
	return false
}

// NewRetrier returns the Retrier of a UDP front end's read errors, logging
// to log (nil: no log).
func NewRetrier(log *slog.Logger) *sockets.Retrier {
	return &sockets.Retrier{Logger: log, Msg: "UDP read failed; retrying", Count: "read_errors"}
}

func loop(bc batchConn, addr net.Addr, maxDatagram, maxAnswer int, h Handler, retry *sockets.Retrier) error {
	in := make([]ipv4.Message, Batch)
	inBuf := make([]byte, Batch*(maxDatagram+1))
	outBuf := make([]byte, Batch*maxAnswer)
	for i := range in {
		in[i].Buffers = [][]byte{inBuf[i*(maxDatagram+1) : (i+1)*(maxDatagram+1)]}
	}
	w := newWriter(bc)
	var pause time.Duration
	for {
		n, err := bc.ReadBatch(in, 0)
		if err != nil {
			if ReadFailed(err, addr, retry, &pause) {
				return nil
			}
			continue
		}
		pause = 0
		w.reset()
		for i := range n {
			k := len(w.answers)
			dst := outBuf[k*maxAnswer : k*maxAnswer : (k+1)*maxAnswer]
			answer, ok := h(dst, in[i].Buffers[0][:in[i].N], in[i].Addr)
			if ok {
				w.add(answer, in[i].Addr)
			}
		}
		w.flush()
	}
}

// writer sends one batch's answers, grouped for segmentation offload when
// the socket has it.
type writer struct {
	bc      batchConn
	segment bool // the kernel takes UDP_SEGMENT; cleared on its first refusal

	answers [][]byte
	addrs   []net.Addr
	grouped [Batch]bool
	out     []ipv4.Message
	iov     [Batch][Batch][]byte // out[g]'s buffers
	oob     [Batch][]byte        // out[g]'s UDP_SEGMENT control message
}

func newWriter(bc batchConn) *writer {
	w := &writer{
		bc:      bc,
		segment: segmentSupported,
		answers: make([][]byte, 0, Batch),
		addrs:   make([]net.Addr, 0, Batch),
		out:     make([]ipv4.Message, 0, Batch),
	}
	for g := range w.oob {
		w.oob[g] = newSegmentOOB()
	}
	return w
}

func (w *writer) reset() {
	clear(w.addrs) // let the addresses of the last batch go
	w.answers, w.addrs = w.answers[:0], w.addrs[:0]
}

func (w *writer) add(answer []byte, to net.Addr) {
	w.answers = append(w.answers, answer)
	w.addrs = append(w.addrs, to)
}

// flush sends the batch's answers: one message per answer, or, segmenting,
// one per group of equal-sized answers to one peer. A message the kernel
// does not take is dropped (the client resends); a segmented message it
// refuses ends segmentation and is sent again answer by answer.
func (w *writer) flush() {
	w.group()
	for sent := 0; sent < len(w.out); {
		m, err := w.bc.WriteBatch(w.out[sent:], 0)
		sent += m
		if err == nil || sent >= len(w.out) {
			continue
		}
		if w.segment && len(w.out[sent].Buffers) > 1 {
			w.segment = false
			w.regroup(sent)
			continue
		}
		sent++ // this one is lost; the client resends
	}
}

// group fills out from the answers.
func (w *writer) group() {
	w.out = w.out[:0]
	clear(w.grouped[:len(w.answers)])
	for i, a := range w.answers {
		if w.grouped[i] {
			continue
		}
		g := len(w.out)
		bufs := append(w.iov[g][:0], a)
		if w.segment && len(a) > 0 && len(a) <= maxSegment {
			total := len(a)
			for j := i + 1; j < len(w.answers) && total+len(a) <= maxSegmented; j++ {
				if !w.grouped[j] && len(w.answers[j]) == len(a) && sameAddr(w.addrs[i], w.addrs[j]) {
					bufs = append(bufs, w.answers[j])
					w.grouped[j] = true
					total += len(a)
				}
			}
		}
		var oob []byte
		if len(bufs) > 1 {
			oob = setSegment(w.oob[g], len(a))
		}
		w.out = append(w.out, ipv4.Message{Buffers: bufs, OOB: oob, Addr: w.addrs[i]})
	}
}

// regroup replaces out[from:] by one message per answer they carry.
func (w *writer) regroup(from int) {
	var answers [Batch][]byte
	var addrs [Batch]net.Addr
	n := 0
	for _, m := range w.out[from:] {
		for _, b := range m.Buffers {
			answers[n], addrs[n] = b, m.Addr
			n++
		}
	}
	w.out = w.out[:from]
	for i := range n {
		g := len(w.out)
		w.iov[g][0] = answers[i]
		w.out = append(w.out, ipv4.Message{Buffers: w.iov[g][:1], Addr: addrs[i]})
	}
}

func sameAddr(a, b net.Addr) bool {
	x, ok1 := a.(*net.UDPAddr)
	y, ok2 := b.(*net.UDPAddr)
	return ok1 && ok2 && x.Port == y.Port && x.IP.Equal(y.IP) && x.Zone == y.Zone
}
