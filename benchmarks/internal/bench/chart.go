package bench

import (
	"fmt"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// WritePNG draws ns per number for every benchmark, one goroutine and all
// cores side by side, as horizontal bars on a log scale.
func (r *Results) WritePNG(path string) error {
	type row struct {
		label    string
		one, all float64
	}
	var rows []row
	for _, sys := range SystemOrder {
		for _, c := range r.Cases {
			if c.System != sys || c.Parallel {
				continue
			}
			base := strings.TrimSuffix(c.ID, "/1")
			rw := row{label: sys + ": " + strings.Replace(c.Name, "enhanced+messaging", "enh+msg", 1), one: c.Median}
			if c.PerCall > 1 {
				rw.label += ", batch"
			}
			if pc := r.Case(base + "/all-cores"); pc != nil {
				rw.all = pc.Median
			}
			rows = append(rows, rw)
		}
	}
	if len(rows) == 0 {
		return fmt.Errorf("no benchmarks to draw")
	}
	// Bars run from 1 ns; lengths are log10(ns), ticks say the real times.
	var one, all plotter.Values
	labels := make([]string, len(rows))
	maxV := 0.0
	for i, rw := range rows {
		k := len(rows) - 1 - i // first row at the top
		labels[k] = rw.label
		one = append(one, 0)
		all = append(all, 0)
		maxV = math.Max(maxV, math.Max(rw.one, rw.all))
	}
	for i, rw := range rows {
		k := len(rows) - 1 - i
		one[k] = logNs(rw.one)
		all[k] = logNs(rw.all)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("lnpdb and peers, %s ported numbers, %s query mix: ns per number (log scale; shorter is faster)\nmedian of %d runs · %s · %d CPUs · %s",
		r.Label, r.Queries.MixName(), r.Runs, r.Date.Format("2006-01-02"), r.Machine.NProc, r.Machine.CPU)
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text = "ns per number"
	p.X.Min = 0
	p.X.Max = math.Ceil(math.Log10(maxV*3)*2) / 2
	p.X.Tick.Marker = logTicks{}
	p.X.Tick.Label.Font.Size = vg.Points(9)
	p.Y.Tick.Label.Font.Size = vg.Points(9)
	p.Add(plotter.NewGrid())
	w := vg.Points(7)
	// bars draws values as horizontal bars of width w in c, offset from
	// the row's line by off.
	bars := func(values plotter.Values, c color.Color, off vg.Length) (*plotter.BarChart, error) {
		b, err := plotter.NewBarChart(values, w)
		if err != nil {
			return nil, err
		}
		b.Horizontal = true
		b.Color = c
		b.LineStyle.Width = 0
		b.Offset = off
		return b, nil
	}
	b1, err := bars(one, color.RGBA{R: 31, G: 119, B: 180, A: 255}, w/2)
	if err != nil {
		return err
	}
	b2, err := bars(all, color.RGBA{R: 255, G: 127, B: 14, A: 255}, -w/2)
	if err != nil {
		return err
	}
	p.Add(b1, b2)
	p.Legend.Add("1 goroutine", b1)
	p.Legend.Add(fmt.Sprintf("all cores (%d goroutines)", r.Machine.GOMAXPROCS), b2)
	p.Legend.Top = true
	p.Legend.Left = false
	p.Legend.XOffs = -vg.Points(24)
	p.Legend.YOffs = -vg.Points(4)
	p.Y.Label.Text = "system: operation"
	p.Y.Label.TextStyle.Font.Size = vg.Points(9)
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.NominalY(labels...)

	// Value labels at the end of each bar.
	var xys []plotter.XY
	var texts []string
	for i, rw := range rows {
		k := float64(len(rows) - 1 - i)
		if rw.one > 0 {
			xys = append(xys, plotter.XY{X: logNs(rw.one) + 0.03, Y: k + 0.18})
			texts = append(texts, ns(rw.one))
		}
		if rw.all > 0 {
			xys = append(xys, plotter.XY{X: logNs(rw.all) + 0.03, Y: k - 0.32})
			texts = append(texts, ns(rw.all))
		}
	}
	lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: texts})
	if err != nil {
		return err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].Font.Size = vg.Points(7)
	}
	p.Add(lb)
	return p.Save(11*vg.Inch, vg.Length(0.42*float64(len(rows))+1.6)*vg.Inch, path)
}

func logNs(v float64) float64 {
	if v <= 1 {
		return 0
	}
	return math.Log10(v)
}

// logTicks labels a log10 axis with real times.
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(min); e <= max; e++ {
		ts = append(ts, plot.Tick{Value: e, Label: tickLabel(e)})
		for _, m := range []float64{2, 5} {
			if v := e + math.Log10(m); v <= max {
				ts = append(ts, plot.Tick{Value: v})
			}
		}
	}
	return ts
}

func tickLabel(e float64) string {
	units := []string{"ns", "µs", "ms", "s"}
	i := int(e)
	return fmt.Sprintf("%d %s", int(math.Pow(10, float64(i%3))), units[min(i/3, 3)])
}
