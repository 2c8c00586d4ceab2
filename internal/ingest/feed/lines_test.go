package feed

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/lineio"
)

// longLine is a feed whose second line is n bytes long, counting what is
// read of it.
type longLine struct {
	head string
	n    int64
	read int64
}

func (l *longLine) Read(p []byte) (int, error) {
	if l.head != "" {
		k := copy(p, l.head)
		l.head = l.head[k:]
		return k, nil
	}
	if l.read >= l.n {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), l.n-l.read))
	for i := range p[:k] {
		p[i] = 'x'
	}
	l.read += int64(k)
	return k, nil
}

// TestReadAnyLongLine: a feed line past 1 MiB (a few KB of zstd can hold
// one of gigabytes) is refused at once, naming its line, having read no
// more of it than the bound and a few buffers; CSV and NPAC alike.
func TestReadAnyLongLine(t *testing.T) {
	lv, err := os.ReadFile(latestView)
	require.NoError(t, err)
	first, _, _ := strings.Cut(string(lv), "\r")
	for _, head := range []string{feedHeader + "\n", first + "\r"} {
		src := &longLine{head: head, n: 256 << 20}
		err := ReadAny(src, "feed.csv", func(format.Update) error { return nil })
		require.ErrorIs(t, err, lineio.ErrTooLong, "%.20q", head)
		assert.Contains(t, err.Error(), "feed.csv:2: line longer than 1048576 bytes")
		assert.Less(t, src.read, int64(lineio.Max+(256<<10)), "bytes read of the line")
	}
	_, err = ParseCSV([]byte(feedHeader + "\n" + strings.Repeat("y", 2<<20)))
	assert.ErrorIs(t, err, lineio.ErrTooLong)
}
