package jobsapi

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"testing"
)

// sevens reads n bytes of '7' without a line end, a block at a time.
type sevens struct{ left int }

var block = bytes.Repeat([]byte{'7'}, 64<<10)

func (s *sevens) Read(p []byte) (int, error) {
	if s.left == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), s.left)], block)
	s.left -= n
	return n, nil
}

// A 1 GB line between two numbers is one row, kept as no number (answered
// invalid), read in bounded memory: lineio holds at most its bound of it.
func TestParseCSVGigabyteLine(t *testing.T) {
	in := io.MultiReader(strings.NewReader("12015550123\n"), &sevens{left: 1 << 30}, strings.NewReader("\n12015550124\n"))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	nums, err := ParseCSV(in)
	runtime.ReadMemStats(&after)
	if err != nil || len(nums) != 3 || nums[0] != "12015550123" || nums[1] != "" || nums[2] != "12015550124" {
		t.Fatalf("%q %v", nums, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("reading a 1 GB line allocated %d MiB", alloc>>20)
	}
}

// A CSV bomb of a million commas a line does not split the line.
func TestParseCSVManyColumns(t *testing.T) {
	body := strings.Repeat("12015550123"+strings.Repeat(",", 1<<20-12)+"\n", 20)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	nums, err := ParseCSV(strings.NewReader(body))
	runtime.ReadMemStats(&after)
	if err != nil || len(nums) != 20 || nums[19] != "12015550123" {
		t.Fatalf("%d numbers, %v", len(nums), err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("20 lines of a million columns allocated %d MiB", alloc>>20)
	}
}
