package haproxytest

import (
	"bufio"
	"encoding/csv"
	"errors"
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
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/freeport"
	"github.com/waitroom/waitroom/internal/testkit/proctest"
)

// Options configure a server.
type Options struct {
	// Dir holds the configuration and the log; a test directory when ""
	// (Start) and required for Launch.
	Dir string
	// Config returns the whole configuration for the listener address
	// (127.0.0.1:port) and the address of a stats page the server must
	// serve (`stats uri /stats` on a frontend bound there), so that a test
	// can read the servers' check results (Stats).
	Config func(listen, stats string) string
}

// Server is a running HAProxy.
type Server struct {
	// Addr is the 127.0.0.1:port of the listener Options.Config binds.
	Addr string
	// StatsAddr is where the stats page is served.
	StatsAddr string
	Dir       string
	proc      *proctest.Proc
}

// Binary returns the path of haproxy, or an error telling how to get it.
func Binary() (string, error) { return proctest.Binary("haproxy", "/usr/sbin/haproxy") }

// Start runs HAProxy with opts and stops it when the test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	return proctest.InTest(tb, &opts.Dir, func() (*Server, error) { return Launch(opts) })
}

// Launch runs HAProxy with opts on free ports; the caller stops it.
func Launch(opts Options) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" || opts.Config == nil {
		return nil, errors.New("haproxytest: Launch needs a directory and a configuration")
	}
	var s *Server
	err = proctest.OnFreePorts("haproxy", 5, func(port int) error {
		stats, err := freeport.Get()
		if err != nil {
			return proctest.Permanent(err)
		}
		s = &Server{Addr: hostPort(port), StatsAddr: hostPort(stats), Dir: opts.Dir}
		cfg := filepath.Join(s.Dir, "haproxy.cfg")
		if err := os.WriteFile(cfg, []byte(opts.Config(s.Addr, s.StatsAddr)), 0o644); err != nil {
			return proctest.Permanent(err)
		}
		if out, err := exec.Command(bin, "-c", "-q", "-f", cfg).CombinedOutput(); err != nil {
			return proctest.Permanent(fmt.Errorf("haproxy refuses the configuration: %v\n%s", err, out))
		}
		return s.start(bin, cfg)
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

func (s *Server) logFile() string { return filepath.Join(s.Dir, "haproxy.log") }

func (s *Server) start(bin, cfg string) error {
	log, err := os.Create(s.logFile())
	if err != nil {
		return err
	}
	defer log.Close() // the child has its own descriptor
	// -db: foreground, no daemon, logs (`log stderr`) to the log file.
	cmd := exec.Command(bin, "-db", "-f", cfg)
	cmd.Stdout, cmd.Stderr = log, log
	p, err := proctest.Start(cmd, proctest.Wait{Name: "haproxy", Addr: s.StatsAddr,
		Timeout: 10 * time.Second, Log: s.LogTail})
	if err != nil {
		return err
	}
	s.proc = p
	return nil
}

// LogTail returns the last lines of HAProxy's log.
func (s *Server) LogTail() string { return proctest.LogTail(s.logFile(), 12) }

// ServerStat is one backend server's line of the stats page.
type ServerStat struct {
	Backend, Server string
	// Status is UP, DOWN, "UP 1/2" (going down), ...
	Status string
	// Check is the last health check's result: L7OK, L7STS, L4CON, ...
	Check string
}

// Stats reads the stats page's CSV: every backend server's state.
func (s *Server) Stats() ([]ServerStat, error) {
	resp, err := http.Get("http://" + s.StatsAddr + "/stats;csv")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("haproxy stats: HTTP %d", resp.StatusCode)
	}
	return parseStats(resp.Body)
}

// parseStats reads the CSV the stats page serves: a header line starting
// "# ", then one line per frontend, server and backend.
func parseStats(r io.Reader) ([]ServerStat, error) {
	br := bufio.NewReader(r)
	head, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	cols := strings.Split(strings.TrimSpace(strings.TrimPrefix(head, "# ")), ",")
	idx := map[string]int{}
	for i, c := range cols {
		idx[c] = i
	}
	for _, c := range []string{"pxname", "svname", "status", "check_status"} {
		if _, ok := idx[c]; !ok {
			return nil, fmt.Errorf("haproxy stats: no %s column", c)
		}
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	var out []ServerStat
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(rec) < len(cols) || rec[idx["svname"]] == "FRONTEND" || rec[idx["svname"]] == "BACKEND" {
			continue
		}
		out = append(out, ServerStat{Backend: rec[idx["pxname"]], Server: rec[idx["svname"]],
			Status: rec[idx["status"]], Check: rec[idx["check_status"]]})
	}
}

// Stop shuts HAProxy down (SIGUSR1: soft stop, connections finish) and
// waits for it.
func (s *Server) Stop() {
	if s.proc == nil {
		return
	}
	s.proc.Stop(syscall.SIGUSR1, 5*time.Second)
	s.proc = nil
}
