// Package partread is a client that reads part of an HTTP answer and
// resets its connection, for the tests of what such an answer is charged.
package partread

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
)

// Post sends a JSON POST of body to path with the API key key on conn,
// reads the answer's head, then — once ready returns — n bytes of its
// body, and resets the connection (RST, not FIN). It returns the answer's
// status.
func Post(conn *net.TCPConn, path, key, body string, n int, ready func()) (int, error) {
	if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s",
		path, key, len(body), body); err != nil {
		return 0, err
	}
	ready()
	res, err := http.ReadResponse(bufio.NewReaderSize(conn, 512), nil)
	if err != nil {
		return 0, err
	}
	if _, err := io.ReadFull(res.Body, make([]byte, n)); err != nil {
		return res.StatusCode, err
	}
	if err := conn.SetLinger(0); err != nil {
		return res.StatusCode, err
	}
	return res.StatusCode, conn.Close()
}
