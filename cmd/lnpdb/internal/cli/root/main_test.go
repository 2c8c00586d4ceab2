package root_test

import (
	"testing"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }
