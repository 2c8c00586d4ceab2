package format

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBitPackingRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		var widths []uint
		total := uint(keyBits)
		for total < 128 && len(widths) < maxFields {
			w := uint(1 + r.IntN(64))
			if total+w > 128 {
				break
			}
			widths = append(widths, w)
			total += w
		}
		l, err := newLayout(widths...)
		require.NoError(t, err)
		const n = 50
		vals := make([][]uint64, n)
		var bw bitWriter
		for i := range n {
			v := []uint64{r.Uint64() & (1<<keyBits - 1)}
			bw.put(v[0], keyBits)
			for _, w := range widths {
				x := r.Uint64()
				if w < 64 {
					x &= 1<<w - 1
				}
				v = append(v, x)
				bw.put(x, w)
			}
			vals[i] = v
		}
		buf := bw.finish()
		require.Len(t, buf, int(l.recordBytes(n)), "trial %d", trial)
		for i := range n {
			bit := uint64(i) * uint64(l.width)
			var b [17]byte
			copy(b[:], buf[bit/8:])
			w := loadWindow(&b, uint(bit%8))
			require.Equal(t, vals[i][0], w.field(0, keyBits), "trial %d record %d key", trial, i)
			for f, wd := range widths {
				require.Equal(t, vals[i][f+1], w.field(l.pos[f], wd), "trial %d record %d field %d", trial, i, f)
			}
		}
	}
}

func TestLayoutLimits(t *testing.T) {
	_, err := newLayout(64, 42)
	require.Error(t, err, "23+64+42 bits exceed 128")
	_, err = newLayout(65)
	require.Error(t, err)
	l, err := newLayout(64, 41)
	require.NoError(t, err)
	require.Equal(t, uint(128), l.width)
}

func TestWidthFor(t *testing.T) {
	for n, want := range map[int]uint{0: 1, 1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 256: 8, 257: 9} {
		require.Equal(t, want, widthFor(n), "n=%d", n)
	}
}
