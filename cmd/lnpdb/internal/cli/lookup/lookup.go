// Package lookup is lnpdb lookup: numbers looked up in a table, printed as the REST API answers.
package lookup

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cnam"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/core/nanp"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/lnpdb/lnpdb/messaging"
	"github.com/lnpdb/lnpdb/trust"
	"github.com/spf13/cobra"
)

// errorBody is the CONTRACT §6 error body, with the texts the REST API
// answers (cmd/lnpdb/internal/frontend/httpapi).
type errorBody struct {
	Error   string `json:"error"`
	Code    string `json:"code"`
	Details string `json:"details"`
}

var (
	invalidBody = errorBody{
		Error:   "Invalid phone number format",
		Code:    "INVALID_PHONE_NUMBER",
		Details: "Phone number must be 11 digits starting with 1",
	}
	notFoundBody = errorBody{
		Error:   "Number not found",
		Code:    "NUMBER_NOT_FOUND",
		Details: "The number's NPA-NXX code is not assigned to any carrier",
	}
	internalBody = errorBody{
		Error:   "Internal server error",
		Code:    "INTERNAL_ERROR",
		Details: "The lookup failed; see the error output",
	}
)

// bodyFor returns the error body for a lookup error.
func bodyFor(err error) errorBody {
	switch {
	case errors.Is(err, lnpdb.ErrInvalidNumber):
		b := invalidBody
		if rule, ok := nanp.Rule(err); ok {
			b.Details = rule // the NANP rule a number of the right shape breaks
		}
		return b
	case errors.Is(err, lnpdb.ErrNotFound):
		return notFoundBody
	}
	return internalBody
}

type options struct {
	e                       *cliutil.Env
	db, typ, now            string
	enhanced, withMessaging bool
}

// NewCmdLookup returns lnpdb lookup.
func NewCmdLookup(e *cliutil.Env) *cobra.Command {
	opts := &options{e: e}
	cmd := &cobra.Command{
		Use:   "lookup [--db FILE] NUMBER...",
		Short: "look numbers up in a table and print the REST response bodies",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLookup(cmd.Context(), opts, args)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.db, "db", "", "table `file` to read (default: build the embedded sample into a temporary directory)")
	fs.BoolVar(&opts.enhanced, "enhanced", false, "add enhanced_lrn_data (type lrn)")
	fs.BoolVar(&opts.withMessaging, "messaging", false, "add the messaging object (type lrn)")
	fs.StringVar(&opts.typ, "type", "lrn", "lookup `type`: lrn, cnam, messaging or trust")
	fs.StringVar(&opts.now, "now", "", "score trust as at this RFC 3339 `time` (default: the clock)")
	return cmd
}

// runLookup prints, for each number, one line holding exactly the JSON body
// the REST API answers: the lookup's result or the error body. It fails (exit
// status 1) after printing them all when any lookup failed.
func runLookup(ctx context.Context, opts *options, args []string) error {
	e := opts.e
	if err := cliutil.Want(args, -1, "no numbers given"); err != nil {
		return err
	}
	numbers := args
	var topt trust.Options
	if opts.now != "" {
		t, err := time.Parse(time.RFC3339, opts.now)
		if err != nil {
			return fmt.Errorf("%w: --now: %v", cliutil.ErrUsage, err)
		}
		topt.Now = t
	}
	switch opts.typ {
	case "lrn":
	case "cnam", "messaging", "trust":
		if opts.enhanced || opts.withMessaging {
			return fmt.Errorf("%w: --enhanced and --messaging apply to --type lrn only", cliutil.ErrUsage)
		}
	default:
		return fmt.Errorf("%w: unknown --type %q (want lrn, cnam, messaging or trust)", cliutil.ErrUsage, opts.typ)
	}

	path, cleanup, err := cliutil.TablePath(ctx, opts.db)
	if err != nil {
		return err
	}
	defer cleanup()
	// Open: a lookup writes nothing, and answers beside a server that
	// has the table open for updates, with the updates journaled so far.
	db, err := format.Open(path)
	if err != nil {
		return err
	}
	defer db.Close()

	w := bufio.NewWriter(e.Stdout)
	failed := 0
	emit := func(v any, err error) error {
		if err != nil {
			failed++
			body := bodyFor(err)
			if body.Code == internalBody.Code {
				fmt.Fprintf(e.Stderr, "lnpdb lookup: %v\n", err)
			}
			v = body
		}
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		w.Write(b)
		return w.WriteByte('\n')
	}
	switch opts.typ {
	case "lrn":
		for _, a := range lrn.LookupMany(db, numbers, lrn.Options{Enhanced: opts.enhanced, Messaging: opts.withMessaging}, nil) {
			if err := emit(a.Result, a.Err); err != nil {
				return err
			}
		}
	default:
		for _, n := range numbers {
			var (
				v   any
				err error
			)
			switch opts.typ {
			case "cnam":
				v, err = cnam.Lookup(db, n, cnam.Options{})
			case "messaging":
				v, err = messaging.Lookup(db, n, messaging.Options{})
			case "trust":
				v, err = trust.Lookup(db, n, topt)
			}
			if err := emit(v, err); err != nil {
				return err
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return &cliutil.ExitError{Code: 1, Err: fmt.Errorf("%d of %d lookups failed", failed, len(numbers))}
	}
	return nil
}
