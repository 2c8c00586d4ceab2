package lrn

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lnpdb/lnpdb/format"
)

func TestDBError(t *testing.T) {
	assert.Same(t, ErrClosed, dbError(format.ErrClosed))
	err := dbError(&format.CorruptError{Section: "PORTED", Reason: "bad record"})
	assert.ErrorIs(t, err, format.ErrCorrupt)
	assert.False(t, errors.Is(err, ErrNotFound) || errors.Is(err, ErrInvalidNumber))
	assert.Equal(t, "lrn: format: corrupt table: section PORTED: bad record", err.Error())
}
