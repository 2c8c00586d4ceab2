package sipredirect

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/diptest"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testio"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
)

// TestSipgoLogs: what sipgo logs of a peer's doing (here, connections reset
// by their peers, one mid-request) goes through the server's logger, at
// Debug and tagged lib=sipgo, and nothing through slog.Default.
func TestSipgoLogs(t *testing.T) {
	var def testio.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })

	var ours testio.Buffer
	s, err := New(Config{Tables: diptest.Fixed(testdb.Sample(t)), Logger: slog.New(slog.NewJSONHandler(&ours, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.ServeTCP(l) }()

	for i := range 3 {
		c, err := net.Dial("tcp", l.Addr().String())
		require.NoError(t, err)
		if i == 0 {
			_, err = c.Write([]byte("INVITE sip:+12025550123@example.net SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:1\r\n"))
			require.NoError(t, err)
		}
		require.Eventually(t, func() bool { return s.TCPConns() == 1 }, 5*time.Second, 10*time.Millisecond)
		require.NoError(t, c.(*net.TCPConn).SetLinger(0)) // close with a reset
		require.NoError(t, c.Close())
		require.Eventually(t, func() bool { return s.TCPConns() == 0 }, 5*time.Second, 10*time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, s.Shutdown(ctx))
	<-done

	assert.Empty(t, def.String(), "nothing through slog.Default")
	resets := 0
	for _, line := range strings.Split(strings.TrimSpace(ours.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		if rec["lib"] != "sipgo" {
			assert.NotContains(t, []string{"WARN", "ERROR"}, rec["level"], "a record of the server's own: %s", line)
			continue
		}
		assert.Equal(t, "DEBUG", rec["level"], line)
		if rec["msg"] == "Read error" {
			resets++
		}
	}
	assert.Equal(t, 3, resets, "each reset connection, at Debug:\n%s", ours.String())
}
