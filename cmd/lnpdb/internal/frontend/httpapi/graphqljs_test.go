package httpapi

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestGraphQLJS runs testdata/graphqljs/check.mjs: graphql-js (the
// version package-lock.json pins, installed by npm ci into a temporary
// directory) introspects the server with every option of
// getIntrospectionQuery, builds the client schema, compares it with
// schema.graphql, and validates and runs the documented operations.
func TestGraphQLJS(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: npm ci and node take seconds")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not found (Debian package nodejs): graphql-js cannot be run")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm not found (Debian package npm): graphql-js cannot be installed")
	}
	out, err := exec.Command(node, "-p", "process.versions.node.split('.')[0]").Output()
	require.NoError(t, err)
	if major, _ := strconv.Atoi(strings.TrimSpace(string(out))); major < 18 {
		t.Skipf("node %s: check.mjs needs node 18 or later (fetch)", strings.TrimSpace(string(out)))
	}

	dir := t.TempDir()
	for _, f := range []string{"package.json", "package-lock.json", "check.mjs"} {
		b, err := os.ReadFile(filepath.Join("testdata", "graphqljs", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "schema.graphql"), []byte(Schema()), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ci := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts")
	ci.Dir = dir
	if out, err := ci.CombinedOutput(); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("npm ci failed (no registry?); CI runs this test: %v\n%s", err, out)
		}
		t.Fatalf("npm ci: %v\n%s", err, out)
	}

	s := newServer(t, unlimited)
	run := exec.CommandContext(ctx, node, "check.mjs", s.URL+"/graphql", testKey, "schema.graphql")
	run.Dir = dir
	out, err = run.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "ok graphql-js 16.")
	t.Logf("%s", out)
}
