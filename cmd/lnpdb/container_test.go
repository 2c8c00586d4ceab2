package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// builderImage is the Containerfile's default GO_IMAGE.
const builderImage = "docker.io/library/golang:1.26-trixie"

// TestContainerImage builds the Containerfile with podman, fills a volume
// with a table and a keys file using the image's own lnpdb, runs it, and
// asks it for a lookup and for its health check. Where the builder image
// is not on the machine (no registry reachable), a local builder is made
// from the host — its sh, mkdir and cp, its CA certificates — and given
// as GO_IMAGE, with the host's Go, module cache and build cache mounted
// into the build: the Containerfile's own build stage then compiles the
// binary, offline.
//
// Building the image builds the whole server again (static, trimmed): that
// takes minutes, so the test runs only when LNPDB_TEST_CONTAINER_IMAGE is set,
// as .ci/run sets it.
func TestContainerImage(t *testing.T) {
	if os.Getenv("LNPDB_TEST_CONTAINER_IMAGE") == "" {
		t.Skip("builds the server again, in minutes: LNPDB_TEST_CONTAINER_IMAGE=1 runs it (.ci/run does)")
	}
	if testing.Short() {
		t.Skip("builds a container image")
	}
	if _, err := exec.LookPath("podman"); err != nil {
		t.Skip("podman not found: install Debian's podman package to build and run the container image")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel) // last: the cleanups below still run podman
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	podman := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "podman", args...).CombinedOutput()
		return string(out), err
	}
	must := func(args ...string) string {
		t.Helper()
		out, err := podman(args...)
		require.NoError(t, err, "podman %s: %s", strings.Join(args, " "), out)
		return out
	}
	id := fmt.Sprintf("lnpdb-test-%d", os.Getpid())
	image := "localhost/" + id

	build := []string{"build", "--format", "docker", "-t", image, "-f", filepath.Join(root, "Containerfile")}
	if _, err := podman("image", "exists", builderImage); err != nil {
		t.Logf("%s is not on this machine: building with a builder made from the host's files", builderImage)
		builder := "localhost/" + id + "-builder"
		must("import", "--change", "ENV PATH=/usr/local/go/bin:/usr/bin:/bin", "--change", "ENV HOME=/root",
			"--change", "ENV GOMODCACHE=/gomodcache", "--change", "ENV GOCACHE=/gocache",
			"--change", "ENV GOPROXY=off", "--change", "ENV GOTOOLCHAIN=local", "--change", "ENV GOFLAGS=-buildvcs=false",
			hostBuilderRoot(t), builder)
		t.Cleanup(func() { _, _ = podman("rmi", "-f", builder) })
		gocache := t.TempDir()
		if c, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil && strings.TrimSpace(string(c)) != "" {
			gocache = strings.TrimSpace(string(c)) // the host's: what it compiled need not be compiled again
		}
		goroot, err := exec.Command("go", "env", "GOROOT").Output()
		require.NoError(t, err)
		modcache, err := exec.Command("go", "env", "GOMODCACHE").Output()
		require.NoError(t, err)
		build = append(build, "--build-arg", "GO_IMAGE="+builder,
			"-v", strings.TrimSpace(string(goroot))+":/usr/local/go:ro",
			"-v", strings.TrimSpace(string(modcache))+":/gomodcache:ro",
			"-v", gocache+":/gocache")
	}
	out, err := podman(append(build, root)...)
	if err != nil && strings.Contains(out, "error running container") {
		// This host's OCI runtime cannot start the build's RUN step (as
		// it cannot start the image below): build with chroot isolation.
		t.Logf("podman build could not run its RUN step in a container; building again with --isolation chroot:\n%s", out)
		out = must(append(append(build, "--isolation", "chroot"), root)...)
	} else {
		require.NoError(t, err, "podman %s: %s", strings.Join(build, " "), out)
	}
	t.Cleanup(func() { _, _ = podman("rmi", "-f", image) })
	t.Logf("podman build:\n%s", out)

	var inspect []struct {
		Config struct {
			User       string
			Env        []string
			Entrypoint []string
			Cmd        []string
			Volumes    map[string]any
		}
		Healthcheck struct{ Test []string }
	}
	require.NoError(t, json.Unmarshal([]byte(must("image", "inspect", image)), &inspect))
	require.Len(t, inspect, 1)
	cfg := inspect[0].Config
	assert.Equal(t, "65532:65532", cfg.User, "not root")
	assert.Contains(t, cfg.Volumes, "/var/lib/lnpdb")
	assert.Contains(t, cfg.Env, "LNPDB_DB=/var/lib/lnpdb/us.lnpdb")
	assert.Equal(t, []string{"/usr/local/bin/lnpdb"}, cfg.Entrypoint)
	health := inspect[0].Healthcheck.Test
	require.NotEmpty(t, health)
	assert.Equal(t, []string{"CMD", "/usr/local/bin/lnpdb", "healthcheck"}, health, "the health check follows LNPDB_ADDR")

	// Explicit, modest limits: podman's defaults (about a million open files
	// and processes) are more than some hosts let a container set.
	limits := []string{"--ulimit", "nofile=8192:8192", "--ulimit", "nproc=4096:4096"}
	if out, err := podman(append(append([]string{"run", "--rm"}, limits...), "--network", "none", image, "version")...); err != nil {
		// The image is built and configured; this host cannot start a
		// container. Run the image's own files as its command would, on
		// the host, so that what it holds is still shown to answer.
		t.Logf("podman cannot start a container on this host: %v\n%s", err, out)
		runImageFiles(t, ctx, podman, image, cfg.Entrypoint, cfg.Cmd, cfg.Env, health[1:], root)
		t.Skip("the image was built, and its files answered a lookup run on the host; podman could not start a container here (see the log above): " + strings.TrimSpace(lastLine(out)))
	}

	// The volume: a table built from the sample and a key, by the image.
	must("volume", "create", id)
	t.Cleanup(func() { _, _ = podman("volume", "rm", "-f", id) })
	vol := id + ":/var/lib/lnpdb"
	run := func(args ...string) string {
		t.Helper()
		return must(append(append([]string{"run"}, limits...), args...)...)
	}
	run("--rm", "--network", "none", "-v", vol, "-v", filepath.Join(root, "testdata/sample")+":/src:ro", image, "build", "/src")
	key := printedKey(t, run("--rm", "--network", "none", "-v", vol, image, "key", "new", "--keys", "/var/lib/lnpdb/keys.txt"))

	port := freeTCPPort(t)
	run("-d", "--name", id, "-p", fmt.Sprintf("127.0.0.1:%d:8080", port), "-v", vol, image)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := podman("logs", id)
			t.Logf("container log:\n%s", logs)
		}
		_, _ = podman("rm", "-f", "-t", "5", id)
	})
	askLookup(t, fmt.Sprintf("http://127.0.0.1:%d", port), key)
	out = must("healthcheck", "run", id)
	t.Logf("podman healthcheck run: %q", out)
}

// hostBuilderRoot writes a root file system for a builder image: the host's
// sh, mkdir and cp with the libraries they load, its CA certificates, and
// the empty directories a build writes in. It returns the tar file.
func hostBuilderRoot(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	rootfs := filepath.Join(dir, "rootfs")
	files := []string{"/etc/ssl/certs/ca-certificates.crt"}
	for _, prog := range []string{"sh", "mkdir", "cp"} {
		p, err := exec.LookPath(prog)
		require.NoError(t, err)
		p, err = filepath.EvalSymlinks(p)
		require.NoError(t, err)
		files = append(files, p)
		ldd, err := exec.Command("ldd", p).Output()
		require.NoError(t, err, "ldd %s", p)
		for f := range strings.FieldsSeq(string(ldd)) {
			if strings.HasPrefix(f, "/") {
				files = append(files, f)
			}
		}
		if prog == "sh" && p != "/bin/sh" {
			files = append(files, "/bin/sh="+p)
		}
	}
	for _, f := range files {
		dst, src, ok := strings.Cut(f, "=")
		if !ok {
			src = dst
		}
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(rootfs, filepath.Dir(dst)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(rootfs, dst), b, 0o755))
	}
	for _, d := range []string{"tmp", "root", "usr/local/go", "gomodcache", "gocache"} {
		require.NoError(t, os.MkdirAll(filepath.Join(rootfs, d), 0o1777))
	}
	tar := filepath.Join(dir, "rootfs.tar")
	b, err := exec.Command("tar", "-C", rootfs, "-cf", tar, ".").CombinedOutput()
	require.NoError(t, err, "tar: %s", b)
	return tar
}

// runImageFiles exports image's files and runs its entrypoint and command
// from them, with its environment, on the host: the volume is a temporary
// directory and the server listens on a free loopback port. It builds the
// table and a key with the image's lnpdb, asks for a lookup, and runs the
// image's health check command.
func runImageFiles(t *testing.T, ctx context.Context, podman func(...string) (string, error), image string, entrypoint, cmd, env, health []string, root string) {
	t.Helper()
	c, err := podman("create", image)
	require.NoError(t, err, c)
	c = strings.TrimSpace(lastLine(c))
	defer func() { _, _ = podman("rm", "-f", c) }()
	rootfs := t.TempDir()
	export := exec.CommandContext(ctx, "sh", "-c", "podman export "+c+" | tar -C "+rootfs+" -xf -")
	b, err := export.CombinedOutput()
	require.NoError(t, err, "podman export: %s", b)
	vol := filepath.Join(rootfs, "var/lib/lnpdb")
	require.DirExists(t, vol)
	port := freeTCPPort(t)
	rewrite := func(s string) string {
		s = strings.ReplaceAll(s, "/var/lib/lnpdb", vol)
		s = strings.ReplaceAll(s, "0.0.0.0:8080", fmt.Sprintf("127.0.0.1:%d", port))
		s = strings.ReplaceAll(s, "127.0.0.1:8080", fmt.Sprintf("127.0.0.1:%d", port))
		return strings.Replace(s, "/usr/local/bin/lnpdb", filepath.Join(rootfs, "usr/local/bin/lnpdb"), 1)
	}
	var environ []string
	for _, e := range env {
		environ = append(environ, rewrite(e))
	}
	image1 := func(args ...string) *exec.Cmd {
		var argv []string
		for _, a := range append(append([]string{}, entrypoint...), args...) {
			argv = append(argv, rewrite(a))
		}
		c := exec.CommandContext(ctx, argv[0], argv[1:]...)
		c.Env = append(environ, "PATH=/nonexistent")
		c.Dir = vol
		return c
	}
	b, err = image1("build", filepath.Join(root, "testdata/sample")).CombinedOutput()
	require.NoError(t, err, "the image's lnpdb build: %s", b)
	b, err = image1("key", "new", "--keys", "/var/lib/lnpdb/keys.txt").CombinedOutput()
	require.NoError(t, err, "the image's lnpdb key new: %s", b)
	key := printedKey(t, string(b))

	srv := image1(cmd...)
	var logs strings.Builder
	srv.Stdout, srv.Stderr = &logs, &logs
	require.NoError(t, srv.Start())
	defer func() {
		_ = srv.Process.Signal(os.Interrupt)
		_ = srv.Wait()
		if t.Failed() {
			t.Logf("the image's serve:\n%s", logs.String())
		}
	}()
	askLookup(t, fmt.Sprintf("http://127.0.0.1:%d", port), key)
	var hc []string
	for _, a := range health {
		hc = append(hc, rewrite(a))
	}
	check := exec.CommandContext(ctx, hc[0], hc[1:]...)
	check.Env = environ // LNPDB_ADDR: where the image's serve listens
	b, err = check.CombinedOutput()
	require.NoError(t, err, "the image's health check %v: %s", hc, b)
	t.Logf("the image's health check: %s", strings.TrimSpace(string(b)))
}

// askLookup waits for base to answer the sample's ported number.
func askLookup(t *testing.T, base, key string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	var code int
	var body string
	var err error
	require.Eventually(t, func() bool {
		code, body, err = lookup(client, base, key, "12025550123")
		return err == nil && code == http.StatusOK
	}, 60*time.Second, 200*time.Millisecond, "lookup: %d %s %v", code, body, err)
	assert.Contains(t, body, `"lrn":"17718860000"`, "the sample's answer for +1 202 555 0123")
	t.Logf("lookup: %s", body)
}

// printedKey is the lnp_ key in key new's output.
func printedKey(t *testing.T, out string) string {
	t.Helper()
	for f := range strings.FieldsSeq(out) {
		if strings.HasPrefix(f, "lnp_") {
			return f
		}
	}
	t.Fatalf("key new printed no key: %s", out)
	return ""
}

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
