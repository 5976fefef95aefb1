package redistest

import (
	"bytes"
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

	"github.com/waitroom/waitroom/internal/testkit/freeport"
	"github.com/waitroom/waitroom/internal/testkit/proctest"
)

// Server is a redis-server process started for one test.
type Server struct {
	Addr string
	Dir  string
	// AOFRepairs counts the restarts that found the AOF's last write torn
	// by a kill and repaired it with redis-check-aof --fix.
	AOFRepairs int
	args       []string
	cmd        *exec.Cmd
	tb         testing.TB
}

// Options choose how the server runs.
type Options struct {
	// AppendOnly turns on the AOF with appendfsync always: every write is
	// on disk before it is acknowledged, what the inventory Redis wants.
	// It also sets aof-load-truncated no, as the inventory Redis needs:
	// an AOF whose last write a kill tore is repaired by Restart with
	// redis-check-aof --fix, never loaded as it is (see
	// redispersist.Node.LoadsTornTail).
	AppendOnly bool
	// LoadTornAOF runs an AppendOnly server with Redis's default
	// aof-load-truncated yes instead: it starts from an AOF whose last
	// write a kill tore, as Redis would, and Restart repairs nothing. Only
	// for tests that show why the stores refuse such a Redis.
	LoadTornAOF bool
	// Cluster starts the node with cluster mode enabled.
	Cluster bool
	// NodeTimeout is a cluster node's cluster-node-timeout: how long a
	// master may be silent before its replica takes over; 0 is 5 s.
	NodeTimeout time.Duration
	// ReplicaOf starts the node as a replica of the Redis at this
	// host:port (REPLICAOF).
	ReplicaOf string
	// Dir reuses a data directory (to restart over earlier state).
	Dir string
	// Port reuses a port; 0 picks a free one.
	Port int

	sentinel *sentinelConf // runs a Sentinel instead of a data node
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
			// A replica's full sync starts at once, not after the
			// default 5 s wait for more replicas.
			"--repl-diskless-sync-delay", "0",
		}
		if opts.AppendOnly {
			truncated := "no"
			if opts.LoadTornAOF {
				truncated = "yes"
			}
			s.args = append(s.args, "--appendonly", "yes", "--appendfsync", "always", "--aof-load-truncated", truncated)
		} else {
			s.args = append(s.args, "--appendonly", "no")
		}
		if opts.Cluster {
			timeout := opts.NodeTimeout
			if timeout <= 0 {
				timeout = 5 * time.Second
			}
			// A replica may take over however long it was cut off: a
			// test's replica is never too stale to serve.
			s.args = append(s.args, "--cluster-enabled", "yes", "--cluster-config-file",
				filepath.Join(opts.Dir, "nodes.conf"), "--cluster-node-timeout", strconv.FormatInt(timeout.Milliseconds(), 10),
				"--cluster-replica-validity-factor", "0")
		}
		if opts.ReplicaOf != "" {
			host, port, err := net.SplitHostPort(opts.ReplicaOf)
			if err != nil {
				return nil, fmt.Errorf("redistest: ReplicaOf %q: %w", opts.ReplicaOf, err)
			}
			s.args = append(s.args, "--replicaof", host, port)
		}
		if opts.sentinel != nil {
			conf, err := opts.sentinel.write(opts.Dir, port)
			if err != nil {
				return nil, err
			}
			s.args = []string{conf, "--sentinel"}
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
			tail := s.logTail()
			if strings.Contains(tail, "Unexpected end of file reading the append only file") {
				return fmt.Errorf("%w: %s", errTornAOF, tail)
			}
			return fmt.Errorf("redis-server exited at start-up: %s", tail)
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
	// A plain dial first: go-redis logs every refused dial to stderr,
	// and a starting server refuses many.
	conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return 0, err
	}
	conn.Close()
	// One dial per poll: go-redis would otherwise retry a refused dial 5
	// times 100 ms apart, and each restart would wait for that.
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond, DialerRetries: 1, MaxRetries: -1})
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
	return proctest.LogTail(filepath.Join(s.Dir, "redis.log"), 5)
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

// errTornAOF is a start that redis-server refused because the last write
// of its AOF is incomplete (aof-load-truncated no).
var errTornAOF = errors.New("redis-server refused an AOF whose last write is torn")

// Restart starts the server again on the same port and data directory;
// it fails the test if it cannot (only for servers from Start). When the
// kill tore the AOF's last write and the server refuses to start,
// Restart does what the operator of an inventory Redis does: it cuts
// the torn write off with redis-check-aof --fix (which cuts a torn
// MULTI/EXEC block whole), logs what was cut, counts it in AOFRepairs
// and starts the server again.
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
		if errors.Is(lastErr, errTornAOF) {
			out, err := s.repairAOF()
			if err != nil {
				s.tb.Fatalf("restarting redis-server: %v; redis-check-aof --fix: %v", lastErr, err)
			}
			s.AOFRepairs++
			s.tb.Logf("redistest: the kill tore the last write of the AOF; redis-check-aof --fix: %s", out)
			continue
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.tb.Fatalf("restarting redis-server: %v", lastErr)
}

// repairAOF runs redis-check-aof --fix on the server's AOF manifest and
// returns the lines that say what it found and cut.
func (s *Server) repairAOF() (string, error) {
	bin, err := exec.LookPath("redis-check-aof")
	if err != nil {
		return "", errors.New("redis-check-aof not found on PATH: run `make deps` (Debian's redis-tools)")
	}
	manifest, err := s.manifest()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, "--fix", manifest)
	cmd.Stdin = strings.NewReader("y\n") // it asks before it truncates
	out, err := cmd.CombinedOutput()
	var said []string
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, "AOF analyzed") || strings.Contains(line, "shrink") || strings.Contains(line, "truncated") {
			said = append(said, strings.TrimSpace(line))
		}
	}
	if err != nil {
		return "", fmt.Errorf("%v: %s", err, out)
	}
	return strings.Join(said, " | "), nil
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
func (c *Cluster) Addrs() []string { return addrs(c.Nodes) }

// AOFCommand is one command of an AOF file and where it starts.
type AOFCommand struct {
	Off  int64
	Args []string
}

// manifest returns the path of the server's AOF manifest (Redis 7 keeps
// its AOF as files listed in appendonlydir/<appendfilename>.manifest).
func (s *Server) manifest() (string, error) {
	dir := filepath.Join(s.Dir, "appendonlydir")
	manifests, err := filepath.Glob(filepath.Join(dir, "*.manifest"))
	if err != nil || len(manifests) != 1 {
		return "", fmt.Errorf("no single AOF manifest in %s: %v %v", dir, manifests, err)
	}
	return manifests[0], nil
}

// incrAOF returns the path of the server's newest incremental AOF, the
// file Redis appends to, from its manifest.
func (s *Server) incrAOF() (string, error) {
	manifest, err := s.manifest()
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(manifest)
	raw, err := os.ReadFile(manifest)
	if err != nil {
		return "", err
	}
	name := ""
	for line := range strings.Lines(string(raw)) {
		// file <name> seq <n> type i
		if f := strings.Fields(line); len(f) == 6 && f[0] == "file" && f[5] == "i" {
			name = f[1]
		}
	}
	if name == "" {
		return "", fmt.Errorf("manifest %s lists no incremental AOF", manifest)
	}
	return filepath.Join(dir, name), nil
}

// readAOF parses an AOF file of RESP commands.
func readAOF(path string) ([]AOFCommand, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []AOFCommand
	off := 0
	line := func() (string, error) {
		i := bytes.Index(raw[off:], []byte("\r\n"))
		if i < 0 {
			return "", fmt.Errorf("%s: unterminated line at %d", path, off)
		}
		l := string(raw[off : off+i])
		off += i + 2
		return l, nil
	}
	for off < len(raw) {
		c := AOFCommand{Off: int64(off)}
		h, err := line()
		if err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(strings.TrimPrefix(h, "*"))
		if err != nil || !strings.HasPrefix(h, "*") {
			return nil, fmt.Errorf("%s: %q at %d is not a command", path, h, c.Off)
		}
		for range n {
			h, err := line()
			if err != nil {
				return nil, err
			}
			size, err := strconv.Atoi(strings.TrimPrefix(h, "$"))
			if err != nil || !strings.HasPrefix(h, "$") || size < 0 || off+size+2 > len(raw) {
				return nil, fmt.Errorf("%s: bad argument %q at %d", path, h, off)
			}
			c.Args = append(c.Args, string(raw[off:off+size]))
			off += size + 2
		}
		out = append(out, c)
	}
	return out, nil
}

// TearLastBlock cuts the AOF of a killed server in the middle of the
// k-th command of its last MULTI/EXEC block (1 is the first command after
// MULTI; the last is EXEC), as a kill that lands while Redis writes the
// block leaves it: write(2) to a file stops at a page boundary when a
// fatal signal is pending. It returns the block as it was, for logs.
func (s *Server) TearLastBlock(k int) []AOFCommand {
	s.tb.Helper()
	if s.cmd != nil {
		s.tb.Fatal("redistest: TearLastBlock needs a killed server")
	}
	path, err := s.incrAOF()
	if err != nil {
		s.tb.Fatal(err)
	}
	cmds, err := readAOF(path)
	if err != nil {
		s.tb.Fatal(err)
	}
	multi := -1
	for i, c := range cmds {
		if strings.EqualFold(c.Args[0], "MULTI") {
			multi = i
		}
	}
	if multi < 0 || multi+k >= len(cmds) || k < 1 {
		s.tb.Fatalf("redistest: the AOF has no command %d in a last MULTI block (%d commands, MULTI at %d)", k, len(cmds), multi)
	}
	block := cmds[multi:]
	end, err := fileSize(path)
	if err != nil {
		s.tb.Fatal(err)
	}
	if multi+k+1 < len(cmds) {
		end = cmds[multi+k+1].Off
	}
	if err := os.Truncate(path, (block[k].Off+end)/2); err != nil {
		s.tb.Fatal(err)
	}
	return block
}

func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}
