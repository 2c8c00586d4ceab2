//go:build !linux

package udpbatch

const segmentSupported = false

func newSegmentOOB() []byte { return nil }

func setSegment(oob []byte, _ int) []byte { return oob }
