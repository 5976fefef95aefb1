package promtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/proctest"
)

// Options configure a server.
type Options struct {
	// Dir holds the configuration, the storage and the log; a test
	// directory when "".
	Dir string
	// Config is prometheus.yml as it is (scrape_configs, rule_files,
	// intervals); rule files named relative to Dir.
	Config string
}

// Server is a running Prometheus.
type Server struct {
	Addr string
	Dir  string
	proc *proctest.Proc
}

// Binary returns the path of prometheus.
func Binary() (string, error) { return proctest.Binary("prometheus", "/usr/bin/prometheus") }

// Start runs a server for tb and stops it when tb ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	return proctest.InTest(tb, &opts.Dir, func() (*Server, error) { return Launch(opts) })
}

// Launch runs a server; the caller stops it.
func Launch(opts Options) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		return nil, errors.New("promtest: Launch needs a directory")
	}
	if err := os.WriteFile(filepath.Join(opts.Dir, "prometheus.yml"), []byte(opts.Config), 0o644); err != nil {
		return nil, err
	}
	var s *Server
	err = proctest.OnFreePorts("prometheus", 5, func(port int) error {
		s = &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: opts.Dir}
		return s.start(bin)
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Server) data() string    { return filepath.Join(s.Dir, "data") }
func (s *Server) logFile() string { return filepath.Join(s.Dir, "prometheus.log") }

func (s *Server) start(bin string) error {
	log, err := os.Create(s.logFile())
	if err != nil {
		return err
	}
	defer log.Close() // the child has its own descriptor
	cmd := exec.Command(bin, "--config.file="+filepath.Join(s.Dir, "prometheus.yml"),
		"--storage.tsdb.path="+s.data(), "--web.listen-address="+s.Addr,
		"--storage.tsdb.retention.time=1d", "--log.level=warn")
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = log, log
	p, err := proctest.Start(cmd, proctest.Wait{Name: "prometheus", Addr: s.Addr, Timeout: 30 * time.Second, Log: s.LogTail})
	if err != nil {
		return err
	}
	s.proc = p
	// Prometheus writes no pid file: that the server on Addr is ours is
	// told by the storage path it reports.
	var flags map[string]string
	deadline := time.Now().Add(20 * time.Second)
	for {
		err = s.get(context.Background(), "/api/v1/status/flags", nil, &flags)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || flags["storage.tsdb.path"] != s.data() {
		p.Kill()
		s.proc = nil
		return fmt.Errorf("promtest: the server on %s is not ours (storage %q, err %v): %s",
			s.Addr, flags["storage.tsdb.path"], err, s.LogTail())
	}
	return nil
}

// URL is the server's base URL.
func (s *Server) URL() string { return "http://" + s.Addr }

// LogTail is the end of the server's log.
func (s *Server) LogTail() string { return proctest.LogTail(s.logFile(), 12) }

// Stop ends the server.
func (s *Server) Stop() {
	if s.proc == nil {
		return
	}
	s.proc.Stop(syscall.SIGTERM, 10*time.Second)
	s.proc = nil
}

// apiResponse is the envelope of every answer of the HTTP API.
type apiResponse struct {
	Status    string          `json:"status"`
	Data      json.RawMessage `json:"data"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Warnings  []string        `json:"warnings"`
}

// get GETs path with query q and decodes the envelope's data into v;
// an API error is returned as an error.
func (s *Server) get(ctx context.Context, path string, q url.Values, v any) error {
	u := s.URL() + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("promtest: %s: HTTP %d, not the API's JSON: %.200s", path, resp.StatusCode, body)
	}
	if r.Status != "success" {
		return fmt.Errorf("promtest: %s: %s: %s", path, r.ErrorType, r.Error)
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(r.Data, v)
}

// Sample is one series of an instant query's vector.
type Sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"` // unix time, value as a string
}

// Float is the sample's value.
func (s Sample) Float() float64 {
	str, _ := s.Value[1].(string)
	f, _ := strconv.ParseFloat(str, 64)
	return f
}

// Query runs an instant query and returns its samples: a vector's, or
// the one of a scalar. An expression Prometheus refuses, or one that
// fails to evaluate, is an error.
func (s *Server) Query(ctx context.Context, expr string) ([]Sample, error) {
	var d struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	}
	if err := s.get(ctx, "/api/v1/query", url.Values{"query": {expr}}, &d); err != nil {
		return nil, err
	}
	switch d.ResultType {
	case "vector":
		var v []Sample
		err := json.Unmarshal(d.Result, &v)
		return v, err
	case "scalar":
		var sc [2]any
		err := json.Unmarshal(d.Result, &sc)
		return []Sample{{Value: sc}}, err
	}
	return nil, fmt.Errorf("promtest: %q gave a %s, not a vector or scalar", expr, d.ResultType)
}

// Target is a scrape target as /api/v1/targets reports it.
type Target struct {
	ScrapePool string `json:"scrapePool"`
	ScrapeURL  string `json:"scrapeUrl"`
	Health     string `json:"health"` // up, down, unknown
	LastError  string `json:"lastError"`
}

// Targets returns the active scrape targets.
func (s *Server) Targets(ctx context.Context) ([]Target, error) {
	var d struct {
		ActiveTargets []Target `json:"activeTargets"`
	}
	err := s.get(ctx, "/api/v1/targets", url.Values{"state": {"active"}}, &d)
	return d.ActiveTargets, err
}

// Rule is an alerting or recording rule as /api/v1/rules reports it.
type Rule struct {
	Name      string `json:"name"`
	Query     string `json:"query"`
	Health    string `json:"health"` // ok, err, unknown
	LastError string `json:"lastError"`
	Type      string `json:"type"`
	State     string `json:"state"` // alerting rules: inactive, pending, firing
}

// Rules returns every rule of every loaded group.
func (s *Server) Rules(ctx context.Context) ([]Rule, error) {
	var d struct {
		Groups []struct {
			Rules []Rule `json:"rules"`
		} `json:"groups"`
	}
	if err := s.get(ctx, "/api/v1/rules", nil, &d); err != nil {
		return nil, err
	}
	var out []Rule
	for _, g := range d.Groups {
		out = append(out, g.Rules...)
	}
	return out, nil
}

// CheckRules runs `promtool check rules` on path and returns its output
// and whether it passed.
func CheckRules(path string) (string, error) {
	bin, err := proctest.Binary("promtool", "/usr/bin/promtool")
	if err != nil {
		return "", err
	}
	out, err := exec.Command(bin, "check", "rules", path).CombinedOutput()
	return string(out), err
}
