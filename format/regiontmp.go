package format

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

type region struct{ b []byte }

func openRegion(path string, huge bool) (*region, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() == 0 {
		return &region{b: []byte{}}, nil
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(fi.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	return &region{b: b}, nil
}

func (r *region) Bytes() []byte { return r.b }
func (r *region) Len() int      { return len(r.b) }
func (r *region) At(i int) byte { return r.b[i] }
func (r *region) ReadAt(p []byte, off int64) (int, error) {
	if r.b == nil {
		return 0, errors.New("mmap: closed")
	}
	if off < 0 || int64(len(r.b)) < off {
		return 0, fmt.Errorf("mmap: invalid ReadAt offset %d", off)
	}
	n := copy(p, r.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
func (r *region) Close() error {
	if r.b == nil {
		return nil
	}
	b := r.b
	r.b = nil
	if len(b) == 0 {
		return nil
	}
	return syscall.Munmap(b)
}
func (r *region) Placement() string { return "file mapping" }

func newRegion(b, mem []byte, placement string) *region { return &region{b: b} }
