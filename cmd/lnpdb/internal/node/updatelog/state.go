package updatelog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/lnpdb/lnpdb/internal/core/atomicfile"
	"github.com/lnpdb/lnpdb/internal/core/vfs"
)

// StatePath is where the follower of the table at path records how far it
// has applied the log.
func StatePath(path string) string { return path + ".updatelog" }

// state is what a follower records: the last sequence of which log it has
// passed (every batch up to it is in the table's journal or file), and the
// batches up to it that the table refused and that are therefore not in it
// (ascending).
type state struct {
	Log     string  `json:"log"`
	Seq     int64   `json:"seq"`
	Skipped []int64 `json:"skipped,omitempty"`
}

// readState reads the state file at path; a missing file is the zero
// state (nothing applied yet).
func readState(fs vfs.FS, path string) (state, error) {
	b, err := vfs.ReadFile(fs, path)
	if errors.Is(err, os.ErrNotExist) {
		return state{}, nil
	}
	if err != nil {
		return state{}, err
	}
	return parseState(b, path)
}

// parseState decodes a state file; name is used in errors.
func parseState(b []byte, name string) (state, error) {
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		return state{}, fmt.Errorf("%s: not an update log state (want {\"log\":ID,\"seq\":N}): %w", name, err)
	}
	if s.Seq < 0 || (s.Seq > 0 && s.Log == "") {
		return state{}, fmt.Errorf("%s: sequence %d of log %q is not a position in a log", name, s.Seq, s.Log)
	}
	for i, q := range s.Skipped {
		if q <= 0 || q > s.Seq || (i > 0 && q <= s.Skipped[i-1]) {
			return state{}, fmt.Errorf("%s: skipped batches %v are not ascending sequences up to %d", name, s.Skipped, s.Seq)
		}
	}
	return s, nil
}

// writeState replaces the state file through atomicfile (temporary file,
// fsync, rename, directory fsync). A crash before the rename brings the
// previous state back, which applies some batches again, harmlessly (see
// the package doc).
func writeState(fs vfs.FS, path string, s state) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	err = atomicfile.Write(fs, path, func(f vfs.File) error {
		_, err := f.Write(append(b, '\n'))
		return err
	}, atomicfile.Options{})
	// After ErrDirSync the new position is in place; a crash may still
	// bring the previous one back, which is harmless as said above.
	if err != nil && !errors.Is(err, atomicfile.ErrDirSync) {
		return fmt.Errorf("recording the applied update log position in %s: %w", path, err)
	}
	return nil
}
