package main

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/root"
)

// TestManPage: lnpdb man writes roff that groff renders without a warning,
// a page for lnpdb and for every command and subcommand, each with its
// flags.
func TestManPage(t *testing.T) {
	code, page, errs := runCmd(t, "man")
	require.Equal(t, 0, code, errs)
	assert.NotRegexp(t, regexp.MustCompile(`[^\x00-\x7e]`), page, "roff input is ASCII")
	titles := []string{"LNPDB"}
	for _, c := range root.Commands() {
		titles = append(titles, "LNPDB-"+strings.ToUpper(c.Name))
		for _, s := range c.Subs {
			titles = append(titles, "LNPDB-"+strings.ToUpper(c.Name+"-"+s))
		}
	}
	for _, title := range titles {
		assert.Contains(t, page, `.TH "`+title+`" "1"`)
	}
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
	for _, section := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SEE ALSO"} {
		assert.Regexp(t, `(?m)^`+section+`$`, text)
	}
	for _, name := range []string{"lnpdb-serve", "lnpdb-key-new", "lnpdb-journal-recover", "lnpdb-completion-powershell"} {
		assert.Regexp(t, `(?m)^       `+regexp.QuoteMeta(name)+` - `, text, "a page for %s", name)
	}
	for _, flag := range []string{"--updates-log-file", "--db-url-key-file", "--accounts", "--label", "--outside-log", "--temp-dir"} {
		assert.Regexp(t, `(?m)^       `+regexp.QuoteMeta(flag)+`[=[ ]`, text, flag)
	}
	assert.Contains(t, text, "LNPDB_SOME_NAME_FILE", "the environment is said")
	assert.Contains(t, text, "postgres://…", "non-ASCII characters come through")
}
