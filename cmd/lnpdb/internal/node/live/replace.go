package live

// Replace runs install — which renames a new table file over the table's
// path, or leaves the path alone — while no reload or compaction runs, and
// then reloads the table if its file changed. A table fetched from
// elsewhere goes in this way, so that a compaction cannot rename its own
// file over it, and it is served without waiting for the watcher. It
// returns install's error.
func (r *Runner) Replace(install func() error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := install()
	r.changedLocked()
	return err
}
