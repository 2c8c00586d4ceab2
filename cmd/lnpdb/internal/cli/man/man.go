// Package man is lnpdb man: the manual page, every command and flag, in
// roff, written by cobra/doc from the command tree, so that a command or
// flag added is documented without anything else to change.
package man

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/buildinfo"
)

// NewCmdMan returns lnpdb man.
func NewCmdMan(e *cliutil.Env) *cobra.Command {
	return &cobra.Command{
		Use:   "man",
		Short: "print the manual page, every command and flag, in roff: man > lnpdb.1",
		Long:  "Print the manual page in roff (man(7) macros): lnpdb man > lnpdb.1, or lnpdb man | man -l -.\nIt holds the page of lnpdb and then of each command, one after another.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cliutil.Want(args, 0, "man takes no arguments"); err != nil {
				return err
			}
			return write(e.Stdout, cmd.Root(), buildinfo.Read())
		},
	}
}

// write writes the page of root and then of every command under it, in
// the order help lists them, to w.
func write(w io.Writer, root *cobra.Command, info buildinfo.Info) error {
	// The page says when the commit built was made, not when it was
	// printed: the same binary prints the same page. A build that did not
	// record it dates it now (or SOURCE_DATE_EPOCH), as cobra/doc does.
	var date *time.Time
	if t, err := time.Parse(time.RFC3339, info.Time); err == nil {
		date = &t
	}
	root.DisableAutoGenTag = true // no "generated on <date>" line
	var b bytes.Buffer
	var page func(c *cobra.Command) error
	page = func(c *cobra.Command) error {
		if c != root && (!c.IsAvailableCommand() || c.Name() == "help") {
			return nil
		}
		c.DisableAutoGenTag = true
		h := &doc.GenManHeader{
			Title:   strings.ToUpper(strings.ReplaceAll(c.CommandPath(), " ", "-")),
			Section: "1",
			Date:    date,
			Source:  "lnpdb " + info.Version,
			Manual:  "lnpdb manual",
		}
		if err := doc.GenMan(c, h, &b); err != nil {
			return err
		}
		for _, sub := range c.Commands() {
			if err := page(sub); err != nil {
				return err
			}
		}
		return nil
	}
	if err := page(root); err != nil {
		return err
	}
	_, err := io.WriteString(w, ascii(b.String()))
	return err
}

// ascii returns roff with each character outside ASCII as its escape
// \[uXXXX]: roff input is ASCII.
func ascii(roff string) string {
	var b strings.Builder
	for _, r := range roff {
		if r > 0x7e {
			fmt.Fprintf(&b, `\[u%04X]`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
