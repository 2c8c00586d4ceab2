package root

import (
	"bytes"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestManPage: lnpdb man writes roff that groff renders without a warning,
// with a section for every command and subcommand and every flag of each.
func TestManPage(t *testing.T) {
	code, page, errs := runCmd(t, "man")
	require.Equal(t, 0, code, errs)
	table := completionTable(NewCmdRoot(&cliutil.Env{Stdout: io.Discard, Stderr: io.Discard}))
	for _, cc := range table {
		assert.Contains(t, page, `.SS "lnpdb `+strings.Join(cc.words, " ")+`"`)
	}
	assert.NotRegexp(t, regexp.MustCompile(`[^\x00-\x7e]`), page, "roff input is ASCII")
	code, _, _ = runCmd(t, "man", "extra")
	assert.Equal(t, 2, code)

	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is not installed (Debian package groff-base): the page is not rendered")
	}
	// -ww: every warning; -P-cbou: plain text, no overstriking; a wide
	// line, so that no name is broken.
	cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-rLL=300n", "-P-cbou")
	cmd.Stdin = strings.NewReader(page)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	assert.Empty(t, stderr.String(), "groff's warnings")
	text := out.String()
	for _, section := range []string{"NAME", "SYNOPSIS", "COMMANDS", "ENVIRONMENT", "EXIT STATUS"} {
		assert.Regexp(t, `(?m)^`+section+`$`, text)
	}
	for _, cc := range table {
		name := "lnpdb " + strings.Join(cc.words, " ")
		assert.Regexp(t, `(?m)^   `+regexp.QuoteMeta(name)+`$`, text, "a section for %s", name)
		for _, f := range cc.flags {
			assert.Regexp(t, `(?m)^       `+regexp.QuoteMeta(f.name)+`( |$)`, text, "%s %s", name, f.name)
		}
	}
	assert.Contains(t, text, "postgres://…", "non-ASCII characters come through")
}
