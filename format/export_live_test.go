package format

// SetCompactWritten sets the hook Compact runs between writing the
// compacted file and renaming it into place; nil removes it.
func SetCompactWritten(f func()) { compactWritten = f }
