package cliutil

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
)

// HealthURL is the status URL of a server listening on addr (serve's
// --addr): a wildcard or empty host is asked on loopback.
func HealthURL(addr string) string {
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

// CheckStatus asks url (a server's /api/v1/status) and returns nil when it
// answers 200 with status "ok", an error saying why otherwise.
func CheckStatus(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
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

// DefaultAddr is serve's --addr, where lnpdb healthcheck asks by default.
const DefaultAddr = "127.0.0.1:8080"
