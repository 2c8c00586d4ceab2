package kindorder

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBit(t *testing.T) {
	assert.Equal(t, uint8(1), Bit(true))
	assert.Equal(t, uint8(0), Bit(false))
}
