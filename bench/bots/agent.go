package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
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
	"time"
)

// The agent is this program started again with -agent: the Go side of a
// scripted bot, in a process of its own so that its CPU time (its rusage
// when it exits) is the bot's and nothing else's. It reads one request a
// line on stdin and answers one a line on stdout:
//
//	{"op":"rate"}                                  → {"rate": hashes per CPU-second}
//	{"op":"solve","seed","bits","puzzles"}         → {"nonces":[...]}
//	{"op":"http","client","method","path","headers","body"} → {"status","body"} or {"error"}
//
// client "go-default" is net/http as a Go program gets it (its own
// headers: Host, User-Agent: Go-http-client/1.1, Accept-Encoding: gzip);
// "go-chrome" writes HTTP/1.1 by hand with exactly the header lines given,
// in their order (net/http sorts headers), over crypto/tls offering
// Chrome's ALPN list. Both dial from -local and keep their connection
// alive between requests, as a bot would.
type agentReq struct {
	Op      string      `json:"op"`
	Seed    string      `json:"seed,omitempty"`
	Bits    int         `json:"bits,omitempty"`
	Puzzles int         `json:"puzzles,omitempty"`
	Client  string      `json:"client,omitempty"`
	Method  string      `json:"method,omitempty"`
	Path    string      `json:"path,omitempty"`
	Headers [][2]string `json:"headers,omitempty"`
	Body    string      `json:"body,omitempty"`
}

type agentResp struct {
	Rate   float64  `json:"rate,omitempty"`
	Nonces []uint64 `json:"nonces,omitempty"`
	Status int      `json:"status,omitempty"`
	Body   string   `json:"body,omitempty"`
	Error  string   `json:"error,omitempty"`
}

// runAgent is the agent's main.
func runAgent(caFile, localIP, target string) {
	pool, err := loadPool(caFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	if localIP != "" {
		dialer.LocalAddr = &net.TCPAddr{IP: net.ParseIP(localIP)}
	}
	a := &agentState{pool: pool, dialer: dialer, target: target,
		std: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			DialContext: dialer.DialContext, TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<22)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var req agentReq
		var resp agentResp
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			resp.Error = err.Error()
		} else {
			resp = a.do(req)
		}
		out.Encode(resp)
	}
}

type agentState struct {
	pool   *x509.CertPool
	dialer *net.Dialer
	target string
	std    *http.Client
	raw    *rawConn
}

func (a *agentState) do(req agentReq) (resp agentResp) {
	switch req.Op {
	case "rate":
		resp.Rate = hashRate(time.Second)
	case "solve":
		seed, err := hex.DecodeString(req.Seed)
		if err != nil || len(seed) != 16 || req.Bits < 0 || req.Bits > 32 || req.Puzzles < 1 || req.Puzzles > 64 {
			resp.Error = "bad challenge"
			return
		}
		resp.Nonces = solve([16]byte(seed), uint8(req.Bits), uint8(req.Puzzles))
	case "http":
		var status int
		var body []byte
		var err error
		switch req.Client {
		case "go-default":
			status, body, err = a.stdDo(req)
		case "go-chrome":
			status, body, err = a.rawDo(req)
		default:
			err = fmt.Errorf("unknown client %q", req.Client)
		}
		resp.Status, resp.Body = status, string(body)
		if err != nil {
			resp.Error = err.Error()
		}
	default:
		resp.Error = "unknown op " + req.Op
	}
	return resp
}

func (a *agentState) stdDo(req agentReq) (int, []byte, error) {
	var rd io.Reader
	if req.Body != "" {
		rd = strings.NewReader(req.Body)
	}
	hr, err := http.NewRequest(req.Method, "https://"+a.target+req.Path, rd)
	if err != nil {
		return 0, nil, err
	}
	if req.Body != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	r, err := a.std.Do(hr)
	if err != nil {
		return 0, nil, err
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	return r.StatusCode, b, err
}

// rawConn is one kept-alive TLS connection of the go-chrome client.
type rawConn struct {
	c  *tls.Conn
	br *bufio.Reader
}

func (a *agentState) rawDial() (*rawConn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := (&tls.Dialer{NetDialer: a.dialer, Config: &tls.Config{RootCAs: a.pool,
		NextProtos: []string{"h2", "http/1.1"}}}).DialContext(ctx, "tcp", a.target)
	if err != nil {
		return nil, err
	}
	tc := c.(*tls.Conn)
	if p := tc.ConnectionState().NegotiatedProtocol; p == "h2" {
		tc.Close()
		return nil, errors.New("the server chose h2; the go-chrome client writes HTTP/1.1 only")
	}
	return &rawConn{c: tc, br: bufio.NewReader(tc)}, nil
}

// rawDo writes the request line, the given header lines in their order
// (a Content-Length header is set to the body's length) and the body.
func (a *agentState) rawDo(req agentReq) (int, []byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", req.Method, req.Path)
	for _, h := range req.Headers {
		v := h[1]
		if strings.EqualFold(h[0], "Content-Length") {
			v = strconv.Itoa(len(req.Body))
		}
		fmt.Fprintf(&b, "%s: %s\r\n", h[0], v)
	}
	b.WriteString("\r\n")
	b.WriteString(req.Body)
	for attempt := 0; ; attempt++ {
		if a.raw == nil {
			rc, err := a.rawDial()
			if err != nil {
				return 0, nil, err
			}
			a.raw = rc
		}
		status, body, err := a.raw.roundTrip(b.Bytes(), req.Method)
		if err == nil {
			return status, body, nil
		}
		a.raw.c.Close()
		a.raw = nil
		if attempt > 0 {
			return 0, nil, err
		}
	}
}

func (rc *rawConn) roundTrip(msg []byte, method string) (int, []byte, error) {
	rc.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := rc.c.Write(msg); err != nil {
		return 0, nil, err
	}
	r, err := http.ReadResponse(rc.br, &http.Request{Method: method})
	if err != nil {
		return 0, nil, err
	}
	defer r.Body.Close()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return 0, nil, err
	}
	if r.Close {
		return r.StatusCode, body, errClosed
	}
	return r.StatusCode, body, nil
}

var errClosed = errors.New("connection closed by the server")

// lineChild is a child process spoken to in JSON lines: one request a
// line on its stdin, one answer a line on its stdout. Its CPU time is its
// rusage once it has exited.
type lineChild struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startLineChild(name string, args ...string) (*lineChild, error) {
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	return &lineChild{cmd: cmd, in: in, out: sc}, nil
}

// call sends req and decodes the answer into resp.
func (c *lineChild) call(req, resp any) error {
	b, _ := json.Marshal(req)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		return err
	}
	if !c.out.Scan() {
		return fmt.Errorf("%s stopped: %v", filepath.Base(c.cmd.Path), c.out.Err())
	}
	return json.Unmarshal(c.out.Bytes(), resp)
}

// stop closes its stdin, waits for it to exit and returns its CPU time.
func (c *lineChild) stop() time.Duration {
	c.in.Close()
	c.cmd.Wait()
	return childCPU(c.cmd)
}

// agent is the parent's handle on a running agent.
type agent struct{ *lineChild }

// startAgent starts this program as an agent dialling target from
// localIP.
func startAgent(caFile, localIP, target string) (*agent, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	c, err := startLineChild(exe, "-agent", "-ca", caFile, "-local", localIP, "-target", target)
	if err != nil {
		return nil, err
	}
	return &agent{c}, nil
}

func (a *agent) call(req agentReq) (agentResp, error) {
	var resp agentResp
	err := a.lineChild.call(req, &resp)
	return resp, err
}
