//go:build !unix

package build

// peakRSS is 0, unknown, where there is no getrusage: build's report leaves
// the peak out.
func peakRSS() int64 { return 0 }
