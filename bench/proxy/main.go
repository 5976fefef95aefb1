package main

import (
	"bytes"
	crand "crypto/rand"
	_ "embed"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/waitroom/waitroom/bench/internal/stats"
	"github.com/waitroom/waitroom/internal/testkit/nginxtest"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

var (
	bin        = flag.String("bin", "bin/waitroom", "the waitroom binary to benchmark")
	duration   = flag.Duration("duration", 10*time.Second, "length of each measured wrk run")
	warmup     = flag.Duration("warmup", 2*time.Second, "length of the unmeasured wrk run each contender gets first")
	rounds     = flag.Int("rounds", 3, "measured rounds per contender (medians are reported)")
	conns      = flag.Int("conns", 64, "wrk connections")
	outDir     = flag.String("out", "bench/out", "directory for the report")
	only       = flag.String("only", "passthrough,status,join", "parts to run")
	joinStores = flag.String("join-stores", "embedded,always,everysec",
		"stores of the join part: embedded, always (Redis, appendfsync always), everysec (Redis, appendfsync everysec)")
	pin = flag.Bool("pin", true, "pin the server under test to CPU 1, wrk and the backends to CPU 0 (needs taskset and 2 CPUs)")

	serveOrigin = flag.String("serve-origin", "", "internal: run as the benchmark's origin on this address")
	originSize  = flag.Int("origin-body", 1024, "internal: the origin's body size in bytes (0: hello world)")
	serveProxy  = flag.String("serve-proxy", "", "internal: run as the bare fasthttp proxy on this address, to -upstream")
	upstreamArg = flag.String("upstream", "", "internal: the bare proxy's upstream host:port")
)

// The event every part uses, and the body size of the origin's page.
const (
	eventID  = "bench"
	pageSize = 1024
)

//go:embed join.lua
var joinScript string

// bench is one benchmark run: its directory, secrets and the shared
// backend origin.
type bench struct {
	tmp        string
	secret     string // HS256 signing secret of every waitroom
	powSecret  string // the key that signs proof-of-work challenges
	adminToken string
	origin     *proc // the origin behind the proxies, on the generator's CPU
	out        io.Writer
}

func main() {
	flag.Parse()
	log.SetFlags(0)
	if *serveOrigin != "" {
		runOrigin(*serveOrigin, *originSize)
		return
	}
	if *serveProxy != "" {
		runBareProxy(*serveProxy, *upstreamArg)
		return
	}
	stopOnSignal()
	nginx, err := nginxtest.Binary()
	if err != nil {
		fatal(err)
	}
	for _, tool := range []string{"wrk", "redis-server"} {
		if _, err := exec.LookPath(tool); err != nil {
			fatalf("%s not found: run `make deps`", tool)
		}
	}
	if _, err := os.Stat(*bin); err != nil {
		fatalf("%s: %v (run `make build`)", *bin, err)
	}
	placement := "pinned: the server under test alone on CPU 1; wrk (1 thread) and the backends on CPU 0"
	if *pin {
		if _, err := exec.LookPath("taskset"); err != nil || runtime.NumCPU() < 2 {
			*pin = false
			placement = "not pinned (no taskset, or fewer than 2 CPUs): the scheduler places every process"
		}
	} else {
		placement = "not pinned (-pin=false): the scheduler places every process"
	}
	tmp, err := os.MkdirTemp("", "waitroom-bench-proxy-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	atExit(func() { os.RemoveAll(tmp) })

	var report strings.Builder
	b := &bench{tmp: tmp, secret: randomHex(32), powSecret: randomHex(32), adminToken: randomHex(24),
		out: io.MultiWriter(os.Stdout, &report)}
	fmt.Fprintf(b.out, "waitroom proxy benchmark, %s, %d CPUs, %s\n", time.Now().UTC().Format(time.RFC3339), runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(b.out, "%s; %s; %s\n", firstLine(exec.Command(nginx, "-v")), firstLine(exec.Command("redis-server", "--version")), firstLine(exec.Command("wrk", "-v")))
	fmt.Fprintf(b.out, "placement: %s.\n", placement)
	fmt.Fprintf(b.out, "Go servers run with GOMAXPROCS=1, nginx with 1 worker; every run: wrk -t1 -c%d --latency, %d rounds of %s after a %s warm-up, medians.\n",
		*conns, *rounds, *duration, *warmup)

	b.origin = startOrigin(tmp, "origin", cpuGenerator, pageSize)
	defer b.origin.stop()

	parts := strings.Split(*only, ",")
	if slices.Contains(parts, "passthrough") {
		b.passThrough(nginx)
	}
	if slices.Contains(parts, "status") {
		b.status()
	}
	if slices.Contains(parts, "join") {
		b.joins()
	}

	if err := os.MkdirAll(*outDir, 0o755); err == nil {
		path := filepath.Join(*outDir, "proxy-"+time.Now().UTC().Format("20060102T150405Z")+".txt")
		if os.WriteFile(path, []byte(report.String()), 0o644) == nil {
			fmt.Printf("\nreport written to %s\n", path)
		}
	}
}

// contender is one server wrk is pointed at in a comparison.
type contender struct {
	name    string
	run     wrkRun
	server  int // process group of the server under test (CPU 1)
	backend int // process group of its backend on CPU 0, or 0

	results        []wrkResult
	srvCPU, genCPU []float64 // share of one core used, per measured run
	srvPerReq      []float64 // the server's CPU seconds per request, per measured run
	total          int64     // requests wrk completed, warm-up included
	runs           int       // wrk runs, warm-up included
	peak           float64   // the highest rate of a run, warm-up included

	feed *powFeed // writes the join bodies of each run; nil but for joins with proof of work
}

// once runs wrk against c for d and fails loudly on any response that is
// not 2xx or 3xx. The bodies of joins with proof of work are solved first,
// outside the measured time and CPU.
func (c *contender) once(d time.Duration) (wrkResult, float64, float64) {
	if c.feed != nil {
		c.feed.before(d)
	}
	s0, b0 := groupCPU(c.server), time.Duration(0)
	if c.backend != 0 {
		b0 = groupCPU(c.backend)
	}
	run := c.run
	run.Duration = d
	r, out, err := run.run()
	if err != nil {
		fatalf("%s: %v\n%s", c.name, err, out)
	}
	if c.feed != nil {
		c.feed.after(r, out)
	}
	if r.Non2xx > 0 {
		if c.feed != nil {
			out += "\nrefusals by the bot defence: " + c.feed.refusals()
		}
		fatalf("%s: %d responses were not 2xx or 3xx: the run is invalid\n%s", c.name, r.Non2xx, out)
	}
	if r.SocketErrors() > 0 {
		log.Printf("warning: %s: socket errors: connect %d, read %d, write %d, timeout %d", c.name, r.Connect, r.Read, r.Write, r.Timeout)
	}
	c.total += r.Requests
	c.runs++
	c.peak = max(c.peak, r.Rate)
	secs := r.Elapsed.Seconds()
	srv := (groupCPU(c.server) - s0).Seconds() / secs
	gen := r.CPU.Seconds() / secs
	if c.backend != 0 {
		gen += (groupCPU(c.backend) - b0).Seconds() / secs
	}
	return r, srv, gen
}

// measure warms every contender up, then runs the rounds, rotating the
// order so that none always goes first, and prints each run.
func (b *bench) measure(cs []*contender, unit string) {
	for _, c := range cs {
		c.once(*warmup)
	}
	for round := range *rounds {
		order := slices.Clone(cs)
		for range round % len(cs) {
			order = append(order[1:], order[0])
		}
		for _, c := range order {
			r, srv, gen := c.once(*duration)
			c.results = append(c.results, r)
			c.srvCPU = append(c.srvCPU, srv)
			c.genCPU = append(c.genCPU, gen)
			c.srvPerReq = append(c.srvPerReq, srv*r.Elapsed.Seconds()/float64(max(r.Requests, 1)))
			fmt.Fprintf(b.out, "  round %d  %-24s %8.0f %s  p50 %-8s p99 %-8s cpu %s %s\n", round+1, c.name, r.Rate, unit,
				ms(r.P50), ms(r.P99), pct(srv), pct(gen))
		}
	}
}

// median figures of a contender.
func (c *contender) rate() float64 {
	return median(c.results, func(r wrkResult) float64 { return r.Rate })
}
func (c *contender) p50() time.Duration {
	return time.Duration(median(c.results, func(r wrkResult) float64 { return float64(r.P50) }))
}
func (c *contender) p99() time.Duration {
	return time.Duration(median(c.results, func(r wrkResult) float64 { return float64(r.P99) }))
}

// cpuPerReq is the median of the server's CPU time per request: on a
// shared, noisy machine a steadier measure of a server's own cost than
// its rate, which also moves with whatever else gets the cores.
func (c *contender) cpuPerReq() time.Duration {
	return time.Duration(stats.Median(c.srvPerReq) * float64(time.Second))
}

// table prints the medians with a ratio to base and a target per row.
func (b *bench) table(cs []*contender, unit string, base *contender, targets map[*contender]string) {
	tw := tabwriter.NewWriter(b.out, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\ncontender\tmedian %s\tp50\tp99\tcpu (server/gen)\tserver cpu/req\tratio to %s\ttarget\n", unit, base.name)
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s / %s\t%s\t%.2f×\t%s\n", c.name, c.rate(), ms(c.p50()), ms(c.p99()),
			pct(stats.Median(c.srvCPU)), pct(stats.Median(c.genCPU)), us(c.cpuPerReq()), c.rate()/base.rate(), orDash(targets[c]))
	}
	tw.Flush()
}

// cpuRatio is how many requests a's server serves per CPU second
// relative to b's: b's CPU per request over a's (1.0: as cheap).
func cpuRatio(a, b *contender) float64 {
	return float64(b.cpuPerReq()) / float64(max(a.cpuPerReq(), 1))
}

func median[T any](v []T, f func(T) float64) float64 {
	s := make([]float64, len(v))
	for i, x := range v {
		s[i] = f(x)
	}
	return stats.Median(s)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }
func us(d time.Duration) string { return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond)) }
func pct(f float64) string      { return fmt.Sprintf("%.0f%%", 100*f) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

func randomHex(n int) string {
	b := make([]byte, n)
	crand.Read(b)
	return hex.EncodeToString(b)
}

func firstLine(cmd *exec.Cmd) string {
	b, _ := cmd.CombinedOutput()
	line, _, _ := strings.Cut(string(bytes.TrimSpace(b)), "\n")
	return strings.TrimSpace(line)
}

// writeScript writes a wrk Lua script into the run's directory.
func (b *bench) writeScript(name, text string) string {
	path := filepath.Join(b.tmp, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		fatal(err)
	}
	return path
}

// redisPID asks a Redis server for its process id (its process group:
// redistest starts it in its own).
func redisPID(rds *redistest.Server) int {
	c := rds.Client()
	defer c.Close()
	info, err := c.Info(bgctx, "server").Result()
	if err != nil {
		fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			var pid int
			fmt.Sscan(v, &pid)
			return pid
		}
	}
	fatal("redis INFO has no process_id")
	return 0
}
