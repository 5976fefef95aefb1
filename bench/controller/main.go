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
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"text/template"
	"time"

	"github.com/waitroom/waitroom/admission/sim"
	"github.com/waitroom/waitroom/admission/sim/figures"
)

var (
	bin      = flag.String("bin", "bin/waitroom", "the waitroom binary")
	outDir   = flag.String("out", "bench/out", "directory for the report and the per-second CSVs")
	rounds   = flag.Int("rounds", 1, "rounds of every contender (medians are reported)")
	full     = flag.Bool("full", false, "the issue's scenario: 2000 shoppers over 20s, brown-out 60s-120s, 180s runs (flags given on the command line still win)")
	only     = flag.String("only", "controller,fixed,fixed-high,fixed-low", "contenders to run")
	shoppers = flag.Int("shoppers", 1200, "shoppers in the crowd")
	arrive   = flag.Duration("arrive", 10*time.Second, "the crowd arrives evenly over this")
	runFor   = flag.Duration("duration", 100*time.Second, "length of each run after the on-sale (completions are counted within it)")
	pages    = flag.Int("pages", 7, "gated pages each shopper loads before the checkout")
	think    = flag.Duration("think", 0, "think time between two pages")
	noShow   = flag.Float64("noshow", 0, "share of shoppers who take their pass and never come (0..1)")
	lateSh   = flag.Float64("late-share", 0, "share of the no-shows who come back after -late")
	late     = flag.Duration("late", 60*time.Second, "when late no-shows come back after their admission")
	pollConc = flag.Int("poll-conns", 256, "status polls and joins in flight at once, at most")

	capacity    = flag.Int("capacity", 20, "origin: requests served at once")
	latency     = flag.Duration("latency", 200*time.Millisecond, "origin: base latency of a request")
	queueLen    = flag.Int("queue", 60, "origin: requests waiting beyond capacity; 503 past it")
	brownStart  = flag.Duration("brownout-start", 40*time.Second, "origin: when its capacity drops, after the on-sale")
	brownEnd    = flag.Duration("brownout-end", 65*time.Second, "origin: when it is restored (equal to the start: no brown-out)")
	brownFactor = flag.Float64("brownout-factor", 0.5, "origin: capacity during the brown-out, as a share of the full")
	settle      = flag.Duration("settle", 20*time.Second, "seconds after the first admission (and after the restore) not counted as settled")

	initialActive = flag.Int("initial-active", 0, "controller contender: events[].controller.initial_active (0: default)")
	minActive     = flag.Int("min-active", 0, "controller contender: events[].controller.min_active (0: default)")
	noShowGrace   = flag.Duration("no-show-grace", 0, "events[].no_show_grace (0: default)")

	simulate = flag.Bool("sim", false, "run the same scenario in the simulator (admission/sim) instead of over real HTTP: seconds instead of minutes")

	serveOrigin = flag.String("serve-origin", "", "internal: run as the origin on this address")
	originT0    = flag.Int64("origin-t0", 0, "internal: the on-sale, Unix nanoseconds")
)

const eventID = "bench"

//go:embed waitroom.yaml.tmpl
var configText string

var configTmpl = template.Must(template.New("waitroom.yaml").Parse(configText))

// wrConfig is what varies between the waitroom processes.
type wrConfig struct {
	Name, Listen, Admin, DataDir, Origin, OnSaleAt string
	MaxNewPerMinute, InitialActive, MinActive      int
	NoShowGrace                                    time.Duration
}

func main() {
	flag.Parse()
	log.SetFlags(0)
	if *full {
		// The scenario, but for what the command line sets.
		set := map[string]bool{}
		flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for name, v := range map[string]string{"shoppers": "2000", "arrive": "20s", "duration": "180s",
			"brownout-start": "60s", "brownout-end": "120s"} {
			if !set[name] {
				flag.Set(name, v)
			}
		}
	}
	oc := originConfig{Capacity: *capacity, Queue: *queueLen, Latency: *latency,
		BrownStart: *brownStart, BrownEnd: *brownEnd, BrownFactor: *brownFactor}
	if *serveOrigin != "" {
		oc.T0 = time.Unix(0, *originT0)
		runOrigin(*serveOrigin, oc)
		return
	}
	stopOnSignal()
	cfg := benchConfig()
	if err := cfg.Validate(); err != nil || *rounds < 1 {
		fatalf("bad flags: -noshow in [0,1), -late-share in [0,1], -brownout-factor in (0,1], -queue, -pages, -think, -arrive and -late at least 0; " +
			"-capacity, -latency, -shoppers, -rounds and -duration positive")
	}
	if _, err := os.Stat(*bin); err != nil && !*simulate {
		fatalf("%s: %v (run `make build`)", *bin, err)
	}
	tmp, err := os.MkdirTemp("", "waitroom-bench-controller-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	atExit(func() { os.RemoveAll(tmp) })
	b := &bench{tmp: tmp, origin: oc, cfg: cfg, secret: randomHex(32), token: randomHex(24),
		stamp: time.Now().UTC().Format("20060102T150405Z")}
	if *simulate {
		b.stamp += "-sim"
	}
	b.out = io.MultiWriter(os.Stdout, &b.report)
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		fatal(err)
	}

	var cs []*figures.Contender
	for _, name := range sim.Contenders {
		if strings.Contains(","+*only+",", ","+name+",") {
			c, _ := cfg.WithContender(name)
			cs = append(cs, &figures.Contender{Name: name, PerMin: c.MaxNewPerMinute})
		}
	}
	if len(cs) == 0 {
		fatalf("-only %q names no contender (%s)", *only, strings.Join(sim.Contenders, ", "))
	}
	kind := "real HTTP on 127.0.0.1"
	if *simulate {
		kind = "simulated (admission/sim: the real engine on a fake clock, model of the real run)"
	}
	fmt.Fprintf(b.out, "waitroom controller benchmark, %s, %d CPUs, %s; %s\n", time.Now().UTC().Format(time.RFC3339), runtime.NumCPU(), runtime.Version(), kind)
	fmt.Fprintf(b.out, "origin: %d at once × %s (%.0f req/s), %d queued, 503 past; brown-out ×%.2f from %s to %s\n",
		oc.Capacity, oc.Latency, float64(oc.Capacity)/oc.Latency.Seconds(), oc.Queue, oc.BrownFactor, oc.BrownStart, oc.BrownEnd)
	fmt.Fprintf(b.out, "crowd: %d shoppers over %s, %d pages + checkout each, think %s, no-shows %.0f%% (%.0f%% of them back after %s); runs of %s, %d round(s)\n",
		*shoppers, *arrive, *pages, *think, 100**noShow, 100**lateSh, *late, *runFor, *rounds)
	right := cfg.RightRate()
	fmt.Fprintf(b.out, "fixed rates (max_new_per_minute): right %d, high %d, low %d\n\n", right, 2*right, max(1, right/2))
	for r := range *rounds {
		for i := range cs { // the order rotated, so that none always goes first
			c := cs[(i+r)%len(cs)]
			run := b.run
			if *simulate {
				run = b.runSim
			}
			c.Results = append(c.Results, run(c, r+1))
		}
	}
	figures.WriteTable(b.out, cs, figures.TableOptions{Rounds: *rounds, NoShow: *noShow > 0, Settle: *settle})
	path := filepath.Join(*outDir, "controller-"+b.stamp+".txt")
	if os.WriteFile(path, []byte(b.report.String()), 0o644) == nil {
		fmt.Printf("\nreport written to %s\n", path)
	}
}

// benchConfig is the scenario the flags describe, for the real run and
// the simulated one alike.
func benchConfig() sim.BenchConfig {
	return sim.BenchConfig{Shoppers: *shoppers, Arrive: *arrive, Pages: *pages, Think: *think, NoShow: *noShow,
		LateShare: *lateSh, Late: *late, Duration: *runFor, Capacity: *capacity, Latency: *latency, Queue: *queueLen,
		BrownStart: *brownStart, BrownEnd: *brownEnd, BrownFactor: *brownFactor, InitialActive: *initialActive,
		MinActive: *minActive, NoShowGrace: *noShowGrace, Settle: *settle, Model: sim.MeasuredModel}
}

// bench is one benchmark run.
type bench struct {
	tmp, secret, token, stamp string
	origin                    originConfig
	cfg                       sim.BenchConfig
	out                       io.Writer
	report                    strings.Builder
}

// run runs one contender once against a fresh origin and waitroom.
func (b *bench) run(c *figures.Contender, round int) figures.Figures {
	name := fmt.Sprintf("%s-r%d", c.Name, round)
	cc, err := b.cfg.WithContender(c.Name)
	if err != nil {
		fatal(err)
	}
	t0 := time.Now().Add(5 * time.Second).Truncate(time.Second).Add(time.Second)
	exe, err := os.Executable()
	if err != nil {
		fatal(err)
	}
	oc := b.origin
	oaddr := freeAddr()
	org := start(b.tmp, name+"-origin", oaddr, "http://"+oaddr+originHealthPath, nil, exe,
		"-serve-origin", oaddr, "-origin-t0", strconv.FormatInt(t0.UnixNano(), 10),
		"-capacity", strconv.Itoa(oc.Capacity), "-latency", oc.Latency.String(), "-queue", strconv.Itoa(oc.Queue),
		"-brownout-start", oc.BrownStart.String(), "-brownout-end", oc.BrownEnd.String(),
		"-brownout-factor", strconv.FormatFloat(oc.BrownFactor, 'g', -1, 64))
	defer org.stop()

	wc := wrConfig{Name: name, Listen: freeAddr(), Admin: freeAddr(), DataDir: filepath.Join(b.tmp, name+"-data"),
		Origin: oaddr, OnSaleAt: t0.UTC().Format(time.RFC3339), NoShowGrace: cc.NoShowGrace,
		// A fixed rate pins the controller's limit far above what the
		// crowd could fill, so that only max_new_per_minute binds.
		MaxNewPerMinute: cc.MaxNewPerMinute, InitialActive: cc.InitialActive, MinActive: cc.MinActive}
	var cfg bytes.Buffer
	if err := configTmpl.Execute(&cfg, wc); err != nil {
		fatal(err)
	}
	cfgPath := filepath.Join(b.tmp, name+".yaml")
	if err := os.WriteFile(cfgPath, cfg.Bytes(), 0o600); err != nil {
		fatal(err)
	}
	wr := start(b.tmp, name+"-waitroom", wc.Listen, "http://"+wc.Admin+"/readyz",
		[]string{"WAITROOM_BENCH_SIGNING_SECRET=" + b.secret, "WAITROOM_BENCH_ADMIN_TOKEN=" + b.token},
		*bin, "serve", "-c", cfgPath)
	defer wr.stop()
	if time.Now().After(t0) {
		fatalf("%s: the servers took too long to start (past the on-sale)", name)
	}

	cr := newCrowd(crowdConfig{Base: "http://" + wc.Listen, T0: t0, Shoppers: *shoppers, Arrive: *arrive,
		Pages: *pages, Think: *think, NoShow: *noShow, LateShare: *lateSh, Late: *late, PollConns: *pollConc})
	ctx, cancel := context.WithDeadline(context.Background(), t0.Add(*runFor))
	defer cancel()
	samples := b.sample(ctx, "http://"+wc.Admin+"/metrics", t0, cr)
	cr.run(ctx)
	<-ctx.Done()
	cancel()
	sampled := <-samples
	decisions := b.decisions("http://" + wc.Admin)

	code, body, err := httpGet("http://" + oaddr + originSeriesPath)
	if err != nil || code != 200 {
		org.fatalf("GET %s: %d %v", originSeriesPath, code, err)
	}
	var series []originRow
	if err := json.Unmarshal(body, &series); err != nil {
		org.fatalf("series: %v", err)
	}
	n := min(len(series), int(*runFor/time.Second))
	rows := make([]figures.Row, n)
	for i := range rows {
		s := series[i]
		rows[i] = figures.Row{T: i, Capacity: s.Capacity, Busy: s.Busy, Done: s.Done, Rejected: s.Rejected, MaxQueue: s.MaxQueue,
			P50: s.P50, P95: s.P95, Limit: -1, Serving: -1, Passes: -1}
		if i < len(sampled) {
			rows[i].Active, rows[i].Limit = sampled[i].active, sampled[i].limit
			rows[i].Serving, rows[i].Passes = sampled[i].serving, sampled[i].passes
		}
	}
	cr.mu.Lock()
	for i, v := range cr.admitted {
		if i < n {
			rows[i].Admitted = v
		}
	}
	for i, v := range cr.finished {
		if i < n {
			rows[i].Finished = v
		}
	}
	firstAdmit, lastAdmit := math.NaN(), math.NaN()
	if !cr.first.IsZero() {
		firstAdmit, lastAdmit = cr.first.Sub(t0).Seconds(), cr.last.Sub(t0).Seconds()
	}
	cr.mu.Unlock()
	measuredNoShow := -1.0
	if len(sampled) > 0 {
		measuredNoShow = sampled[len(sampled)-1].noShow
	}
	f := cc.Scenario().Compute(rows, firstAdmit, lastAdmit, int(cr.done.Load()))
	csvPath, svgPath := b.write(name, rows)
	fmt.Fprintf(b.out, "  %-14s joined %d, admitted %d from %.1fs to %.1fs, checkouts %d, no-shows %d (late back %d; waitroom's no-show rate at the end %.2f), sent back to the room %d, 503 retries %d, errors %d\n",
		name, cr.joined.Load(), cr.admittedTotal(), firstAdmit, lastAdmit, cr.done.Load(), cr.noShows.Load(), cr.late.Load(), measuredNoShow,
		cr.bounced.Load(), cr.retries503.Load(), cr.errors.Load())
	fmt.Fprintf(b.out, "  %-14s refresh_seconds told while waiting: %s\n", "", cr.refreshTold())
	fmt.Fprintf(b.out, "  %-14s client round trips: %s\n", "", cr.roundTrips())
	if e := cr.firstErr.Load(); e != nil {
		fmt.Fprintf(b.out, "  %-14s first error: %s\n", "", *e)
	}
	decPath := strings.TrimSuffix(csvPath, ".csv") + "-decisions.json"
	if decisions != nil {
		if err := os.WriteFile(decPath, decisions, 0o644); err != nil {
			fatal(err)
		}
	}
	fmt.Fprintf(b.out, "  %-14s %s, %s, %s\n", "", csvPath, filepath.Base(svgPath), filepath.Base(decPath))
	return f
}

// decisions reads the controller's decisions of the run (the last 600
// ticks) from the operator API; nil when it cannot.
func (b *bench) decisions(admin string) []byte {
	req, _ := http.NewRequest("GET", admin+"/admin/v1/events/"+eventID+"/controller?limit=600", nil)
	req.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := httpClient.Do(req)
	if err != nil {
		log.Printf("decisions: %v", err)
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		log.Printf("decisions: %d %v", resp.StatusCode, err)
		return nil
	}
	return body
}

// sampled is the waitroom's and the crowd's state at one second.
type sampled struct {
	active  int
	limit   float64
	serving float64 // the public lane's serving counter: admissions decided
	passes  float64 // passes issued so far: admissions claimed
	noShow  float64 // the no-show rate the waitroom measures
}

// sample reads the controller's limit from /metrics and the crowd's
// active shoppers once a second from t0 until ctx ends, then sends them.
func (b *bench) sample(ctx context.Context, url string, t0 time.Time, cr *crowd) <-chan []sampled {
	ch := make(chan []sampled, 1)
	var once sync.Once
	go func() {
		var out []sampled
		defer once.Do(func() { ch <- out })
		for i := 0; ; i++ {
			// Mid-second, so that each sample belongs to its second.
			if !sleepUntil(ctx, t0.Add(time.Duration(i)*time.Second+500*time.Millisecond)) {
				return
			}
			s := sampled{active: int(cr.active.Load()), limit: -1, serving: -1, passes: -1, noShow: -1}
			req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
			req.Header.Set("Authorization", "Bearer "+b.token)
			if resp, err := httpClient.Do(req); err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				s.limit = metricValue(body, "waitroom_admission_limit", `{event="bench"}`)
				s.serving = metricValue(body, "waitroom_queue_serving", `{event="bench",lane="public"}`)
				s.passes = metricValue(body, "waitroom_passes_issued_total", `{event="bench"}`)
				s.noShow = metricValue(body, "waitroom_no_show_rate", `{event="bench"}`)
			}
			out = append(out, s)
		}
	}()
	return ch
}

// write writes a run's per-second CSV and its plot, and returns their
// paths.
func (b *bench) write(name string, rows []figures.Row) (csvPath, svgPath string) {
	csvPath = filepath.Join(*outDir, "controller-"+b.stamp+"-"+name+".csv")
	var w bytes.Buffer
	if err := figures.WriteCSV(&w, rows); err != nil {
		fatal(err)
	}
	if err := os.WriteFile(csvPath, w.Bytes(), 0o644); err != nil {
		fatal(err)
	}
	svgPath = strings.TrimSuffix(csvPath, ".csv") + ".svg"
	if err := writeSVG(svgPath, "waitroom bench-controller: "+name, rows, b.cfg.Scenario()); err != nil {
		fatal(err)
	}
	return csvPath, svgPath
}

// runSim runs one contender once in the simulator (-sim): the same
// scenario, in simulated time, through the real admission engine; round
// is the seed.
func (b *bench) runSim(c *figures.Contender, round int) figures.Figures {
	name := fmt.Sprintf("%s-r%d", c.Name, round)
	cc, err := b.cfg.WithContender(c.Name)
	if err != nil {
		fatal(err)
	}
	cc.Seed = uint64(round)
	r, err := sim.RunBench(cc)
	if err != nil {
		fatalf("%s: %v", name, err)
	}
	csvPath, svgPath := b.write(name, r.Rows)
	fmt.Fprintf(b.out, "  %-14s joined %d, admitted %d from %.1fs to %.1fs, checkouts %d, no-shows %d (late back %d; waitroom's no-show rate at the end %.2f), 503 retries %d, status polls %d, errors %d; simulated in %s\n",
		name, r.Joined, r.Admitted, r.FirstAdmit, r.LastAdmit, r.Completions, r.NoShows, r.LateBack, r.NoShowRate,
		r.Retries503, r.Polls, r.Errors, r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(b.out, "  %-14s %s, %s\n", "", csvPath, filepath.Base(svgPath))
	return r.Figures()
}

func randomHex(n int) string {
	b := make([]byte, n)
	crand.Read(b)
	return hex.EncodeToString(b)
}
