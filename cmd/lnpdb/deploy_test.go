package main

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testpg"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testredis"
)

// metricName is a name the alert rules or the dashboard may query.
var metricName = regexp.MustCompile(`\blnpdb_[a-z0-9_]+`)

// TestDeployMonitoring: the Prometheus alert rules and the Grafana dashboard
// under deploy/ name only metrics that a running serve exports on /metrics,
// and the dashboard is a dashboard (JSON, panels with queries). The serve is
// a node with every feature that has metrics: a table pulled from an origin,
// Redis, the update log in PostgreSQL, ENUM; and one request of each kind,
// so that labelled families have a series.
func TestDeployMonitoring(t *testing.T) {
	exported := servedMetrics(t)

	rules, err := os.ReadFile("../../deploy/prometheus/lnpdb.rules.yml")
	require.NoError(t, err)
	named := metricName.FindAllString(string(rules), -1)
	require.NotEmpty(t, named)
	for _, n := range named {
		assert.True(t, exported.has(n), "deploy/prometheus/lnpdb.rules.yml names %s, which serve does not export", n)
	}

	b, err := os.ReadFile("../../deploy/grafana/lnpdb.json")
	require.NoError(t, err)
	var dash struct {
		Inputs []struct {
			Name, Type, PluginID string
		} `json:"__inputs"`
		Requires []struct {
			Type, ID string
		} `json:"__requires"`
		Templating struct {
			List []struct {
				Type    string
				Current struct{ Value string }
			}
		}
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(b, &dash), "the dashboard parses as JSON")
	assert.NotEmpty(t, dash.Title)
	assert.NotEmpty(t, dash.UID)
	// Importable (Dashboards → Import): the data source is an input the
	// importer is asked for, and what the dashboard needs is declared.
	require.Len(t, dash.Inputs, 1)
	assert.Equal(t, "datasource", dash.Inputs[0].Type)
	assert.Equal(t, "prometheus", dash.Inputs[0].PluginID)
	required := map[string]bool{}
	for _, r := range dash.Requires {
		required[r.Type+"/"+r.ID] = true
	}
	assert.True(t, required["datasource/prometheus"] && required["grafana/grafana"], "__requires: %v", required)
	for _, v := range dash.Templating.List {
		if v.Type == "datasource" {
			assert.Equal(t, "${"+dash.Inputs[0].Name+"}", v.Current.Value, "the data source variable starts at the input")
		}
	}
	queried := 0
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		assert.True(t, required["panel/"+p.Type], "__requires names no panel %q", p.Type)
		assert.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		for _, q := range p.Targets {
			names := metricName.FindAllString(q.Expr, -1)
			assert.NotEmpty(t, names, "panel %q: %q names no lnpdb metric", p.Title, q.Expr)
			for _, n := range names {
				queried++
				assert.True(t, exported.has(n), "panel %q names %s, which serve does not export", p.Title, n)
			}
		}
	}
	assert.Positive(t, queried)
}

// families are the metric families on a /metrics page, by name and type.
type families map[string]string

// has reports whether name is a family, or a histogram's series.
func (f families) has(name string) bool {
	if _, ok := f[name]; ok {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && f[base] == "histogram" {
			return true
		}
	}
	return false
}

// servedMetrics starts an origin and a node with every metric-bearing
// feature, exercises each once, and returns the node's metric families.
func servedMetrics(t *testing.T) families {
	t.Helper()
	redis := testredis.Start(t)
	dsn := testpg.New(t)
	f := newLiveFixture(t)
	o := startServe(t, "--db", f.table, "--keys", f.keys, "--admin-keys", f.admins,
		"--addr", "127.0.0.1:0", "--access-log=false")
	originURL := o.await(t, &o.stdout, `on (http://127\.0\.0\.1:\d+)`)
	n := startServe(t, "--db", filepath.Join(t.TempDir(), "node.lnpdb"), "--keys", f.keys, "--admin-keys", f.admins,
		"--addr", "127.0.0.1:0", "--access-log=false",
		"--db-url", originURL+"/admin/v1/table", "--db-url-key-file", f.adminKeyFile(t),
		"--redis", redis.URL(), "--updates-log", dsn, "--node", "deploy-test", "--dns", "127.0.0.1:0")
	base := n.await(t, &n.stdout, `on (http://127\.0\.0\.1:\d+)`)
	dnsAddr := n.await(t, &n.stderr, `serving ENUM" addr=(\S+)`)

	client := &http.Client{Timeout: 10 * time.Second}
	code, body, err := lookup(client, base, f.apiKey, f.probes[0])
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, body)
	req, err := http.NewRequest(http.MethodPost, base+"/admin/v1/updates", strings.NewReader(f.feed))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+f.adminKey)
	req.Header.Set("Content-Type", "text/csv")
	res, err := client.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	m := new(dns.Msg)
	m.SetQuestion("3.2.1.0.5.5.5.2.0.2.1.e164.arpa.", dns.TypeNAPTR)
	_, _, err = new(dns.Client).Exchange(m, dnsAddr)
	require.NoError(t, err)

	code, page := call(t, http.MethodGet, base+"/metrics", "", "")
	require.Equal(t, http.StatusOK, code)
	fams := families{}
	for line := range strings.Lines(page) {
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			if name, kind, ok := strings.Cut(strings.TrimSpace(rest), " "); ok {
				fams[name] = kind
			}
		}
	}
	for _, want := range []string{"lnpdb_http_requests_total", "lnpdb_table_pulls_total", "lnpdb_ratelimit_redis_up",
		"lnpdb_update_log_lag", "lnpdb_update_log_appends_total", "lnpdb_dip_answers_total"} {
		require.Contains(t, fams, want, "the node exercised every feature")
	}
	return fams
}

// TestSystemdUnit: deploy/systemd/lnpdb.service passes systemd-analyze
// verify, with the unit's /usr/local/bin/lnpdb pointed at an executable that
// exists here (verify refuses a command it cannot find), and keeps the
// hardening it promises.
func TestSystemdUnit(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze not found: install Debian's systemd package to verify the unit")
	}
	unit, err := os.ReadFile("../../deploy/systemd/lnpdb.service")
	require.NoError(t, err)
	for _, want := range []string{"DynamicUser=yes", "ProtectSystem=strict", "StateDirectory=lnpdb", "NoNewPrivileges=yes",
		"CapabilityBoundingSet=CAP_NET_BIND_SERVICE", "SystemCallFilter=@system-service", "EnvironmentFile=-",
		"ExecReload=/bin/kill -HUP $MAINPID", "ExecStart=/usr/local/bin/lnpdb serve", "Type=notify", "WatchdogSec="} {
		assert.Contains(t, string(unit), want)
	}
	self, err := os.Executable()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "lnpdb.service")
	require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(string(unit), "/usr/local/bin/lnpdb", self)), 0o644))
	out, err := exec.Command("systemd-analyze", "verify", path).CombinedOutput()
	require.NoError(t, err, "systemd-analyze verify: %s", out)
	assert.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify has complaints")
}

// TestPrometheusRules: the rules in deploy/prometheus pass promtool check
// rules, named by the glob the documentation uses (which must not take in
// a test file), and their unit tests (tests/lnpdb.rules.test.yml) pass.
func TestPrometheusRules(t *testing.T) {
	if _, err := exec.LookPath("promtool"); err != nil {
		t.Skip("promtool not found: install Debian's prometheus package to check the alert rules")
	}
	rules, err := filepath.Glob("../../deploy/prometheus/*.yml")
	require.NoError(t, err)
	require.NotEmpty(t, rules)
	out, err := exec.Command("promtool", append([]string{"check", "rules"}, rules...)...).CombinedOutput()
	require.NoError(t, err, "promtool check rules deploy/prometheus/*.yml: %s", out)
	assert.Contains(t, string(out), "SUCCESS")
	test := exec.Command("promtool", "test", "rules", "tests/lnpdb.rules.test.yml")
	test.Dir = "../../deploy/prometheus"
	out, err = test.CombinedOutput()
	require.NoError(t, err, "promtool test rules: %s", out)
	assert.Contains(t, string(out), "SUCCESS")
}
