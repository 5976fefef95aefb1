package main

import (
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"time"
)

// wrkResult is what one wrk run printed.
type wrkResult struct {
	Requests int64         // "N requests in D"
	Elapsed  time.Duration // the D of that line
	Rate     float64       // Requests/sec
	P50, P99 time.Duration // from --latency's distribution
	Non2xx   int64         // "Non-2xx or 3xx responses: N"
	// Socket errors by kind; all zero when wrk printed no such line.
	Connect, Read, Write, Timeout int64
	CPU                           time.Duration // user+system time wrk used
}

// SocketErrors is the number of connect, read, write errors and timeouts.
func (r wrkResult) SocketErrors() int64 { return r.Connect + r.Read + r.Write + r.Timeout }

var (
	wrkTotal   = regexp.MustCompile(`(?m)^\s*(\d+) requests in ([0-9.]+)(us|ms|s|m|h)\b`)
	wrkRate    = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)`)
	wrkPct     = regexp.MustCompile(`(?m)^\s+(50|99)%\s+([0-9.]+)(us|ms|s|m|h)\s*$`)
	wrkNon2xx  = regexp.MustCompile(`(?m)^\s*Non-2xx or 3xx responses: (\d+)`)
	wrkSockErr = regexp.MustCompile(`(?m)^\s*Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

// errWrkOutput reports wrk output that lacks what every run prints.
var errWrkOutput = errors.New("wrk output has no request count, rate or latency distribution")

// parseWrk reads the summary wrk prints with --latency.
func parseWrk(out string) (wrkResult, error) {
	var r wrkResult
	m := wrkTotal.FindStringSubmatch(out)
	rate := wrkRate.FindStringSubmatch(out)
	pcts := wrkPct.FindAllStringSubmatch(out, -1)
	if m == nil || rate == nil || len(pcts) < 2 {
		return r, errWrkOutput
	}
	var err error
	if r.Requests, err = strconv.ParseInt(m[1], 10, 64); err != nil {
		return r, fmt.Errorf("wrk request count: %w", err)
	}
	if r.Elapsed, err = wrkDuration(m[2], m[3]); err != nil {
		return r, err
	}
	if r.Rate, err = strconv.ParseFloat(rate[1], 64); err != nil {
		return r, fmt.Errorf("wrk rate: %w", err)
	}
	for _, p := range pcts {
		d, err := wrkDuration(p[2], p[3])
		if err != nil {
			return r, err
		}
		if p[1] == "50" {
			r.P50 = d
		} else {
			r.P99 = d
		}
	}
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		r.Non2xx, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := wrkSockErr.FindStringSubmatch(out); m != nil {
		for i, dst := range []*int64{&r.Connect, &r.Read, &r.Write, &r.Timeout} {
			*dst, _ = strconv.ParseInt(m[i+1], 10, 64)
		}
	}
	return r, nil
}

// wrkDuration converts a number and one of wrk's time units.
func wrkDuration(num, unit string) (time.Duration, error) {
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("wrk time %q: %w", num+unit, err)
	}
	scale := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond,
		"s": time.Second, "m": time.Minute, "h": time.Hour}[unit]
	if scale == 0 {
		return 0, fmt.Errorf("wrk time %q: unknown unit", num+unit)
	}
	return time.Duration(v * float64(scale)), nil
}

// wrkRun describes one wrk invocation.
type wrkRun struct {
	URL      string
	Duration time.Duration
	Conns    int
	Headers  []string // "Name: value"
	Script   string   // Lua file, or ""
	Args     []string // the script's arguments (its init's args[1], …)
}

// run executes wrk (one thread, on the generator's CPU when pinning) and
// parses its summary.
func (w wrkRun) run() (wrkResult, string, error) {
	args := []string{"-t1", "-c", strconv.Itoa(w.Conns), "-d", w.Duration.String(), "--latency"}
	for _, h := range w.Headers {
		args = append(args, "-H", h)
	}
	if w.Script != "" {
		args = append(args, "-s", w.Script)
	}
	args = append(args, w.URL)
	if len(w.Args) > 0 {
		args = append(append(args, "--"), w.Args...)
	}
	cmd := command(cpuGenerator, "wrk", args...)
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	if err != nil {
		return wrkResult{}, out, fmt.Errorf("wrk: %w", err)
	}
	r, err := parseWrk(out)
	if err != nil {
		return r, out, err
	}
	if ps := cmd.ProcessState; ps != nil {
		r.CPU = ps.UserTime() + ps.SystemTime()
	}
	return r, out, nil
}

// command runs name pinned to cpu when pinning is on.
func command(cpu int, name string, args ...string) *exec.Cmd {
	if *pin {
		return exec.Command("taskset", append([]string{"-c", strconv.Itoa(cpu), name}, args...)...)
	}
	return exec.Command(name, args...)
}
