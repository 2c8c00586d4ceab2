// Package udpbatch owns the UDP loop the softswitch front ends share: read
// datagrams in batches (recvmmsg through golang.org/x/net), answer each with
// a handler, and send the answers in batches (sendmmsg), on a few goroutines
// per socket. A busy server thus pays two system calls per batch instead of
// two per query, and no goroutine or allocation per datagram of its own.
package udpbatch

import (
	"errors"
	"fmt"
	"net"
	"sync"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
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

type batchConn interface {
	ReadBatch([]ipv4.Message, int) (int, error)
	WriteBatch([]ipv4.Message, int) (int, error)
}

// Serve runs readers goroutines answering datagrams on conn with h until
// conn is closed (then it returns nil) or a read fails (that error).
// maxDatagram and maxAnswer size each goroutine's buffers; a longer
// datagram is cut to maxDatagram+1 bytes, so that h can tell it is too long.
func Serve(conn *net.UDPConn, readers, maxDatagram, maxAnswer int, h Handler) error {
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
			errc <- loop(bc, maxDatagram, maxAnswer, h)
		}()
	}
	err := <-errc
	conn.Close() // ends the other readers
	wg.Wait()
	return err
}

func loop(bc batchConn, maxDatagram, maxAnswer int, h Handler) error {
	in := make([]ipv4.Message, Batch)
	out := make([]ipv4.Message, Batch)
	inBuf := make([]byte, Batch*(maxDatagram+1))
	outBuf := make([]byte, Batch*maxAnswer)
	for i := range in {
		in[i].Buffers = [][]byte{inBuf[i*(maxDatagram+1) : (i+1)*(maxDatagram+1)]}
		out[i].Buffers = [][]byte{nil}
	}
	for {
		n, err := bc.ReadBatch(in, 0)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("reading: %w", err)
		}
		k := 0
		for i := range n {
			dst := outBuf[k*maxAnswer : k*maxAnswer : (k+1)*maxAnswer]
			answer, ok := h(dst, in[i].Buffers[0][:in[i].N], in[i].Addr)
			if !ok {
				continue
			}
			out[k].Buffers[0] = answer
			out[k].Addr = in[i].Addr
			k++
		}
		for sent := 0; sent < k; {
			m, err := bc.WriteBatch(out[sent:k], 0)
			if err != nil {
				break // the clients resend; nothing to do here
			}
			sent += m
		}
	}
}
