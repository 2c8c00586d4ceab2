package inspect

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"
	_ "time/tzdata" // rate centers name IANA zones; do not depend on the host's zoneinfo

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
)

func Run(ctx context.Context, e *cliutil.Env, args []string) error {
	db, err := cliutil.OpenArg(e, "inspect", args)
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
