package gen

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The files WriteNPAC writes: the NPAC bulk data download files and the
// public numbering reports (docs/DATA.md).
const (
	FileNPACSV        = "SV.ACTIVE.dat"                // subscription versions, from ported.csv
	FileNPACPool      = "NBP.ACTIVE.dat"               // number pool blocks: blocks.csv's pooled blocks
	FileNPACSPID      = "SPID.dat"                     // service providers, from carriers.csv
	FileNANPACodes    = "allutlzd.txt"                 // NANPA's code report: blocks.csv's codes
	FilePABlockReport = "AllBlocksAugmentedReport.txt" // the PA's block report: blocks.csv's thousands-blocks
)

// NPACStats counts what WriteNPAC wrote.
type NPACStats struct {
	SubscriptionVersions, PoolBlocks, SPIDs, Codes, Blocks int64
}

// WriteNPAC rewrites the source directory dir, as Generate wrote it, in the
// shapes carriers receive the same data: ported.csv becomes an NPAC
// subscription version file; blocks.csv becomes NANPA's code report, the
// Pooling Administrator's block report and an NPAC number pool block file
// (the pooled blocks' LRNs); carriers.csv is also written as an NPAC SPID
// file. ported.csv and blocks.csv are removed. carriers.csv, ratecenters.csv
// and the per-number CSVs stay: no public file carries a carrier's type,
// messaging defaults, rate center details, messaging, CNAM or trust. A
// build of either shape answers every lookup the same (the files keep the
// CSVs' order, so the tables are byte-identical).
func WriteNPAC(ctx context.Context, dir string) (NPACStats, error) {
	var st NPACStats
	carriers := map[string][2]string{} // OCN → name, carrier_type
	err := eachRow(dir, FileCarriers, func(r map[string]string) error {
		carriers[r["ocn"]] = [2]string{r["name"], r["carrier_type"]}
		return nil
	})
	if err != nil {
		return st, err
	}
	if err := writeFile(dir, FileNPACSPID, func(w *bufio.Writer) error {
		return eachRow(dir, FileCarriers, func(r map[string]string) error {
			st.SPIDs++
			_, err := fmt.Fprintf(w, "%s|%s|%s\r", r["ocn"], strings.ReplaceAll(r["name"], "|", " "), spType(r["carrier_type"]))
			return err
		})
	}); err != nil {
		return st, err
	}

	var n int64
	if err := writeFile(dir, FileNPACSV, func(w *bufio.Writer) error {
		return eachRow(dir, FilePorted, func(r map[string]string) error {
			if n++; n%65536 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			at, err := bddTime(r["activated_at"])
			if err != nil {
				return err
			}
			st.SubscriptionVersions++
			_, err = fmt.Fprintf(w, "%d|%s|%s|%s|%s||||||||||||0|0|||%s\r", n, r["tn"], r["lrn"], r["spid"], at, r["sv_type"])
			return err
		})
	}); err != nil {
		return st, err
	}

	codes, err := create(dir, FileNANPACodes)
	if err != nil {
		return st, err
	}
	defer codes.Close()
	blocks, err := create(dir, FilePABlockReport)
	if err != nil {
		return st, err
	}
	defer blocks.Close()
	pool, err := create(dir, FileNPACPool)
	if err != nil {
		return st, err
	}
	defer pool.Close()
	cw, bw, pw := bufio.NewWriter(codes), bufio.NewWriter(blocks), bufio.NewWriter(pool)
	pa := csv.NewWriter(bw)
	pa.UseCRLF = true
	fmt.Fprint(cw, "State\tNPA-NXX\tOcn\tCompany\tRateCenter\tEffectiveDate\tUse\tAssignDate\tInitial/Growth\r\n")
	// The Pooling Administrator's header, as the report has it.
	_ = pa.Write([]string{"Region", "State", "NPA", "NXX", "X", "STATUS", "Code Holder", "Contaminated (Y or N)",
		"Contaminated TNs not Available for Assignment", "Rate Center", "Block Effective Date", "Block Available Date",
		"Assigned To", "OCN", "Date Assigned"})
	err = eachRow(dir, FileBlocks, func(r map[string]string) error {
		at, err := bddTime(r["activated_at"])
		if err != nil {
			return err
		}
		eff := ""
		if at != "" {
			eff = at[4:6] + "/" + at[6:8] + "/" + at[0:4]
		}
		company := carriers[r["ocn"]][0]
		if x := r["x"]; x == "" || x == "A" {
			st.Codes++
			_, err := fmt.Fprintf(cw, "%s\t%s-%s\t%s\t%s\t%s\t%s\tAS\t\t\r\n", r["state"], r["npa"], r["nxx"], r["ocn"],
				strings.ReplaceAll(company, "\t", " "), r["rate_center"], eff)
			return err
		}
		st.Blocks++
		if err := pa.Write([]string{"", r["state"], r["npa"], r["nxx"], r["x"], "AS", "", "", "", r["rate_center"], eff, "", company, r["ocn"], ""}); err != nil {
			return err
		}
		if r["lrn"] == "" {
			return nil
		}
		st.PoolBlocks++
		_, err = fmt.Fprintf(pw, "%d|%s%s%s|%s|%s|%s|||||||||||0\r", st.PoolBlocks, r["npa"], r["nxx"], r["x"], r["lrn"], r["ocn"], at)
		return err
	})
	if err != nil {
		return st, err
	}
	pa.Flush()
	for _, w := range []*bufio.Writer{cw, bw, pw} {
		if err := w.Flush(); err != nil {
			return st, err
		}
	}
	for _, f := range []*os.File{codes, blocks, pool} {
		if err := f.Close(); err != nil {
			return st, err
		}
	}
	for _, name := range []string{FilePorted, FileBlocks} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			return st, err
		}
	}
	return st, nil
}

func create(dir, name string) (*os.File, error) { return os.Create(filepath.Join(dir, name)) }

func writeFile(dir, name string, fill func(*bufio.Writer) error) error {
	f, err := create(dir, name)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// eachRow calls fn with each row of a CSV file Generate wrote, by column.
func eachRow(dir, name string, fn func(map[string]string) error) error {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReaderSize(f, 1<<20))
	r.ReuseRecord = true
	hdr, err := r.Read()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	hdr = append([]string(nil), hdr...)
	row := make(map[string]string, len(hdr))
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for i, h := range hdr {
			row[h] = rec[i]
		}
		if err := fn(row); err != nil {
			return err
		}
	}
}

// bddTime writes a source time as the BDD's yyyymmddhhmmss in GMT.
func bddTime(s string) (string, error) {
	if s == "" || len(s) == 14 {
		return s, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return "", err
	}
	return t.UTC().Format("20060102150405"), nil
}

// spType is the NPAC SPID type a carrier_type stands for (docs/DATA.md):
// 0 wireline, 1 wireless, 3 class 1 interconnected VoIP; "" where none does.
func spType(carrierType string) string {
	switch strings.ToUpper(carrierType) {
	case "WIRELESS", "PCS", "CELLULAR":
		return "1"
	case "VOIP", "IPES":
		return "3"
	case "ILEC", "RBOC", "CLEC", "ULEC", "CAP", "LEC", "ICO":
		return "0"
	}
	return ""
}

// svType draws a ported number's NPAC SV Type (ported.csv's sv_type) for a
// carrier of type carrierType: mostly the carrier's own kind of service,
// with the exceptions SV Type exists to tell (a wireless carrier's prepaid
// and Wi-Fi calling numbers, a wireline carrier's VoIP numbers), and a few
// versions from LSMSs that do not send it (empty).
func svType(r *rng, carrierType string) string {
	x := r.float()
	switch {
	case x < 0.02:
		return ""
	case carrierType == typeWireless:
		return pickSV(x, "1", 0.82, "4", 0.97, "3")
	case carrierType == typeVOIP:
		return pickSV(x, "2", 0.87, "5", 1, "")
	default:
		return pickSV(x, "0", 0.90, "2", 1, "")
	}
}

// pickSV returns a below p, else b below q, else c.
func pickSV(x float64, a string, p float64, b string, q float64, c string) string {
	switch {
	case x < p:
		return a
	case x < q:
		return b
	}
	return c
}
