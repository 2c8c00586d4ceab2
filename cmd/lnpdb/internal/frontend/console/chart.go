package console

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/platform/history"
)

// The charts' drawing area, in SVG user units: an hour across.
const (
	chartW = 600
	chartH = 120
)

// frontView is one front end's last hour, as the page draws it.
type frontView struct {
	Name    string
	ID      string // for the page's element ids
	Points  int    // intervals in the hour with a sample
	Rate    chart  // answers per second
	P99     chart  // milliseconds
	NowRate string // the latest interval's
	NowP99  string
	MeanP   string // answers per second over the hour
	MaxRate string
	MaxP99  string
}

// chart is one line chart: its polyline's points and its scale's top.
type chart struct {
	Line string // "x,y x,y …"
	Top  string // the value at the top of the chart
}

func newFrontView(name string, pts []history.Point, now time.Time) frontView {
	v := frontView{Name: name, ID: strings.ToLower(name), Points: len(pts), NowRate: "—", NowP99: "—", MeanP: "—", MaxRate: "—", MaxP99: "—"}
	var maxRate, maxP99, sum float64
	var secs float64
	for _, p := range pts {
		maxRate = max(maxRate, p.PerSec)
		maxP99 = max(maxP99, p.P99*1000)
		sum += float64(p.Answers)
	}
	if n := len(pts); n > 0 {
		last := pts[n-1]
		v.NowRate, v.MaxRate = rate(last.PerSec), rate(maxRate)
		if last.Answers > 0 {
			v.NowP99 = ms(last.P99 * 1000)
		}
		if maxP99 > 0 {
			v.MaxP99 = ms(maxP99)
		}
		secs = float64(n) * history.Interval.Seconds()
		v.MeanP = rate(sum / secs)
	}
	v.Rate = line(pts, now, scaleTop(maxRate), func(p history.Point) float64 { return p.PerSec })
	v.Rate.Top = rate(scaleTop(maxRate))
	v.P99 = line(pts, now, scaleTop(maxP99), func(p history.Point) float64 { return p.P99 * 1000 })
	v.P99.Top = ms(scaleTop(maxP99))
	return v
}

// line places each point by its age: now at the right edge, an hour ago
// at the left.
func line(pts []history.Point, now time.Time, top float64, val func(history.Point) float64) chart {
	var b strings.Builder
	for i, p := range pts {
		age := now.Sub(p.At).Seconds()
		x := chartW * (1 - age/time.Hour.Seconds())
		if x < 0 || x > chartW {
			continue
		}
		y := chartH - chartH*val(p)/top
		if i > 0 && b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatFloat(x, 'f', 1, 64))
		b.WriteByte(',')
		b.WriteString(strconv.FormatFloat(y, 'f', 1, 64))
	}
	return chart{Line: b.String()}
}

// scaleTop is a round value at or above v for a chart's top: 1, 2 or 5
// times a power of ten.
func scaleTop(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func rate(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64) + "/s"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + "/s"
}

func ms(v float64) string {
	switch {
	case v >= 10:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 0.1:
		return fmt.Sprintf("%.2f ms", v)
	}
	return fmt.Sprintf("%.0f µs", v*1000)
}
