// Package gen is lnpdb gen: a synthetic source directory of any size.
package gen

import (
	"context"
	"fmt"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/config"
	"github.com/lnpdb/lnpdb/internal/ingest/gen"
	"github.com/spf13/cobra"
)

type options struct {
	e     *cliutil.Env
	cfg   gen.Config
	shape string
}

// NewCmdGen returns lnpdb gen.
func NewCmdGen(e *cliutil.Env) *cobra.Command {
	opts := &options{e: e}
	cmd := &cobra.Command{
		Use:   "gen OUT_DIR",
		Short: "write a synthetic source directory of any size (for benchmarks and demos)",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGen(cmd.Context(), opts, args)
		},
	}
	fs := cmd.Flags()
	cfg := &opts.cfg
	fs.Int64Var(&cfg.Seed, "seed", 1, "random `seed`: the same flags write the same bytes")
	fs.IntVar(&cfg.Ported, "ported", 1_000_000, "ported numbers (`rows` of ported.csv)")
	fs.IntVar(&cfg.Codes, "codes", 0, "assigned NPA-NXX codes (0: max(500, ported/2000))")
	fs.IntVar(&cfg.Carriers, "carriers", 0, "carriers (0: scaled to the output, 30 to 3000)")
	fs.Float64Var(&cfg.Messaging, "messaging-share", gen.DefaultMessaging, "share of listed numbers with a messaging.csv row (0 to 1)")
	// --messaging was this flag's name, and lookup's --messaging a bool:
	// one LNPDB_MESSAGING meant two things.
	config.Alias(fs, "messaging", "messaging-share", e.Stderr)
	fs.Float64Var(&cfg.CNAM, "cnam", gen.DefaultCNAM, "share of listed numbers with a cnam.csv row (0 to 1)")
	fs.Float64Var(&cfg.Trust, "trust", gen.DefaultTrust, "share of listed numbers with a trust.csv row (0 to 1)")
	fs.StringVar(&opts.shape, "shape", "csv", "`csv`, or npac: ported numbers and blocks as NPAC bulk data files and NANPA/PA reports")
	return cmd
}

func runGen(ctx context.Context, opts *options, args []string) error {
	e, cfg := opts.e, opts.cfg
	if err := cliutil.Want(args, 1, "want exactly one OUT_DIR"); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", cliutil.ErrUsage, err)
	}
	if opts.shape != "csv" && opts.shape != "npac" {
		return fmt.Errorf("%w: --shape is csv or npac, not %q", cliutil.ErrUsage, opts.shape)
	}
	cfg.Progress = e.Stderr
	dir := args[0]
	start := time.Now()
	st, err := gen.Generate(ctx, dir, cfg)
	if err != nil {
		return err
	}
	if opts.shape == "npac" {
		ns, err := gen.WriteNPAC(ctx, dir)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.Stdout, "npac shape: %d subscription versions, %d pool blocks, %d SPIDs, %d codes, %d blocks in %s, %s, %s, %s, %s\n",
			ns.SubscriptionVersions, ns.PoolBlocks, ns.SPIDs, ns.Codes, ns.Blocks,
			gen.FileNPACSV, gen.FileNPACPool, gen.FileNPACSPID, gen.FileNANPACodes, gen.FilePABlockReport)
	}
	fmt.Fprintf(e.Stdout, "wrote %s: %d carriers, %d rate centers, %d codes (%d block rows), %d LRNs, %d ported, %d messaging, %d cnam, %d trust; %s in %s\n",
		dir, st.Carriers, st.RateCenters, st.Codes, st.Blocks, st.LRNs, st.Ported, st.Messaging, st.CNAM, st.Trust,
		cliutil.HumanBytes(st.Bytes), time.Since(start).Round(time.Millisecond))
	return nil
}
