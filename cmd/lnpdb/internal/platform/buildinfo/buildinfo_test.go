package buildinfo

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lnpdb/lnpdb/format"
)

func TestRead(t *testing.T) {
	info := Read()
	assert.NotEmpty(t, info.Version)
	assert.Equal(t, runtime.Version(), info.GoVersion)
	assert.Equal(t, format.Version, info.TableFormat)
}

func TestPrint(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, Info{Version: "v1.2.3", Revision: "abc123-dirty", Time: "2026-11-27T00:00:00Z", GoVersion: "go1.26.8", TableFormat: 3}.Print(&b))
	assert.Equal(t, "lnpdb v1.2.3\nrevision abc123-dirty\nbuilt from a commit of 2026-11-27T00:00:00Z\ngo go1.26.8\ntable format 3\n", b.String())
	b.Reset()
	require.NoError(t, Info{Version: "(devel)", GoVersion: "go1.26.8", TableFormat: 3}.Print(&b))
	assert.Contains(t, b.String(), "revision (not recorded in this build")
}

func TestCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(Info{Version: "v1.2.3", Revision: "abc", GoVersion: "go1.26.8", TableFormat: 3}.Collector()))
	want := `# HELP lnpdb_build_info Always 1; its labels say which build of lnpdb is running.
# TYPE lnpdb_build_info gauge
lnpdb_build_info{goversion="go1.26.8",revision="abc",table_format="3",version="v1.2.3"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), "lnpdb_build_info"))
}
