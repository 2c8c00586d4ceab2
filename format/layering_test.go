package format_test

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/trust"
)

// TestDocVersion: the byte layout in the package doc names the version
// the package writes.
func TestDocVersion(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	m := regexp.MustCompile(`\[8,10\)\s+format version, (\d+)`).FindSubmatch(b)
	require.NotNil(t, m, "the header's version field in the package doc")
	assert.Equal(t, strconv.Itoa(format.Version), string(m[1]))
}

// TestSpamTypes: the spam types a table stores, in their stored order, are
// trust's vocabulary.
func TestSpamTypes(t *testing.T) {
	assert.Equal(t, trust.SpamTypes, format.StoredSpamTypes)
}
