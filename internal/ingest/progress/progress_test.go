package progress

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSilentWhenNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	assert.Nil(t, New(&buf, "x", 10), "a buffer is not a terminal")
	f, err := os.CreateTemp(t.TempDir(), "out")
	require.NoError(t, err)
	defer f.Close()
	b := New(f, "x", 10)
	assert.Nil(t, b, "a regular file is not a terminal")
	b.Add(5) // a nil Bar must be usable
	b.Done()
	st, err := f.Stat()
	require.NoError(t, err)
	assert.Zero(t, st.Size())
}

func TestRender(t *testing.T) {
	assert.Equal(t, "ported.csv  500.0k / 1.0M   50.0%  250.0k/s  2s",
		Render("ported.csv", 500000, 1000000, 2*time.Second))
	assert.Equal(t, "rows  1.5G  1.5G/s  1s", Render("rows", 1500000000, 0, time.Second))
	assert.Equal(t, "rows  7  0/s  0s", Render("rows", 7, 0, 0))
}
