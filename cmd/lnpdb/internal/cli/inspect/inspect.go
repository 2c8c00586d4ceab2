// Package inspect is lnpdb inspect: a table's sections, counts, sizes and checksums.
package inspect

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/spf13/cobra"
)

type options struct {
	e  *cliutil.Env
	db string
}

// NewCmdInspect returns lnpdb inspect.
func NewCmdInspect(e *cliutil.Env) *cobra.Command {
	opts := &options{e: e}
	cmd := &cobra.Command{
		Use:   "inspect --db FILE",
		Short: "describe a table: sections, counts, sizes, checksums",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInspect(cmd.Context(), opts, args)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.db, "db", "", "the table `file`")
	return cmd
}

func runInspect(ctx context.Context, opts *options, args []string) error {
	e := opts.e
	db, err := cliutil.OpenArg(e, "inspect", opts.db, args)
	if err != nil {
		return err
	}
	defer db.Close()
	info := db.Info()
	w := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "file\t%s\n", info.Path)
	fmt.Fprintf(w, "format version\t%d\n", info.Version)
	fmt.Fprintf(w, "size\t%d bytes (%s)\n", info.Size, cliutil.HumanBytes(info.Size))
	fmt.Fprintf(w, "built\t%s\n", info.BuiltAt.Format(time.RFC3339))
	c := info.Counts
	fmt.Fprintf(w, "counts\tcarriers %d, rate centers %d, LRNs %d, codes %d, thousands-blocks %d\n", c.Carriers, c.RateCenters, c.LRNs, c.Codes, c.ThousandsBlocks)
	fmt.Fprintf(w, "\tported %d, messaging %d, CNAM %d, trust %d\n", c.Ported, c.Messaging, c.CNAM, c.Trust)
	if c.Ported > 0 {
		fmt.Fprintf(w, "per ported number\t%.2f bytes\n", float64(info.Size)/float64(c.Ported))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "SECTION\tENCODING\tOFFSET\tLENGTH\tXXHASH64")
	for _, s := range info.Sections {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%016x\n", s.ID, s.Encoding, s.Offset, s.Length, s.Checksum)
	}
	return w.Flush()
}
