package lnpdb_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// libraryModules are the only modules a program that imports the lookup
// packages may compile: the library module must not bring the server's
// (gqlgen, pgx, go-redis, …) into an importer's build or module graph.
var libraryModules = []string{
	"github.com/lnpdb/lnpdb",
	"github.com/cespare/xxhash/v2",
	"github.com/klauspost/compress",
	"golang.org/x/exp",
}

// TestLibraryDependencies holds the library packages to libraryModules, and
// the library module's go.mod to them and its test framework.
func TestLibraryDependencies(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}",
		"./format", "./format/build", "./lrn", "./cnam", "./messaging", "./trust").Output()
	require.NoError(t, err)
	for m := range strings.FieldsSeq(string(out)) {
		require.True(t, slices.Contains(libraryModules, m), "the library packages compile %s", m)
	}

	mod, err := os.ReadFile("go.mod")
	require.NoError(t, err)
	allowed := append(slices.Clone(libraryModules), "github.com/stretchr/testify", "go.yaml.in/yaml/v3")
	for line := range strings.Lines(string(mod)) {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require"))
		if len(f) < 2 || !strings.Contains(f[0], ".") || !strings.HasPrefix(f[1], "v") {
			continue
		}
		require.True(t, slices.Contains(allowed, f[0]), "the library module requires %s", f[0])
	}
}
