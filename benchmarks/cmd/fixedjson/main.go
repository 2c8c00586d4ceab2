// Command fixedjson is the ceiling of the HTTP benchmark (http/run.sh): a
// bare net/http server that answers every request with one fixed JSON body,
// read once from a file, and does nothing else: no routing, no
// authentication, no decoding, no lookup, no logging.
//
//	fixedjson -addr 127.0.0.1:8091 -body answer.json
//
// Given the body of a real LRN answer, the difference between its figures and
// lnpdb serve's, measured in the same run, is what the adapter costs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8091", "`host:port` to listen on")
	bodyPath := flag.String("body", "", "`file` holding the JSON body to answer with (required)")
	flag.Parse()
	if err := run(*addr, *bodyPath); err != nil {
		fmt.Fprintln(os.Stderr, "fixedjson:", err)
		os.Exit(1)
	}
}

func run(addr, bodyPath string) error {
	if bodyPath == "" {
		return errors.New("-body FILE is required")
	}
	body, err := os.ReadFile(bodyPath)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	ctype := []string{"application/json"}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Read the request body as any real handler must, so that the
			// connection can be reused.
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header()["Content-Type"] = ctype
			_, _ = w.Write(body)
		}),
		ReadHeaderTimeout: 5 * time.Second,
	}
	fmt.Fprintf(os.Stderr, "fixedjson: %d-byte body on http://%s\n", len(body), ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err = <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}
