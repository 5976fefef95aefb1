package main

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// client sends a bot's requests to the waiting room: GET the challenge,
// POST the join. cpu is what its own processes used so far (for clients
// whose work runs elsewhere, 0).
type client interface {
	do(method, path string, body []byte) (status int, respBody []byte, err error)
	close() time.Duration
}

// curlClient runs the curl binary once per request, as a shell script
// would, from the bot's address; its CPU time is every curl's rusage.
type curlClient struct {
	base, local, caFile string
	cpu                 time.Duration
}

func (c *curlClient) do(method, path string, body []byte) (int, []byte, error) {
	args := []string{"-sS", "--max-time", "30", "--cacert", c.caFile, "--interface", c.local,
		"-o", "-", "-w", "\n%{http_code}", "-X", method}
	if body != nil {
		args = append(args, "-H", "Content-Type: application/json", "--data-binary", "@-")
	}
	cmd := exec.Command("curl", append(args, c.base+path)...)
	if body != nil {
		cmd.Stdin = bytes.NewReader(body)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	c.cpu += childCPU(cmd)
	if err != nil {
		return 0, nil, fmt.Errorf("curl: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	i := bytes.LastIndexByte(out, '\n')
	if i < 0 {
		return 0, nil, fmt.Errorf("curl: no status in %q", out)
	}
	var status int
	fmt.Sscan(string(out[i+1:]), &status)
	return status, out[:i], nil
}

func (c *curlClient) close() time.Duration { return c.cpu }

//go:embed python_client.py
var pythonScript []byte

// pythonClient is one python3 process for the whole run of a strategy
// (python_client.py): requests go to it a line each.
type pythonClient struct{ *lineChild }

func startPython(tmp, host, port, local, caFile string) (*pythonClient, error) {
	script := filepath.Join(tmp, "python_client.py")
	if err := os.WriteFile(script, pythonScript, 0o644); err != nil {
		return nil, err
	}
	c, err := startLineChild("python3", script, host, port, local, caFile)
	if err != nil {
		return nil, err
	}
	return &pythonClient{c}, nil
}

func (p *pythonClient) do(method, path string, body []byte) (int, []byte, error) {
	var resp struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
		Error  string `json:"error"`
	}
	if err := p.call(map[string]string{"method": method, "path": path, "body": string(body)}, &resp); err != nil {
		return 0, nil, err
	}
	if resp.Error != "" {
		return 0, nil, fmt.Errorf("python3: %s", resp.Error)
	}
	return resp.Status, []byte(resp.Body), nil
}

func (p *pythonClient) close() time.Duration { return p.stop() }

// agentClient sends requests through the agent (its CPU is counted when
// the agent stops, not here). headers are the go-chrome client's header
// lines for a GET and for a POST.
type agentClient struct {
	a         *agent
	kind      string
	get, post [][2]string
}

func (c *agentClient) do(method, path string, body []byte) (int, []byte, error) {
	hs := c.get
	if method == "POST" {
		hs = c.post
	}
	r, err := c.a.call(agentReq{Op: "http", Client: c.kind, Method: method, Path: path, Headers: hs, Body: string(body)})
	if err != nil {
		return 0, nil, err
	}
	if r.Error != "" {
		return r.Status, []byte(r.Body), fmt.Errorf("%s", r.Error)
	}
	return r.Status, []byte(r.Body), nil
}

func (c *agentClient) close() time.Duration { return 0 }
