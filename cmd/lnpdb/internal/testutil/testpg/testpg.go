// Package testpg starts a real PostgreSQL server for tests: Debian's
// binaries (package postgresql) on a temporary data directory and a free
// loopback port, one server per test binary, a fresh database per test.
//
// A test binary that uses it runs its tests through [Main] from TestMain, so
// that the server is stopped when the tests end:
//
//	func TestMain(m *testing.M) { os.Exit(testpg.Main(m)) }
//
// When the binaries are absent, [New] skips the test and names the package
// that provides them. PostgreSQL refuses to run as root: as root the server
// runs as the "postgres" system user (which the Debian package creates),
// through runuser.
package testpg

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// server is one PostgreSQL server.
type server struct {
	bin, dir, port string
	asUser         string // run the binaries as this user ("" = as ourselves)
	err            error  // why there is no server: skip with this
	fatal          bool   // err is a failure, not a missing binary
	// durable: a commit is acknowledged only once its WAL is written, so
	// that it survives a stop in immediate mode (synchronous_commit on).
	durable bool
}

// srv is the test binary's server.
var (
	once sync.Once
	srv  server
	dbs  int
	dbMu sync.Mutex
)

// Main runs m's tests and stops the server if one was started.
func Main(m *testing.M) int {
	code := m.Run()
	srv.stop()
	return code
}

// New returns the connection string of a new, empty database on the test
// binary's server, starting the server on first use. It skips t when the
// PostgreSQL binaries are absent.
func New(t testing.TB) string {
	t.Helper()
	once.Do(srv.start)
	if srv.err != nil {
		if srv.fatal {
			t.Fatalf("starting PostgreSQL: %v", srv.err)
		}
		t.Skipf("skipping: %v", srv.err)
	}
	dbMu.Lock()
	dbs++
	name := fmt.Sprintf("t%d", dbs)
	dbMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := dsn(srv.port, "postgres")
	c, err := pgx.Connect(ctx, admin)
	if err != nil {
		t.Fatalf("connecting to the test PostgreSQL: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("creating database %s: %v", name, err)
	}
	return dsn(srv.port, name)
}

func dsn(port, db string) string {
	return "postgres://postgres@127.0.0.1:" + port + "/" + db + "?sslmode=disable"
}

// binDir finds the directory of initdb and pg_ctl: $PG_BIN, the newest
// /usr/lib/postgresql/*/bin, or $PATH.
func binDir() (string, error) {
	if d := os.Getenv("PG_BIN"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err != nil {
			return "", fmt.Errorf("PG_BIN=%s has no pg_ctl (install the Debian package postgresql): %v", d, err)
		}
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("PostgreSQL's initdb and pg_ctl not found in /usr/lib/postgresql/*/bin or $PATH (install the Debian package postgresql)")
}

func version(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

func (srv *server) start() {
	bin, err := binDir()
	if err != nil {
		srv.err = err
		return
	}
	srv.bin = bin
	if os.Geteuid() == 0 {
		// initdb and postgres refuse root; run them as the package's user.
		u, err := user.Lookup("postgres")
		if err != nil {
			srv.err = fmt.Errorf("running as root and there is no postgres user to run PostgreSQL as (install the Debian package postgresql): %v", err)
			return
		}
		srv.asUser = u.Username
		if _, err := exec.LookPath("runuser"); err != nil {
			srv.err = fmt.Errorf("running as root and runuser (Debian package util-linux) is missing: %v", err)
			return
		}
		dir, err := os.MkdirTemp("", "testpg-")
		if err != nil {
			srv.err, srv.fatal = err, true
			return
		}
		srv.dir = dir
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			srv.err, srv.fatal = fmt.Errorf("handing %s to user postgres: %w", dir, err), true
			return
		}
	} else {
		dir, err := os.MkdirTemp("", "testpg-")
		if err != nil {
			srv.err, srv.fatal = err, true
			return
		}
		srv.dir = dir
	}
	data := filepath.Join(srv.dir, "data")
	if out, err := srv.run("initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		srv.err, srv.fatal = fmt.Errorf("initdb: %v\n%s", err, out), true
		return
	}
	// A free port can be taken between choosing and listening: retry.
	for range 5 {
		srv.port = freePort()
		if srv.err = srv.pgStart(); srv.err == nil {
			return
		}
		srv.fatal = true
	}
}

// pgStart starts the server on its data directory and port.
func (srv *server) pgStart() error {
	opts := "-h 127.0.0.1 -p " + srv.port + " -k " + srv.dir + " -c fsync=off -c full_page_writes=off -c max_connections=200"
	if !srv.durable {
		opts += " -c synchronous_commit=off"
	}
	out, err := srv.run("pg_ctl", "-D", filepath.Join(srv.dir, "data"), "-l", filepath.Join(srv.dir, "log"), "-w", "-t", "60", "-o", opts, "start")
	if err != nil {
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, tail(filepath.Join(srv.dir, "log")))
	}
	return nil
}

func (srv *server) stop() {
	if srv.dir == "" {
		return
	}
	if srv.err == nil {
		_, _ = srv.run("pg_ctl", "-D", filepath.Join(srv.dir, "data"), "-m", "immediate", "-w", "stop")
	}
	_ = os.RemoveAll(srv.dir)
}

// Server is a PostgreSQL server of one test's own, for a test that stops
// and starts it (a shared server must stay up for the other tests).
type Server struct {
	s server
}

// NewServer starts a server for t alone, stopped and removed when t ends,
// and skips t when the PostgreSQL binaries are absent. A commit it
// acknowledged survives Stop (which stops it as a crash would; the
// machine's own crash is not simulated: fsync stays off).
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := &Server{s: server{durable: true}}
	s.s.start()
	t.Cleanup(s.s.stop)
	if s.s.err != nil {
		if s.s.fatal {
			t.Fatalf("starting PostgreSQL: %v", s.s.err)
		}
		t.Skipf("skipping: %v", s.s.err)
	}
	return s
}

// DSN is the connection string of the server's database postgres.
func (s *Server) DSN() string { return dsn(s.s.port, "postgres") }

// Stop stops the server as a crash would (immediate mode): clients lose
// their connections, and committed transactions survive.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if out, err := s.s.run("pg_ctl", "-D", filepath.Join(s.s.dir, "data"), "-m", "immediate", "-w", "stop"); err != nil {
		t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}

// Start starts the stopped server again, on the same port.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	if err := s.s.pgStart(); err != nil {
		t.Fatal(err)
	}
}

// Freeze stops every process of the server — the postmaster and its
// backends — with SIGSTOP, as a hung host or a stalled disk would: its
// sockets stay open and accept, and nothing answers. It returns the thaw,
// which sends SIGCONT; the test's end thaws too.
func (s *Server) Freeze(t testing.TB) (thaw func()) {
	t.Helper()
	if !canFreeze {
		t.Skip("skipping: freezing PostgreSQL needs SIGSTOP, which this system lacks")
	}
	pids, err := s.s.pids()
	if err != nil {
		t.Fatalf("finding PostgreSQL's processes: %v", err)
	}
	for _, pid := range pids {
		_ = stopProcess(pid)
	}
	var once sync.Once
	thaw = func() {
		once.Do(func() {
			for _, pid := range pids {
				_ = continueProcess(pid)
			}
		})
	}
	t.Cleanup(thaw)
	return thaw
}

// pids returns the postmaster's pid (postmaster.pid's first line) and its
// children's.
func (srv *server) pids() ([]int, error) {
	b, err := os.ReadFile(filepath.Join(srv.dir, "data", "postmaster.pid"))
	if err != nil {
		return nil, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pm, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return nil, fmt.Errorf("postmaster.pid: %w", err)
	}
	pids := []int{pm}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so look after
		// its closing parenthesis.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pm) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// run runs one of the PostgreSQL binaries, as srv.asUser when set.
func (srv *server) run(name string, args ...string) ([]byte, error) {
	path := filepath.Join(srv.bin, name)
	var cmd *exec.Cmd
	if srv.asUser != "" {
		cmd = exec.Command("runuser", append([]string{"-u", srv.asUser, "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = os.TempDir() // the user may not be allowed in the current directory
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

func freePort() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "54329"
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	s := string(b)
	if i := strings.LastIndex(s, "\n"); len(s) > 2000 && i > 0 {
		s = s[len(s)-2000:]
	}
	return s
}
