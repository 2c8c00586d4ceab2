//go:build !unix

package sockets

// DescriptorLimit returns 0: the open-file limit is unknown here.
func DescriptorLimit() int { return 0 }
