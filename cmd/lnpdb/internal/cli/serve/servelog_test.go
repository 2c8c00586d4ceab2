package serve

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/httpapi"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testio"
)

// blockedOnce is a log output that takes no write until released.
type blockedOnce struct {
	testio.Buffer
	entered, release chan struct{}
	once             sync.Once
}

func (b *blockedOnce) Write(p []byte) (int, error) {
	b.once.Do(func() { close(b.entered) })
	<-b.release
	return b.Buffer.Write(p)
}

// TestServeLogDropNotice checks that the notice of dropped lines is a
// record in the log's own format.
func TestServeLogDropNotice(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			out := &blockedOnce{entered: make(chan struct{}), release: make(chan struct{})}
			lw := httpapi.NewLogWriter(out, time.Millisecond)
			log, err := newServeLog(lw, format, "info")
			require.NoError(t, err)
			log.Info("first")
			<-out.entered
			big := strings.Repeat("x", 1<<20)
			for range 3 {
				log.Info("filler", "pad", big) // more than the buffer holds
			}
			dropped := lw.Dropped()
			require.Positive(t, dropped)
			close(out.release)
			require.NoError(t, lw.Close())
			var notice string
			for _, line := range strings.Split(out.String(), "\n") {
				if strings.Contains(line, "lines dropped") {
					notice = line
				}
			}
			require.NotEmpty(t, notice, "a notice of the dropped lines")
			if format == "json" {
				var rec map[string]any
				require.NoError(t, json.Unmarshal([]byte(notice), &rec), notice)
				assert.Equal(t, "WARN", rec["level"])
				assert.Equal(t, float64(dropped), rec["dropped"])
			} else {
				assert.Contains(t, notice, `level=WARN msg="log output too slow: lines dropped" dropped=`)
			}
		})
	}
	_, err := newServeLog(httpapi.NewLogWriter(&testio.Buffer{}, 0), "xml", "info")
	assert.ErrorIs(t, err, cliutil.ErrUsage)
	_, err = newServeLog(httpapi.NewLogWriter(&testio.Buffer{}, 0), "json", "loud")
	assert.ErrorIs(t, err, cliutil.ErrUsage)
}

// TestServeLogLevelAndDurations: --log-level leaves out the records below
// it, and a duration in a JSON line is Go's text of it, not nanoseconds.
func TestServeLogLevelAndDurations(t *testing.T) {
	var out testio.Buffer
	lw := httpapi.NewLogWriter(&out, time.Millisecond)
	log, err := newServeLog(lw, "json", "warn")
	require.NoError(t, err)
	log.Info("left out")
	log.Warn("kept", "duration", 1500*time.Millisecond)
	require.NoError(t, lw.Close())
	assert.NotContains(t, out.String(), "left out")
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(out.String())), &rec), out.String())
	assert.Equal(t, "1.5s", rec["duration"])

	out = testio.Buffer{}
	lw = httpapi.NewLogWriter(&out, time.Millisecond)
	log, err = newServeLog(lw, "text", "DEBUG")
	require.NoError(t, err)
	log.Debug("shown")
	require.NoError(t, lw.Close())
	assert.Contains(t, out.String(), "shown")
}
