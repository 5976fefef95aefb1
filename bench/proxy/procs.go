package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/template"
	"time"

	"github.com/waitroom/waitroom/bench/internal/procstat"
	"github.com/waitroom/waitroom/bench/internal/promtext"
	"github.com/waitroom/waitroom/internal/testkit/freeport"
)

// CPUs of the two roles when pinning (see doc.go).
const (
	cpuGenerator = 0 // wrk and the backends (origin behind a proxy, Redis)
	cpuServer    = 1 // the server under test
)

// proc is a process the benchmark started (in its own process group).
type proc struct {
	name, addr string
	cmd        *exec.Cmd
	logPath    string
}

// pgid is the process group: the process itself, and for nginx its workers.
func (p *proc) pgid() int { return p.cmd.Process.Pid }

// stop ends the process group: SIGTERM, then SIGKILL after 10 s.
func (p *proc) stop() {
	if p == nil || p.cmd == nil {
		return
	}
	syscall.Kill(-p.pgid(), syscall.SIGTERM)
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-p.pgid(), syscall.SIGKILL)
		<-done
	}
	p.cmd = nil
}

// start runs cmd in its own process group with its output in a log file.
func start(tmp, name string, cmd *exec.Cmd) *proc {
	logPath := filepath.Join(tmp, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		fatalf("starting %s: %v", name, err)
	}
	f.Close()
	p := &proc{name: name, cmd: cmd, logPath: logPath}
	atExit(p.stop)
	return p
}

// fatalf exits with the process's log tail.
func (p *proc) fatalf(format string, args ...any) {
	b, _ := os.ReadFile(p.logPath)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	fatalf("%s: %s\n--- %s ---\n%s", p.name, fmt.Sprintf(format, args...), p.logPath, b)
}

// freeAddr returns a 127.0.0.1 address that was free a moment ago.
func freeAddr() string {
	port, err := freeport.Get()
	if err != nil {
		fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// startOrigin starts this program again as a fasthttp origin answering
// bodySize bytes (0: "Hello, World!"), pinned to cpu.
func startOrigin(tmp, name string, cpu, bodySize int) *proc {
	return startSelf(tmp, name, cpu, "-serve-origin", "-origin-body", strconv.Itoa(bodySize))
}

// startBareProxy runs this program as the bare fasthttp proxy to upstream
// on cpu, with GOMAXPROCS=1.
func startBareProxy(tmp, upstream string, cpu int) *proc {
	return startSelf(tmp, "bare-proxy", cpu, "-serve-proxy", "-upstream", upstream)
}

// startSelf runs this program on cpu with GOMAXPROCS=1 in the helper mode
// whose address flag is mode (given a free address), with more flags
// after it, and waits until it answers its health path.
func startSelf(tmp, name string, cpu int, mode string, more ...string) *proc {
	exe, err := os.Executable()
	if err != nil {
		fatal(err)
	}
	addr := freeAddr()
	cmd := command(cpu, exe, append([]string{mode, addr}, more...)...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	p := start(tmp, name, cmd)
	p.addr = addr
	waitHTTP(p, "http://"+addr+originHealthPath, "")
	return p
}

// waitHTTP waits up to 15 s for url to answer 200.
func waitHTTP(p *proc, url, token string) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, _, err := httpDo("GET", url, token, nil, nil)
		if err == nil && code == 200 {
			return
		}
		if time.Now().After(deadline) {
			p.fatalf("%s did not answer 200 within 15s (last: %d %v)", url, code, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// httpDo sends one request and returns the status and body; headers are
// "Name: value" pairs.
func httpDo(method, url, token string, body []byte, headers []string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(k, strings.TrimSpace(v))
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

//go:embed waitroom.yaml.tmpl
var configText string

var configTmpl = template.Must(template.New("waitroom.yaml").Parse(configText))

// wrConfig is what varies between the benchmark's waitroom processes.
type wrConfig struct {
	Name, Listen, Admin string
	Store               string // embedded or redis
	DataDir, RedisURL   string
	Origin              string
	OpensAt, OnSaleAt   string // RFC 3339
	MaxActive           int
	MaxNewPerMinute     int
	InitialActive       int
	// The bot defence: with PoWBits > 0 the event's challenge is on, its
	// light work PoWBits × PoWPuzzles, challenges valid for ChallengeTTL.
	PoWBits, PoWPuzzles int
	ChallengeTTL        time.Duration
}

// waitroom is a running `waitroom serve`.
type waitroom struct {
	*proc
	admin string // http://host:port of the admin listener
}

// startWaitroom writes c's configuration and runs bin/waitroom serve on
// it, pinned to the server CPU with GOMAXPROCS=1, and waits until it is
// ready (its origin healthy).
func (b *bench) startWaitroom(c wrConfig) *waitroom {
	c.Listen, c.Admin = freeAddr(), freeAddr()
	if c.DataDir == "" {
		c.DataDir = mkdir(b.tmp, c.Name+"-data")
	}
	if c.Origin == "" {
		c.Origin = b.origin.addr
	}
	var cfg bytes.Buffer
	if err := configTmpl.Execute(&cfg, c); err != nil {
		fatal(err)
	}
	path := filepath.Join(b.tmp, c.Name+".yaml")
	if err := os.WriteFile(path, cfg.Bytes(), 0o600); err != nil {
		fatal(err)
	}
	cmd := command(cpuServer, *bin, "serve", "-c", path)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1",
		"WAITROOM_BENCH_SIGNING_SECRET="+b.secret, "WAITROOM_BENCH_ADMIN_TOKEN="+b.adminToken,
		"WAITROOM_BENCH_CHALLENGE_SECRET="+b.powSecret)
	w := &waitroom{proc: start(b.tmp, c.Name, cmd), admin: "http://" + c.Admin}
	w.addr = c.Listen
	waitHTTP(w.proc, w.admin+"/readyz", "")
	return w
}

// metrics returns the admin listener's /metrics text.
func (w *waitroom) metrics(token string) string {
	code, body, err := httpDo("GET", w.admin+"/metrics", token, nil, nil)
	if err != nil || code != 200 {
		w.fatalf("GET /metrics: %d %v", code, err)
	}
	return string(body)
}

// pinGroup moves every thread of every process of group pgid to cpu, for
// processes started by helpers (nginx, Redis) that cannot be wrapped in
// taskset; want is how many processes the group should have.
func pinGroup(name string, pgid, want, cpu int) {
	if !*pin {
		return
	}
	deadline := time.Now().Add(5 * time.Second)
	pids := groupPIDs(pgid)
	for len(pids) < want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		pids = groupPIDs(pgid)
	}
	if len(pids) < want {
		fatalf("%s: found %d processes in group %d, want %d", name, len(pids), pgid, want)
	}
	for _, pid := range pids {
		if out, err := exec.Command("taskset", "-a", "-p", "-c", strconv.Itoa(cpu), strconv.Itoa(pid)).CombinedOutput(); err != nil {
			fatalf("%s: taskset: %v: %s", name, err, out)
		}
	}
}

func mkdir(parent, name string) string {
	d := filepath.Join(parent, name)
	if err := os.MkdirAll(d, 0o700); err != nil {
		fatal(err)
	}
	return d
}

// Readings of /proc and /metrics, from bench/internal.
var (
	groupCPU    = procstat.GroupCPU
	groupPIDs   = procstat.GroupPIDs
	metricValue = promtext.Value
	metricSum   = promtext.Sum
)
