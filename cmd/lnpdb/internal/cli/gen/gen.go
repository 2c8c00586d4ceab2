package gen

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/config"
	"github.com/lnpdb/lnpdb/internal/ingest/gen"
)

func Run(ctx context.Context, e *cliutil.Env, args []string) error {
	fs := cliutil.NewFlags(e, "gen", "OUT_DIR")
	var cfg gen.Config
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
	shape := fs.String("shape", "csv", "`csv`, or npac: ported numbers and blocks as NPAC bulk data files and NANPA/PA reports")
	if err := cliutil.ParseArgs(e, fs, args, 1, "want exactly one OUT_DIR"); err != nil {
		if errors.Is(err, flag.ErrHelp) || errors.Is(err, cliutil.ErrUsage) {
			return err
		}
		return fmt.Errorf("%w: %v", cliutil.ErrUsage, err) // a bad flag is a usage error: exit 2
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", cliutil.ErrUsage, err)
	}
	if *shape != "csv" && *shape != "npac" {
		return fmt.Errorf("%w: --shape is csv or npac, not %q", cliutil.ErrUsage, *shape)
	}
	cfg.Progress = e.Stderr
	dir := fs.Arg(0)
	start := time.Now()
	st, err := gen.Generate(ctx, dir, cfg)
	if err != nil {
		return err
	}
	if *shape == "npac" {
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
