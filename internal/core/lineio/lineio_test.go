package lineio

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lines reads every line of r, writing a refused one as "!TOO LONG:n".
func lines(t *testing.T, r *Reader) []string {
	t.Helper()
	var out []string
	for {
		b, err := r.Next()
		if err == io.EOF {
			return out
		}
		var tl *TooLongError
		if errors.As(err, &tl) {
			require.Equal(t, r.Line(), tl.Line)
			out = append(out, "!TOO LONG")
			continue
		}
		require.NoError(t, err)
		out = append(out, string(b))
	}
}

func TestLineEnds(t *testing.T) {
	for in, want := range map[string][]string{
		"":                   nil,
		"a":                  {"a"},
		"a\n":                {"a"},
		"a\r\nb\rc\nd":       {"a", "b", "c", "d"},
		"\n\n":               {"", ""},
		"\r\r\n\n":           {"", "", ""},
		"\ufeffa,b\n\ufeffc": {"a,b", "\ufeffc"},
		"\ufeff":             nil,
		"\ufeff\n":           {""},
		"x\r":                {"x"},
		"abc\r\n\r\n":        {"abc", ""},
		"\xef\xbb":           {"\xef\xbb"},
		"tab\tand \"quote\n": {"tab\tand \"quote"},
		"a\r\rb":             {"a", "", "b"},
		"a\n\rb":             {"a", "", "b"},
		strings.Repeat("x", 70000) + "\r" + strings.Repeat("y", 300) + "\n": {strings.Repeat("x", 70000), strings.Repeat("y", 300)},
	} {
		for _, small := range []bool{false, true} {
			var src io.Reader = strings.NewReader(in)
			if small {
				src = iotest.OneByteReader(src) // every line end split across reads
			}
			assert.Equal(t, want, lines(t, NewReader(src)), "%q", in)
		}
	}
}

func TestTooLong(t *testing.T) {
	in := "ok\n" + strings.Repeat("x", 11) + "\n" + strings.Repeat("y", 10) + "\r\n" + strings.Repeat("z", 100) + "\rlast"
	r := NewReaderMax(iotest.HalfReader(strings.NewReader(in)), 10)
	assert.Equal(t, []string{"ok", "!TOO LONG", strings.Repeat("y", 10), "!TOO LONG", "last"}, lines(t, r))
	assert.Equal(t, 5, r.Line())

	_, err := NewReaderMax(strings.NewReader("12345678901"), 10).Next()
	assert.ErrorIs(t, err, ErrTooLong)
	assert.EqualError(t, err, "line longer than 10 bytes")
}

// endless is a line that never ends, counting the bytes read from it.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	e.n += int64(len(p))
	return len(p), nil
}

// TestTooLongAtOnce: a line past the bound is refused having read no more
// than the bound and a buffer of it, and the reader holds no more than that.
func TestTooLongAtOnce(t *testing.T) {
	src := &endless{}
	r := NewReader(src)
	_, err := r.Next()
	require.ErrorIs(t, err, ErrTooLong)
	assert.LessOrEqual(t, src.n, int64(Max+2*bufSize))
	assert.LessOrEqual(t, cap(r.buf), Max+bufSize)
}

// TestReadError: an error of the input is returned, and again after.
func TestReadError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(boom)))
	b, err := r.Next()
	require.NoError(t, err)
	assert.Equal(t, "a", string(b))
	_, err = r.Next()
	assert.ErrorIs(t, err, boom)
	_, err = r.Next()
	assert.ErrorIs(t, err, boom)
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("a\r\nb\rc\n\ufeffd"), uint8(3))
	f.Add([]byte("\ufeff0123456789\n01234567890\r\n"), uint8(10))
	f.Fuzz(func(t *testing.T, data []byte, max uint8) {
		m := int(max%32) + 1
		r := NewReaderMax(iotest.HalfReader(strings.NewReader(string(data))), m)
		// The lines and refusals match a plain split of the input.
		want := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(strings.TrimPrefix(string(data), "\ufeff"))
		parts := strings.Split(want, "\n")
		if parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
		for i, p := range parts {
			if len(p) > m {
				parts[i] = "!TOO LONG"
			}
		}
		got := lines(t, r)
		if len(parts) == 0 {
			parts = nil
		}
		require.Equal(t, parts, got)
	})
}
