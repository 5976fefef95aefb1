package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/internal/freeport"
)

// Server is a redis-server process started for one test.
type Server struct {
	Addr string
	Dir  string
	args []string
	cmd  *exec.Cmd
	tb   testing.TB
}

// Options choose how the server runs.
type Options struct {
	// AppendOnly turns on the AOF with appendfsync always: every write is
	// on disk before it is acknowledged, what the inventory Redis wants.
	AppendOnly bool
	// Cluster starts the node with cluster mode enabled.
	Cluster bool
	// Dir reuses a data directory (to restart over earlier state).
	Dir string
	// Port reuses a port; 0 picks a free one.
	Port int
}

// Binary returns the path of redis-server, or an error telling how to get it.
func Binary() (string, error) {
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", errors.New("redis-server not found on PATH: run `make deps` (installs Debian's redis-server)")
	}
	return p, nil
}

// Start runs a redis-server on a free loopback port and stops it when the
// test ends. A missing redis-server fails the test: Redis-backed tests are
// never skipped silently.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	if opts.Dir == "" {
		opts.Dir = tb.TempDir()
	}
	s, err := Launch(opts)
	if err != nil {
		tb.Fatal(err)
	}
	s.tb = tb
	tb.Cleanup(s.Stop)
	return s
}

// Launch runs a redis-server on a free loopback port (or opts.Port) in
// opts.Dir; the caller stops it. It is Start for programs that are not
// tests (the benchmarks).
func Launch(opts Options) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		return nil, errors.New("redistest: Launch needs a data directory")
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port := opts.Port
		if port == 0 {
			if port, err = freeport.Get(); err != nil {
				return nil, err
			}
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: opts.Dir}
		s.args = []string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", opts.Dir,
			"--save", "", "--daemonize", "no", "--protected-mode", "yes",
			"--logfile", filepath.Join(opts.Dir, "redis.log"),
		}
		if opts.AppendOnly {
			s.args = append(s.args, "--appendonly", "yes", "--appendfsync", "always")
		} else {
			s.args = append(s.args, "--appendonly", "no")
		}
		if opts.Cluster {
			s.args = append(s.args, "--cluster-enabled", "yes", "--cluster-config-file",
				filepath.Join(opts.Dir, "nodes.conf"), "--cluster-node-timeout", "5000")
		}
		if lastErr = s.start(bin); lastErr == nil {
			return s, nil
		}
		if opts.Port != 0 {
			break
		}
	}
	return nil, fmt.Errorf("starting redis-server: %w", lastErr)
}

func (s *Server) start(bin string) error {
	cmd := exec.Command(bin, s.args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("redis-server exited at start-up: %s", s.logTail())
		default:
		}
		// A node still loading its AOF answers LOADING; wait for it. The
		// port was free a moment ago, but another test's server may have
		// taken it since (tests of several packages run at once): only our
		// own process's answer counts, or the test would use a stranger's
		// server and its keys while ours exits on "address in use".
		pid, err := serverPID(s.Addr)
		if err == nil && pid == cmd.Process.Pid {
			s.cmd = cmd
			return nil
		}
		if err == nil {
			cmd.Process.Kill()
			<-exited
			return fmt.Errorf("port of %s is taken by another redis-server (pid %d)", s.Addr, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	<-exited
	return fmt.Errorf("redis-server did not answer within 10s: %s", s.logTail())
}

// serverPID asks the redis-server at addr for its process id once it
// answers commands (PING fails with LOADING until the AOF is read; INFO
// would answer before).
func serverPID(addr string) (int, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil {
		return 0, err
	}
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, "process_id:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, errors.New("INFO server has no process_id")
}

func (s *Server) logTail() string {
	f, err := os.Open(filepath.Join(s.Dir, "redis.log"))
	if err != nil {
		return "(no log)"
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 5 {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, " | ")
}

// URL is the server's redis:// URL for database 0.
func (s *Server) URL() string { return "redis://" + s.Addr + "/0" }

// Client returns a client of the server, closed when the test ends (for a
// Launched server, when the caller closes it).
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	if s.tb != nil {
		s.tb.Cleanup(func() { c.Close() })
	}
	return c
}

// Kill sends SIGKILL, as a crash would, and waits for the process to go.
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Process.Wait()
	s.cmd = nil
}

// Restart starts the server again on the same port and data directory;
// it fails the test if it cannot (only for servers from Start).
func (s *Server) Restart() {
	s.tb.Helper()
	s.Kill()
	bin, err := Binary()
	if err != nil {
		s.tb.Fatal(err)
	}
	var lastErr error
	for attempt := 0; attempt < 50; attempt++ { // the port may linger briefly
		if lastErr = s.start(bin); lastErr == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.tb.Fatalf("restarting redis-server: %v", lastErr)
}

// Stop ends the server.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Process.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	s.cmd = nil
}

// Cluster is a Redis Cluster of several master nodes, each owning an equal
// share of the hash slots.
type Cluster struct {
	Nodes []*Server
}

// StartCluster starts n cluster-enabled nodes, splits the slots between
// them and waits until the cluster reports ok.
func StartCluster(tb testing.TB, n int) *Cluster {
	tb.Helper()
	c := &Cluster{}
	for range n {
		c.Nodes = append(c.Nodes, Start(tb, Options{Cluster: true}))
	}
	ctx := context.Background()
	per := 16384 / n
	for i, node := range c.Nodes {
		cl := redis.NewClient(&redis.Options{Addr: node.Addr})
		lo, hi := i*per, (i+1)*per-1
		if i == n-1 {
			hi = 16383
		}
		if err := cl.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			tb.Fatalf("CLUSTER ADDSLOTSRANGE: %v", err)
		}
		if i > 0 {
			host, port, _ := net.SplitHostPort(c.Nodes[0].Addr)
			if err := cl.ClusterMeet(ctx, host, port).Err(); err != nil {
				tb.Fatalf("CLUSTER MEET: %v", err)
			}
		}
		cl.Close()
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, node := range c.Nodes {
		cl := redis.NewClient(&redis.Options{Addr: node.Addr})
		for {
			info, err := cl.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", n)) {
				break
			}
			if time.Now().After(deadline) {
				tb.Fatalf("cluster did not become ok: %v %s", err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
		cl.Close()
	}
	return c
}

// Addrs lists the nodes' addresses.
func (c *Cluster) Addrs() []string {
	var out []string
	for _, n := range c.Nodes {
		out = append(out, n.Addr)
	}
	return out
}
