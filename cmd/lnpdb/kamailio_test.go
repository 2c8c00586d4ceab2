package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/frontend/kamailiopdb"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/diptest"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/testutil/testio"
	"github.com/lnpdb/lnpdb/format"
	"github.com/lnpdb/lnpdb/internal/testutil/testdb"
	"github.com/lnpdb/lnpdb/lrn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveEnv, when set, makes this test binary run "lnpdb" with the
// JSON-encoded arguments it holds instead of the tests: the Kamailio test
// starts serve that way inside a network namespace.
const serveEnv = "LNPDB_TEST_RUN_ARGS"

// needBinaries skips t unless every binary is installed, naming the Debian
// package that provides a missing one.
func needBinaries(t *testing.T, bins map[string]string) map[string]string {
	t.Helper()
	paths := make(map[string]string)
	for bin, pkg := range bins {
		p, err := exec.LookPath(bin)
		if err != nil {
			t.Skipf("%s is not installed (Debian package %s)", bin, pkg)
		}
		paths[bin] = p
	}
	return paths
}

// netns creates a network namespace with only loopback up and
// /etc/netns/NAME/resolv.conf naming 127.0.0.1, so that the system
// resolver of a process started in it (Kamailio's enum module) asks the
// ENUM server on 127.0.0.1:53 there, and nothing outside.
func netns(t *testing.T) string {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "lnpdb-test-" + hex.EncodeToString(b[:])
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Skipf("cannot create a network namespace (ip netns add: %v: %s)", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", name, err, out)
		}
	})
	dir := filepath.Join("/etc/netns", name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.WriteFile(filepath.Join(dir, "resolv.conf"), []byte("nameserver 127.0.0.1\noptions attempts:1 timeout:2\n"), 0o644))
	out, err := exec.Command("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return name
}

// stopBound bounds the wait for a command started by startIn to exit on
// SIGTERM. It is above Kamailio's own bound on its shutdown (exit_timeout in
// testdata/softswitch/kamailio.cfg), after which Kamailio kills the children
// that have not exited: only a process that ignores SIGTERM reaches it.
const stopBound = 2 * time.Minute

// startIn starts a command in namespace ns (ip netns exec runs it as the
// process started, not as a child); it is stopped with SIGTERM when the test
// ends, and the test waits for it to exit. Its output goes to out.
func startIn(t *testing.T, ns string, out *testio.Buffer, env []string, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns, name}, args...)...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), env...)
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		stopping := time.Now()
		select {
		case <-done:
		case <-time.After(stopBound):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("%s did not stop on SIGTERM; it wrote:\n%s", name, tail(out.String(), 3000))
		}
		if took := time.Since(stopping); took > 5*time.Second {
			t.Logf("%s took %v to stop on SIGTERM; it wrote:\n%s", name, took.Round(time.Millisecond), tail(out.String(), 3000))
		}
	})
	return cmd
}

func awaitOutput(t *testing.T, out *testio.Buffer, what, substr string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), substr) },
		30*time.Second, 20*time.Millisecond, "waiting for %s to log %q; it wrote:\n%s", what, substr, out)
}

// TestKamailio runs lnpdb's SIP, ENUM and pdb front ends and a real
// Kamailio (testdata/softswitch/kamailio.cfg) on the loopback of a network
// namespace of their own, sends INVITEs with SIPp
// (testdata/softswitch/sipp/dip.xml), and checks what Kamailio did with
// lnpdb's answers for ported, pooled, home, vacant and invalid numbers:
// pdb_query's carrier AVP, enum_query's rewritten R-URI and the branch
// uac_redirect made of the 302, each against lrn.Lookup of the same number.
func TestKamailio(t *testing.T) {
	needBinaries(t, map[string]string{"kamailio": "kamailio", "sipp": "sip-tester", "ip": "iproute2"})
	if os.Geteuid() != 0 {
		t.Skip("the Kamailio test needs root to create a network namespace (ip netns add), so that Kamailio's resolver can be pointed at lnpdb's ENUM server")
	}
	root, err := filepath.Abs("../../testdata/softswitch")
	require.NoError(t, err)
	dir := t.TempDir()
	// Read beside the server, which is the table's writer.
	table := testdb.Build(t, lnpdb.Sample())
	db, err := format.Open(table, format.IgnoreJournal())
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	carriersPath := filepath.Join(root, "carriers.txt")
	carriers, err := kamailiopdb.LoadCarriers(carriersPath)
	require.NoError(t, err)
	nums := diptest.Find(t, db)

	ns := netns(t)

	// lnpdb serve: this test binary, run as the command in the namespace.
	var serveOut testio.Buffer
	args, err := json.Marshal([]string{"serve", "--db", table, "--dev-key", "--addr", "127.0.0.1:0", "--watch", "0",
		"--sip", "127.0.0.1:5070", "--dns", "127.0.0.1:53", "--pdb", "127.0.0.1:5574", "--pdb-carriers", carriersPath})
	require.NoError(t, err)
	exe, err := os.Executable()
	require.NoError(t, err)
	startIn(t, ns, &serveOut, []string{serveEnv + "=" + string(args)}, exe, "-test.run=^$")
	awaitOutput(t, &serveOut, "lnpdb serve", "serving SIP redirects")

	var kamOut testio.Buffer
	// The pdb timeout is raised from its 50 ms: CI runs this beside every
	// other package's tests, and a late answer is not what is tested here.
	startIn(t, ns, &kamOut, nil, "kamailio", "-f", filepath.Join(root, "kamailio.cfg"), "-DD", "-E",
		"-Y", dir, "-P", filepath.Join(dir, "kamailio.pid"), "-m", "32", "-M", "8", "-A", "PDB_TIMEOUT=2000")
	awaitOutput(t, &kamOut, "kamailio", "SO_RCVBUF is finally")

	// One INVITE per number and way of dipping.
	inf := "SEQUENTIAL\n"
	modes := []string{"pdb", "enum", "redirect"}
	for _, k := range nums.All() {
		for _, mode := range modes {
			inf += "+" + k[1] + ";" + mode + "\n"
		}
	}
	infPath := filepath.Join(dir, "dips.csv")
	require.NoError(t, os.WriteFile(infPath, []byte(inf), 0o644))
	logPath := filepath.Join(dir, "dips.log")
	calls := len(nums.All()) * len(modes)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sipp := exec.CommandContext(ctx, "ip", "netns", "exec", ns, "sipp", "127.0.0.1:5060",
		"-sf", filepath.Join(root, "sipp", "dip.xml"), "-inf", infPath, "-m", fmt.Sprint(calls), "-r", "20",
		"-i", "127.0.0.1", "-p", "5090", "-trace_logs", "-log_file", logPath, "-timeout", "40s")
	sipp.Dir = dir
	out, err := sipp.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Errorf("sipp exited %d (some calls failed); its screen:\n%s", ee.ExitCode(), tail(string(out), 3000))
	} else {
		require.NoError(t, err)
	}

	// "mode +1NUMBER result" per call.
	logged, err := os.ReadFile(logPath)
	require.NoError(t, err, "sipp wrote no log; kamailio:\n%s", tail(kamOut.String(), 3000))
	got := make(map[string]string)
	for _, line := range strings.Split(strings.TrimSpace(string(logged)), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 {
			got[f[0]+" "+f[1]] = f[2]
		}
	}
	assert.Len(t, got, calls, "one logged result per call")
	for _, k := range nums.All() {
		num := k[1]
		r, err := lrn.Lookup(db, num, lrn.Options{})
		want := map[string]string{}
		switch {
		case err == nil:
			want["pdb"] = fmt.Sprintf("carrier=%d", carriers.ID(r.SPID))
			want["enum"] = "ruri=" + r.TelURI().String()
			user := "+" + num + ";npdi" // --sip-npdi bare, the default
			if r.LRN != num {
				user += ";rn=+" + r.LRN
			}
			want["redirect"] = "redirect=sip:" + user + "@127.0.0.1:5060"
		case errors.Is(err, lrn.ErrNotFound):
			want["pdb"] = "carrier=0" // NOT_FOUND
			want["enum"] = "enum-failed"
			want["redirect"] = "code=404"
		case errors.Is(err, lrn.ErrInvalidNumber):
			want["pdb"] = "carrier=0" // NOT_NUMBER
			want["enum"] = "enum-failed"
			want["redirect"] = "code=484"
		default:
			t.Fatal(err)
		}
		for _, mode := range modes {
			assert.Equal(t, want[mode], got[mode+" +"+num], "%s %s (%s)", mode, num, k[0])
		}
	}
	// What Kamailio logged tells NOT_NUMBER from NOT_FOUND.
	assert.Contains(t, kamOut.String(), "Number +"+nums.Invalid+" has letters in it")
	assert.Contains(t, kamOut.String(), "Number +"+nums.Vacant+" pdb_id not found")
	if t.Failed() {
		t.Logf("sipp log:\n%s\nkamailio:\n%s\nlnpdb:\n%s", logged, tail(kamOut.String(), 4000), tail(serveOut.String(), 2000))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
