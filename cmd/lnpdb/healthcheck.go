package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/config"
)

// healthURL is the status URL of a server listening on addr (serve's
// --addr): a wildcard or empty host is asked on loopback.
func healthURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr + "/api/v1/status" // the client's error names it
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/api/v1/status"
}

// runHealthcheck is lnpdb healthcheck [URL]: exit 0 when a server's
// /api/v1/status answers 200 with status "ok", 1 otherwise, saying why.
// Without a URL it asks the server that serve, run in the same
// environment, listens on: LNPDB_ADDR, or serve's default --addr. It
// is what a container's HEALTHCHECK or a supervisor runs where the image
// holds lnpdb and nothing else (no curl, no shell).
func runHealthcheck(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "healthcheck", "[URL]")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this `duration`")
	if err := parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return fmt.Errorf("%w: want at most one URL", errUsage)
	}
	url := healthURL(defaultAddr)
	if addr, ok := os.LookupEnv(config.EnvName("addr")); ok && addr != "" {
		url = healthURL(addr)
	}
	if fs.NArg() == 1 {
		url = fs.Arg(0)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := checkStatus(ctx, url); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s: ok\n", url)
	return nil
}

// checkStatus asks url (a server's /api/v1/status) and returns nil when it
// answers 200 with status "ok", an error saying why otherwise.
func checkStatus(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s: reading the answer: %w", url, err)
	}
	var st struct {
		Status string `json:"status"`
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	if err := json.Unmarshal(body, &st); err != nil || st.Status != "ok" {
		return fmt.Errorf("%s: status %q, want \"ok\"", url, st.Status)
	}
	return nil
}
