package main

import (
	"bytes"
	"context"
	crand "crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/bench/internal/stats"
	"github.com/waitroom/waitroom/internal/testkit/freeport"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/memstore"
	"github.com/waitroom/waitroom/inventory/redisstore"
)

//go:embed eval_hold.lua
var evalHold string

//go:embed wrk_hold.lua
var wrkHold string

var (
	bin      = flag.String("bin", "bin/waitroom", "the waitroom binary to benchmark")
	duration = flag.Duration("duration", 10*time.Second, "length of each throughput run")
	rounds   = flag.Int("rounds", 3, "throughput rounds (medians are reported)")
	conns    = flag.Int("conns", 64, "connections for wrk and redis-benchmark")
	fight    = flag.Duration("fight", 10*time.Second, "length of each hot-seat fight")
	thinks   = flag.String("think", "1s,500ms,200ms", "mean pauses between a fighting client's attempts, one fight each; the first is the one the target applies to")
	outDir   = flag.String("out", "bench/out", "directory for the report")
	only     = flag.String("only", "throughput,fight,memory", "parts to run")
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	for _, tool := range []string{"wrk", "redis-benchmark", "redis-server"} {
		if _, err := exec.LookPath(tool); err != nil {
			log.Fatalf("%s not found: run `make deps`", tool)
		}
	}
	if _, err := os.Stat(*bin); err != nil {
		log.Fatalf("%s: %v (run `make build`)", *bin, err)
	}
	tmp, err := os.MkdirTemp("", "waitroom-bench-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)

	var report strings.Builder
	out := io.MultiWriter(os.Stdout, &report)
	fmt.Fprintf(out, "waitroom inventory benchmark, %s, %d CPUs, %s\n", time.Now().UTC().Format(time.RFC3339), runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(out, "redis: %s", firstLine(exec.Command("redis-server", "--version")))

	rds, err := redistest.Launch(redistest.Options{AppendOnly: true, Dir: mkdir(tmp, "redis")})
	if err != nil {
		log.Fatal(err)
	}
	defer rds.Stop()
	token := randomToken()
	parts := strings.Split(*only, ",")
	// Each part gets fresh sidecars, so none inherits another's state.
	fresh := func(part string) (*sidecar, *sidecar) {
		return startSidecar(tmp, part+"-embedded", token, "--data-dir", mkdir(tmp, part+"-embedded-data")),
			startSidecar(tmp, part+"-redis", token, "--redis", rds.URL())
	}
	if slices.Contains(parts, "throughput") {
		embedded, shared := fresh("throughput")
		throughput(out, rds, embedded, shared)
		embedded.stop()
		shared.stop()
	}
	if slices.Contains(parts, "fight") {
		fmt.Fprintf(out, "\n== Hot seats: 1,000 concurrent clients fighting over 100 seats, %s per fight ==\n", *fight)
		fmt.Fprintln(out, "Each client tries to hold one random seat, then pauses (exponential, mean THINK) and tries again.")
		fmt.Fprintln(out, "A winner keeps the seat through a checkout of the same mean length, then releases it (3 in 4)")
		fmt.Fprintln(out, "or buys and refunds it, so the 100 seats are mostly taken and most attempts lose.")
		fmt.Fprintln(out, "Latency is of the hold request, measured by the client (fasthttp, keep-alive, one connection each).")
		tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "store	think	attempts/s	requests/s	won	lost	errors	p50	p99	max	target p99 < 10ms")
		for i, th := range strings.Split(*thinks, ",") {
			d, err := time.ParseDuration(th)
			if err != nil {
				log.Fatalf("-think: %v", err)
			}
			embedded, shared := fresh(fmt.Sprintf("fight%d", i))
			for _, sc := range []*sidecar{embedded, shared} {
				r := hotSeats(sc, d)
				target := "(load test)"
				if i == 0 {
					target = verdict(r.p99 < 10*time.Millisecond && r.errors == 0)
				}
				fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", sc.name, d, r.rate, r.reqRate, r.won, r.lost, r.errors,
					ms(r.p50), ms(r.p99), ms(r.max), target)
			}
			embedded.stop()
			shared.stop()
		}
		tw.Flush()
	}
	if slices.Contains(parts, "memory") {
		memory(out, tmp)
	}

	if err := os.MkdirAll(*outDir, 0o755); err == nil {
		path := filepath.Join(*outDir, "inventory-"+time.Now().UTC().Format("20060102T150405Z")+".txt")
		if os.WriteFile(path, []byte(report.String()), 0o644) == nil {
			fmt.Printf("\nreport written to %s\n", path)
		}
	}
}

// sidecar is a running `waitroom inventory` process.
type sidecar struct {
	name, url, token string
	cmd              *exec.Cmd
	client           *http.Client
}

func startSidecar(tmp, name, token string, args ...string) *sidecar {
	port, err := freeport.Get()
	if err != nil {
		log.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	logf, err := os.Create(filepath.Join(tmp, name+".log"))
	if err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command(*bin, append([]string{"inventory", "--listen", addr}, args...)...)
	cmd.Env = append(os.Environ(), "WAITROOM_INVENTORY_TOKEN="+token)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	s := &sidecar{name: name, url: "http://" + addr, token: token, cmd: cmd,
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			MaxIdleConns: 2000, MaxIdleConnsPerHost: 2000, MaxConnsPerHost: 2000, IdleConnTimeout: time.Minute}}}
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(s.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		if time.Now().After(deadline) {
			log.Fatalf("sidecar %s did not start; see %s", name, logf.Name())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *sidecar) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
}

// call sends one API request and returns the status and body.
func (s *sidecar) call(method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+s.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func (s *sidecar) define(event string, def inventory.EventDef) {
	code, body, err := s.call("PUT", "/v1/events/"+event, def)
	if err != nil || code != 200 {
		log.Fatalf("%s: defining %s: %d %s %v", s.name, event, code, body, err)
	}
}

// bigEvent is one section of 1,000 rows of 1,000 seats: room for every
// hold of a throughput run without reusing a seat.
func bigEvent() inventory.EventDef {
	rows := make([]inventory.Row, 1000)
	for i := range rows {
		rows[i] = inventory.Row{ID: strconv.Itoa(i + 1), Seats: 1000}
	}
	return inventory.EventDef{Sections: []inventory.Section{{ID: "S", Rows: rows}}}
}

// throughput runs the rounds and prints medians and ratios.
func throughput(out io.Writer, rds *redistest.Server, embedded, shared *sidecar) {
	fmt.Fprintf(out, "\n== Single-seat holds per second (%d rounds of %s, %d connections each) ==\n", *rounds, *duration, *conns)
	fmt.Fprintln(out, "sidecar: POST /v1/events/E/holds {\"user\":…,\"seats\":[one new seat]} over HTTP, driven by wrk;")
	fmt.Fprintln(out, "redis-benchmark: EVALSHA of bench/inventory/eval_hold.lua (take a free seat, record the hold,")
	fmt.Fprintln(out, "index its expiry, append an audit entry) against the same Redis (appendfsync always), database 1.")
	sha := loadEval(rds)
	results := map[string][]float64{}
	lat := map[string][]time.Duration{}
	names := []string{"embedded sidecar", "redis sidecar", "redis-benchmark EVAL"}
	for round := range *rounds {
		order := []int{0, 1, 2}
		for i := 0; i < round; i++ { // rotate, so no contender always runs first
			order = append(order[1:], order[0])
		}
		for _, i := range order {
			var rps float64
			var p99 time.Duration
			switch i {
			case 0, 1:
				sc := []*sidecar{embedded, shared}[i]
				ev := fmt.Sprintf("bench-%d", round)
				sc.define(ev, bigEvent())
				rps, p99 = runWrk(sc, ev)
			case 2:
				rps, p99 = runRedisBenchmark(rds, sha)
			}
			results[names[i]] = append(results[names[i]], rps)
			lat[names[i]] = append(lat[names[i]], p99)
			fmt.Fprintf(out, "  round %d  %-22s %9.0f holds/s  p99 %s\n", round+1, names[i], rps, ms(p99))
		}
	}
	eval := stats.Median(results[names[2]])
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\ncontender\tmedian holds/s\tmedian p99\tratio to EVAL\ttarget")
	for i, n := range names {
		m := stats.Median(results[n])
		target := "-"
		switch i {
		case 0:
			target = "≥ 1.0× " + verdict(m >= eval)
		case 1:
			target = "≥ 0.5× " + verdict(m >= 0.5*eval)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%.2f×\t%s\n", n, m, ms(stats.Median(lat[n])), m/eval, target)
	}
	tw.Flush()
}

var (
	reqRate  = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkP99   = regexp.MustCompile(`(?m)^\s+99%\s+([0-9.]+)(us|ms|s)`)
	non2xx   = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
	sockErrs = regexp.MustCompile(`Socket errors: (.*)`)
)

func runWrk(sc *sidecar, event string) (float64, time.Duration) {
	script := filepath.Join(os.TempDir(), "waitroom-wrk-hold.lua")
	if err := os.WriteFile(script, []byte(wrkHold), 0o644); err != nil {
		log.Fatal(err)
	}
	threads := max(1, min(runtime.NumCPU(), 2))
	cmd := exec.Command("wrk", "-t", strconv.Itoa(threads), "-c", strconv.Itoa(*conns), "-d", duration.String(),
		"--latency", "-s", script, sc.url, "--", "/v1/events/"+event+"/holds", sc.token, strconv.Itoa(threads))
	outb, err := cmd.CombinedOutput()
	if err != nil {
		log.Fatalf("wrk: %v\n%s", err, outb)
	}
	text := string(outb)
	if m := non2xx.FindStringSubmatch(text); m != nil {
		log.Fatalf("wrk against %s: %s holds failed:\n%s", sc.name, m[1], text)
	}
	if m := sockErrs.FindStringSubmatch(text); m != nil {
		log.Printf("wrk against %s: socket errors: %s", sc.name, m[1])
	}
	m := reqRate.FindStringSubmatch(text)
	if m == nil {
		log.Fatalf("wrk printed no rate:\n%s", text)
	}
	rps, _ := strconv.ParseFloat(m[1], 64)
	return rps, parseWrkDur(wrkP99.FindStringSubmatch(text))
}

func parseWrkDur(m []string) time.Duration {
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	switch m[2] {
	case "us":
		return time.Duration(v * float64(time.Microsecond))
	case "ms":
		return time.Duration(v * float64(time.Millisecond))
	}
	return time.Duration(v * float64(time.Second))
}

func loadEval(rds *redistest.Server) string {
	c := redis.NewClient(&redis.Options{Addr: rds.Addr, DB: 1})
	defer c.Close()
	sha, err := c.ScriptLoad(context.Background(), evalHold).Result()
	if err != nil {
		log.Fatal(err)
	}
	return sha
}

func runRedisBenchmark(rds *redistest.Server, sha string) (float64, time.Duration) {
	host, port, _ := net.SplitHostPort(rds.Addr)
	c := redis.NewClient(&redis.Options{Addr: rds.Addr, DB: 1})
	c.FlushDB(context.Background())
	c.Close()
	// Size the run to about the same length as the sidecar runs.
	n := int(duration.Seconds() * 25000)
	cmd := exec.Command("redis-benchmark", "-h", host, "-p", port, "--dbnum", "1", "-c", strconv.Itoa(*conns),
		"-n", strconv.Itoa(n), "-r", "100000000", "--csv",
		"EVALSHA", sha, "4", "b:seats", "b:h:", "b:exp", "b:audit", "seat:__rand_int__", "hld:__rand_int__", "480000")
	outb, err := cmd.CombinedOutput()
	if err != nil {
		log.Fatalf("redis-benchmark: %v\n%s", err, outb)
	}
	// "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
	for _, line := range strings.Split(string(outb), "\n") {
		f := strings.Split(strings.ReplaceAll(line, `"`, ""), ",")
		if len(f) >= 7 && strings.HasPrefix(f[0], "EVALSHA") {
			rps, _ := strconv.ParseFloat(f[1], 64)
			p99, _ := strconv.ParseFloat(f[6], 64)
			return rps, time.Duration(p99 * float64(time.Millisecond))
		}
	}
	log.Fatalf("redis-benchmark printed no result:\n%s", outb)
	return 0, 0
}

type fightResult struct {
	rate, reqRate     float64
	won, lost, errors int64
	p50, p99, max     time.Duration
}

// hotSeats runs 1,000 clients against 100 seats for *fight, each pausing
// think on average between attempts.
func hotSeats(sc *sidecar, think time.Duration) fightResult {
	ev := "hot"
	sc.define(ev, inventory.EventDef{Sections: []inventory.Section{{ID: "H", Rows: []inventory.Row{{ID: "1", Seats: 100}}}}})
	const clients = 1000
	hc := &fasthttp.HostClient{Addr: strings.TrimPrefix(sc.url, "http://"), MaxConns: clients + 10,
		MaxIdleConnDuration: time.Minute, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	auth := "Bearer " + sc.token
	call := func(method, path string, body []byte, out any) (int, error) {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.Header.SetMethod(method)
		req.SetRequestURI(sc.url + path)
		req.Header.Set("Authorization", auth)
		if body != nil {
			req.Header.SetContentType("application/json")
			req.SetBodyRaw(body)
		}
		if err := hc.Do(req, resp); err != nil {
			return 0, err
		}
		if out != nil {
			json.Unmarshal(resp.Body(), out)
		}
		return resp.StatusCode(), nil
	}
	var (
		won, lost, errs, reqs atomic.Int64
		mu                    sync.Mutex
		lats                  []time.Duration
		wg                    sync.WaitGroup
	)
	deadline := time.Now().Add(*fight)
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			mine := make([]time.Duration, 0, 256)
			// Arrivals spread over one think time, as they would be.
			time.Sleep(time.Duration(rng.Float64() * float64(think)))
			for time.Now().Before(deadline) {
				body := fmt.Appendf(nil, `{"user":"fan-%d","seats":["H-1-%d"]}`, c, 1+rng.IntN(100))
				var h struct {
					ID string `json:"hold_id"`
				}
				t0 := time.Now()
				code, err := call("POST", "/v1/events/"+ev+"/holds", body, &h)
				mine = append(mine, time.Since(t0))
				reqs.Add(1)
				switch {
				case err != nil || (code != 201 && code != 409):
					errs.Add(1)
				case code == 409:
					lost.Add(1)
				default:
					won.Add(1)
					// Check out for a while, holding the seat, as winners do.
					pause(deadline, time.Duration(rng.ExpFloat64()*float64(think)))
					if rng.IntN(4) == 0 {
						// Sell it, then refund at once so the fight goes on.
						var o struct {
							ID string `json:"order_id"`
						}
						call("POST", "/v1/events/"+ev+"/holds/"+h.ID+"/confirm", []byte(`{"payment_ref":"bench"}`), &o)
						call("POST", "/v1/events/"+ev+"/orders/"+o.ID+"/cancel", []byte(`{}`), nil)
						reqs.Add(2)
					} else {
						call("DELETE", "/v1/events/"+ev+"/holds/"+h.ID, nil, nil)
						reqs.Add(1)
					}
				}
				pause(deadline, time.Duration(rng.ExpFloat64()*float64(think)))
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := min(time.Since(start), *fight).Seconds()
	slices.Sort(lats)
	r := fightResult{won: won.Load(), lost: lost.Load(), errors: errs.Load(),
		rate: float64(len(lats)) / elapsed, reqRate: float64(reqs.Load()) / elapsed}
	if len(lats) > 0 {
		r.p50, r.p99, r.max = lats[len(lats)/2], lats[len(lats)*99/100], lats[len(lats)-1]
	}
	return r
}

// pause sleeps d, but not past deadline.
func pause(deadline time.Time, d time.Duration) {
	time.Sleep(min(d, max(0, time.Until(deadline))))
}

// memory sells out a 100,000-seat event in 4-seat holds and reports what
// it costs each store.
func memory(out io.Writer, tmp string) {
	fmt.Fprintln(out, "\n== Memory of a 100,000-seat event (200 sections × 20 rows × 25 seats), sold out in 4-seat holds ==")
	def := venue()
	ctx := context.Background()

	rds, err := redistest.Launch(redistest.Options{AppendOnly: true, Dir: mkdir(tmp, "redis-mem")})
	if err != nil {
		log.Fatal(err)
	}
	defer rds.Stop()
	c := rds.Client()
	defer c.Close()
	rs, err := redisstore.New(ctx, redisstore.Options{Client: c})
	if err != nil {
		log.Fatal(err)
	}
	before := redisUsed(c)
	defined := sellOut(rs, def, before, func() int64 { return redisUsed(c) })

	ms, err := memstore.Open(memstore.Options{Dir: mkdir(tmp, "mem")})
	if err != nil {
		log.Fatal(err)
	}
	defer ms.Close()
	heapBefore := heap()
	memDefined := sellOut(ms, def, heapBefore, heap)

	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "store\tdefined\tsold out\ttarget")
	fmt.Fprintf(tw, "redis (used_memory growth)\t%s\t%s\t≤ 64 MB %s\n", mb(defined[0]), mb(defined[1]), verdict(defined[1] <= 64<<20))
	fmt.Fprintf(tw, "embedded (Go heap growth)\t%s\t%s\t≤ 32 MB %s\n", mb(memDefined[0]), mb(memDefined[1]), verdict(memDefined[1] <= 32<<20))
	tw.Flush()
}

// venue is 200 sections of 20 rows of 25 seats.
func venue() inventory.EventDef {
	var def inventory.EventDef
	for s := range 200 {
		sec := inventory.Section{ID: fmt.Sprintf("S%d", s+1), PriceCents: 5000}
		for r := range 20 {
			sec.Rows = append(sec.Rows, inventory.Row{ID: strconv.Itoa(r + 1), Seats: 25})
		}
		def.Sections = append(def.Sections, sec)
	}
	return def
}

// sellOut defines the venue, then holds and confirms every seat; it
// returns the measured growth after defining and after selling out.
func sellOut(s inventory.Store, def inventory.EventDef, base int64, measure func() int64) [2]int64 {
	ctx := context.Background()
	ev := "venue-" + randomToken()[:8]
	if _, err := s.PutEvent(ctx, ev, def, "bench"); err != nil {
		log.Fatal(err)
	}
	var got [2]int64
	got[0] = measure() - base
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; ; i += 8 {
				sec := def.Sections[(i/125)%len(def.Sections)].ID
				h, err := s.Hold(ctx, ev, inventory.HoldRequest{User: fmt.Sprintf("u%d", i), Best: &inventory.BestRequest{Section: sec, Quantity: 4}})
				if err != nil {
					// The section's last seats: fall back to singles until sold out.
					h, err = s.Hold(ctx, ev, inventory.HoldRequest{User: fmt.Sprintf("u%d", i), Best: &inventory.BestRequest{Section: sec, Quantity: 1}})
					if err != nil {
						if a, _ := s.Availability(ctx, ev); a.Available == 0 {
							return
						}
						continue
					}
				}
				if _, err := s.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{PaymentRef: "p"}); err != nil {
					log.Fatal(err)
				}
			}
		})
	}
	wg.Wait()
	if a, _ := s.Availability(ctx, ev); a.Sold != 100_000 {
		log.Fatalf("sold %d seats, want 100000", a.Sold)
	}
	got[1] = measure() - base
	return got
}

func redisUsed(c *redis.Client) int64 {
	info, err := c.Info(context.Background(), "memory").Result()
	if err != nil {
		log.Fatal(err)
	}
	m := regexp.MustCompile(`used_memory:(\d+)`).FindStringSubmatch(info)
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

func heap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }
func mb(n int64) string         { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

func mkdir(parent, name string) string {
	d := filepath.Join(parent, name)
	if err := os.MkdirAll(d, 0o700); err != nil {
		log.Fatal(err)
	}
	return d
}

func randomToken() string {
	var b [24]byte
	crand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func firstLine(cmd *exec.Cmd) string {
	b, _ := cmd.Output()
	line, _, _ := strings.Cut(string(b), "\n")
	return line + "\n"
}
