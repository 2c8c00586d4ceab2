package updatelog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// StatePath is where the follower of the table at path records how far it
// has applied the log.
func StatePath(path string) string { return path + ".updatelog" }

// state is what a follower records: the last sequence of which log it has
// applied (every batch up to it is in the table's journal or file).
type state struct {
	Log string `json:"log"`
	Seq int64  `json:"seq"`
}

// readState reads the state file at path; a missing file is the zero
// state (nothing applied yet).
func readState(path string) (state, error) {
	b, err := os.ReadFile(path)
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
	return s, nil
}

// writeState replaces the state file: a temporary file, fsync'd (so that
// the name never points at a file without its contents), renamed over it.
// The directory is not fsync'd: a crash may bring the previous state back,
// which applies some batches again, harmlessly (see the package doc).
func writeState(path string, s state) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("recording the applied update log position in %s: %w", path, err)
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("recording the applied update log position in %s: %w", path, err)
	}
	return nil
}
