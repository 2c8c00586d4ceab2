// Package testredis starts a real Redis server for tests: Debian's
// redis-server (package redis-server) on a free loopback port and a
// temporary directory, with persistence off (no snapshots, no append-only file), one
// server per call, stopped when the test ends. A test can stop the server
// and start it again on the same port, to see what its client does while
// Redis is away. When the binary is absent, [Start] skips the test and names
// the package that provides it.
package testredis

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Server is a redis-server process started by a test.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

// Start starts a redis-server on a free loopback port; it is stopped when
// the test ends. It skips t when redis-server is absent.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not found: install the Debian package redis-server")
	}
	s := &Server{t: t, bin: bin, dir: t.TempDir(), port: freePort(t)}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// URL is the server's redis:// URL.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Stop kills the server (SIGKILL: what a crashed or unreachable Redis looks
// like to its clients) and waits until it has exited. Stopping a stopped
// server does nothing.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill() // a paused process dies too
	<-s.done
	s.cmd = nil
}

// Pause stops the server's process (SIGSTOP) without closing its sockets:
// what a hung or overloaded Redis looks like to its clients. Resume lets it
// go on.
func (s *Server) Pause() {
	if pauseSignal == nil {
		s.t.Skip("testredis: pausing a process needs SIGSTOP, which " + runtime.GOOS + " does not have")
	}
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(pauseSignal)
	}
}

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() {
	if s.cmd != nil && resumeSignal != nil {
		_ = s.cmd.Process.Signal(resumeSignal)
	}
}

// Restart starts the server again on the same port (after [Server.Stop]),
// empty, and waits until it answers.
func (s *Server) Restart() {
	s.t.Helper()
	if s.cmd != nil {
		s.t.Fatal("testredis: Restart of a running server")
	}
	cmd := exec.Command(s.bin,
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--dir", s.dir, "--save", "", "--appendonly", "no",
		"--protected-mode", "no", "--loglevel", "warning")
	out, err := cmd.StdoutPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("testredis: starting %s: %v", s.bin, err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	var log strings.Builder
	logged := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
		}
		close(logged)
		_ = cmd.Wait()
		close(s.done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if ping(s.Addr()) == nil {
			return
		}
		select {
		case <-s.done:
			<-logged
			s.cmd = nil
			s.t.Fatalf("testredis: redis-server exited at start:\n%s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			s.t.Fatal("testredis: redis-server did not answer PING within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ping sends PING in RESP and expects +PONG.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
