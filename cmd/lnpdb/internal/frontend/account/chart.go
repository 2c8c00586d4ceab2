package account

import (
	"sort"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/access/billing"
)

// Days is how far back the usage pages look, today included.
const Days = 90

// usageWindow returns the first and last day (UTC) of the Days ending on
// now's day.
func usageWindow(now time.Time) (first, last time.Time) {
	y, m, d := now.UTC().Date()
	last = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	return last.AddDate(0, 0, -(Days - 1)), last
}

// months lists the months (2006-01) that hold the days from first to last.
func months(first, last time.Time) []string {
	var out []string
	for m := time.Date(first.Year(), first.Month(), 1, 0, 0, 0, 0, time.UTC); !m.After(last); m = m.AddDate(0, 1, 0) {
		out = append(out, m.Format("2006-01"))
	}
	return out
}

// dayUsage is one day's lookups per kind.
type dayUsage struct {
	Day    string
	ByKind []int64 // in the order of billing.Kinds
	Total  int64
	Amount billing.Micros
}

// usage is an account's usage over the window: its days with lookups, and
// the totals per kind.
type usage struct {
	First, Last string
	Days        []dayUsage // days with lookups, the latest first
	Totals      []int64    // per kind, in the order of billing.Kinds
	ByKind      []kindTotal
	Total       int64
	Amount      billing.Micros
	Kinds       []billing.Kind
	Chart       chart
}

// summarize folds ledger rows into the window's usage; rows outside it
// are left out.
func summarize(rows []billing.UsageRow, first, last time.Time) usage {
	u := usage{First: first.Format("2006-01-02"), Last: last.Format("2006-01-02"), Totals: make([]int64, len(billing.Kinds)), Kinds: billing.Kinds}
	by := map[string]*dayUsage{}
	free := make([]int64, len(billing.Kinds))
	amounts := make([]billing.Micros, len(billing.Kinds))
	for _, r := range rows {
		if r.Day < u.First || r.Day > u.Last {
			continue
		}
		ki := -1
		for i, k := range billing.Kinds {
			if k == r.Kind {
				ki = i
			}
		}
		if ki < 0 {
			continue
		}
		d := by[r.Day]
		if d == nil {
			d = &dayUsage{Day: r.Day, ByKind: make([]int64, len(billing.Kinds))}
			by[r.Day] = d
		}
		d.ByKind[ki] += r.Lookups
		d.Total += r.Lookups
		d.Amount += r.Amount
		u.Totals[ki] += r.Lookups
		free[ki] += r.Free
		amounts[ki] += r.Amount
		u.Total += r.Lookups
		u.Amount += r.Amount
	}
	for _, d := range by {
		u.Days = append(u.Days, *d)
	}
	sort.Slice(u.Days, func(i, j int) bool { return u.Days[i].Day > u.Days[j].Day })
	for i, k := range billing.Kinds {
		u.ByKind = append(u.ByKind, kindTotal{Kind: k, Lookups: u.Totals[i], Free: free[i], Amount: amounts[i]})
	}
	u.Chart = drawChart(by, first)
	return u
}

// kindTotal is the window's lookups of one kind.
type kindTotal struct {
	Kind    billing.Kind
	Lookups int64
	Free    int64
	Amount  billing.Micros
}

// chart is the usage chart's geometry: templates/account.html draws it
// as an SVG on the server, so that it needs no script. Every value in it
// is a number, a day or a kind name made here.
type chart struct {
	W, H, X0, Y0, X1, Y1 int
	Ticks                []tick
	Labels               []label
	Bars                 []bar
	First, Last          string
}

type tick struct {
	Y, TextY int
	Value    int64
}

type label struct {
	X, Y int
	Text string
}

// bar is one kind's part of one day's stacked bar.
type bar struct {
	Kind       billing.Kind
	X, Y, W, H int
	Day        string
	Lookups    int64
}

// The chart's geometry, in SVG user units.
const (
	chartW, chartH = 870, 250
	plotX, plotY   = 50, 10
	plotW, plotH   = Days * 9, 210
	barW, barStep  = 7, 9
)

// drawChart lays out a stacked bar per day, one rectangle per kind with
// lookups.
func drawChart(by map[string]*dayUsage, first time.Time) chart {
	var peak int64
	for _, d := range by {
		peak = max(peak, d.Total)
	}
	scale := niceCeil(peak)
	c := chart{W: chartW, H: chartH, X0: plotX, Y0: plotY, X1: plotX + plotW, Y1: plotY + plotH,
		First: first.Format("2006-01-02"), Last: first.AddDate(0, 0, Days-1).Format("2006-01-02")}
	for _, v := range []int64{scale / 2, scale} {
		y := plotY + plotH - int(int64(plotH)*v/scale)
		c.Ticks = append(c.Ticks, tick{Y: y, TextY: y + 4, Value: v})
	}
	for i := range Days {
		day := first.AddDate(0, 0, i)
		x := plotX + 1 + i*barStep
		if day.Day() == 1 || (i == 0 && day.Day() < 22) { // a first label clear of the next month's
			c.Labels = append(c.Labels, label{X: x, Y: plotY + plotH + 18, Text: day.Format("Jan 2")})
		}
		name := day.Format("2006-01-02")
		d := by[name]
		if d == nil {
			continue
		}
		y := plotY + plotH
		for ki, n := range d.ByKind {
			if n == 0 {
				continue
			}
			h := max(int(int64(plotH)*n/scale), 1)
			y -= h
			c.Bars = append(c.Bars, bar{Kind: billing.Kinds[ki], X: x, Y: y, W: barW, H: h, Day: name, Lookups: n})
		}
	}
	return c
}

// niceCeil returns the scale's top for a peak: 1, 2 or 5 times a power
// of ten, at least the peak (and at least 10).
func niceCeil(peak int64) int64 {
	for p := int64(10); ; p *= 10 {
		for _, f := range []int64{1, 2, 5} {
			if f*p >= peak {
				return f * p
			}
		}
	}
}
