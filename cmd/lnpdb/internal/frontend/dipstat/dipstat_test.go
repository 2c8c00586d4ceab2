package dipstat

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/lrn"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	v, err := Register(reg)
	require.NoError(t, err)
	_, err = Register(reg)
	assert.Error(t, err, "twice on one registry")

	m := v.For("pdb")
	m.Request()
	m.Request()
	m.Answer(Ported, time.Now())
	m.Answer(Vacant, time.Now())
	m.Answer("no such outcome", time.Now()) // timed, not counted

	got := gather(t, reg)
	assert.Equal(t, 2.0, got[`lnpdb_dip_requests_total{proto="pdb"}`])
	assert.Equal(t, 1.0, got[`lnpdb_dip_answers_total{outcome="ported",proto="pdb"}`])
	assert.Equal(t, 1.0, got[`lnpdb_dip_answers_total{outcome="vacant",proto="pdb"}`])
	assert.Equal(t, 3.0, got[`lnpdb_dip_duration_seconds_count{proto="pdb"}`])
	answers := 0
	for k := range got {
		if strings.HasPrefix(k, "lnpdb_dip_answers_total{") {
			answers++
		}
	}
	assert.Equal(t, 9, answers, "every outcome's series exists from the start")

	var none *Metrics // a front end without metrics
	none.Request()
	none.Answer(Ported, time.Now())
	assert.Nil(t, (*Vectors)(nil).For("sip"))
}

// gather returns every sample as "name{labels}" → value (histograms as
// their _count).
func gather(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := g.Gather()
	require.NoError(t, err)
	out := make(map[string]float64)
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := "{" + strings.Join(labels, ",") + "}"
			switch {
			case m.GetCounter() != nil:
				out[mf.GetName()+key] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[mf.GetName()+"_count"+key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

func TestOutcome(t *testing.T) {
	for _, tc := range []struct {
		r    lrn.Result
		err  error
		want string
	}{
		{lrn.Result{LRN: "12025550000", PhoneNumber: "12025550123", Source: lrn.SourcePorted}, nil, Ported},
		{lrn.Result{LRN: "12025550000", PhoneNumber: "12025550123", Source: lrn.SourcePooled}, nil, Pooled},
		{lrn.Result{LRN: "12025550123", PhoneNumber: "12025550123", Source: lrn.SourceCode}, nil, Home},
		{lrn.Result{LRN: "12025550123", PhoneNumber: "12025550123", Source: lrn.SourcePorted}, nil, Home}, // ported back home
		{lrn.Result{}, lrn.ErrNotFound, Vacant},
		{lrn.Result{}, lrn.ErrInvalidNumber, Invalid},
		{lrn.Result{}, lrn.ErrClosed, Error},
		{lrn.Result{}, fmt.Errorf("lrn: %w", assert.AnError), Error},
	} {
		assert.Equal(t, tc.want, Outcome(&tc.r, tc.err), "%+v %v", tc.r, tc.err)
	}
}
