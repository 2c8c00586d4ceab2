package root

import (
	"bytes"
	"context"
	"testing"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
)

// runCmd runs the binary's commands in-process.
func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), &cliutil.Env{Stdout: &out, Stderr: &errb}, args)
	return code, out.String(), errb.String()
}
