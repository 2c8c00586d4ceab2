// Package buildinfo owns what the lnpdb binary says about itself: its module
// version, the VCS revision and time it was built from, the Go version that
// built it and the table format version it reads, as `lnpdb version` prints
// them, GET /api/v1/status reports them and the lnpdb_build_info metric
// labels them.
package buildinfo

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lnpdb/lnpdb/format"
)

// Info is the binary's identity.
type Info struct {
	// Version is the main module's version: a release tag (v1.2.3), a
	// pseudo-version, or "(devel)" for a build from a work tree.
	Version string `json:"version"`
	// Revision is the VCS commit built, with "-dirty" when the work tree
	// had changes; "" when the build did not record it (go run, go test,
	// -buildvcs=false).
	Revision string `json:"revision,omitempty"`
	// Time is the commit's time, RFC 3339; "" when not recorded.
	Time string `json:"time,omitempty"`
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string `json:"go_version"`
	// TableFormat is the table file format version the binary reads and
	// writes.
	TableFormat int `json:"table_format"`
}

// Read returns the running binary's Info.
func Read() Info {
	info := Info{Version: "(unknown)", GoVersion: runtime.Version(), TableFormat: format.Version}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	if bi.Main.Version != "" {
		info.Version = bi.Main.Version
	}
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && info.Revision != "" {
		info.Revision += "-dirty"
	}
	return info
}

// Print writes info as `lnpdb version` prints it: one "key value" line each.
func (info Info) Print(w io.Writer) error {
	rev, at := info.Revision, info.Time
	if rev == "" {
		rev = "(not recorded in this build: go run, go test and -buildvcs=false leave it out)"
	}
	if at == "" {
		at = "(not recorded)"
	}
	_, err := fmt.Fprintf(w, "lnpdb %s\nrevision %s\nbuilt from a commit of %s\ngo %s\ntable format %d\n",
		info.Version, rev, at, info.GoVersion, info.TableFormat)
	return err
}

// Collector returns the lnpdb_build_info gauge: always 1, labelled with the
// version, revision and Go version, for joining with other series.
func (info Info) Collector() prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "lnpdb_build_info",
		Help: "Always 1; its labels say which build of lnpdb is running.",
		ConstLabels: prometheus.Labels{
			"version":      info.Version,
			"revision":     info.Revision,
			"goversion":    info.GoVersion,
			"table_format": fmt.Sprint(info.TableFormat),
		},
	})
	g.Set(1)
	return g
}
