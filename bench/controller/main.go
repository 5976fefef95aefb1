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

// contender is one way of admitting: the controller, or a fixed rate.
type contender struct {
	name    string
	perMin  int // max_new_per_minute; 0 for the controller
	results []figures
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
	if _, err := os.Stat(*bin); err != nil {
		fatalf("%s: %v (run `make build`)", *bin, err)
	}
	if !(*noShow >= 0 && *noShow < 1) || !(*lateSh >= 0 && *lateSh <= 1) || !(*brownFactor > 0 && *brownFactor <= 1) ||
		*capacity < 1 || *latency <= 0 || *queueLen < 0 || *shoppers < 1 || *pages < 0 || *rounds < 1 || *runFor <= 0 {
		fatalf("bad flags: -noshow in [0,1), -late-share in [0,1], -brownout-factor in (0,1], -queue and -pages at least 0; " +
			"-capacity, -latency, -shoppers, -rounds and -duration positive")
	}
	tmp, err := os.MkdirTemp("", "waitroom-bench-controller-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(tmp)
	atExit(func() { os.RemoveAll(tmp) })
	b := &bench{tmp: tmp, origin: oc, secret: randomHex(32), token: randomHex(24),
		stamp: time.Now().UTC().Format("20060102T150405Z")}
	b.out = io.MultiWriter(os.Stdout, &b.report)
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		fatal(err)
	}

	// The right fixed rate fills the origin: capacity/latency requests a
	// second, pages+1 per shopper, inflated for the no-shows.
	perShopper := float64(*pages + 1)
	right := int(math.Round(60 * float64(*capacity) / latency.Seconds() / perShopper / (1 - *noShow)))
	all := []*contender{{name: "controller"}, {name: "fixed", perMin: right},
		{name: "fixed-high", perMin: 2 * right}, {name: "fixed-low", perMin: max(1, right/2)}}
	var cs []*contender
	for _, c := range all {
		if strings.Contains(","+*only+",", ","+c.name+",") {
			cs = append(cs, c)
		}
	}
	if len(cs) == 0 {
		fatalf("-only %q names no contender (controller, fixed, fixed-high, fixed-low)", *only)
	}
	fmt.Fprintf(b.out, "waitroom controller benchmark, %s, %d CPUs, %s\n", time.Now().UTC().Format(time.RFC3339), runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(b.out, "origin: %d at once × %s (%.0f req/s), %d queued, 503 past; brown-out ×%.2f from %s to %s\n",
		oc.Capacity, oc.Latency, float64(oc.Capacity)/oc.Latency.Seconds(), oc.Queue, oc.BrownFactor, oc.BrownStart, oc.BrownEnd)
	fmt.Fprintf(b.out, "crowd: %d shoppers over %s, %d pages + checkout each, think %s, no-shows %.0f%% (%.0f%% of them back after %s); runs of %s, %d round(s)\n",
		*shoppers, *arrive, *pages, *think, 100**noShow, 100**lateSh, *late, *runFor, *rounds)
	fmt.Fprintf(b.out, "fixed rates (max_new_per_minute): right %d, high %d, low %d\n\n", right, 2*right, max(1, right/2))
	for r := range *rounds {
		for i := range cs { // the order rotated, so that none always goes first
			c := cs[(i+r)%len(cs)]
			c.results = append(c.results, b.run(c, r+1))
		}
	}
	b.table(cs)
	path := filepath.Join(*outDir, "controller-"+b.stamp+".txt")
	if os.WriteFile(path, []byte(b.report.String()), 0o644) == nil {
		fmt.Printf("\nreport written to %s\n", path)
	}
}

// bench is one benchmark run.
type bench struct {
	tmp, secret, token, stamp string
	origin                    originConfig
	out                       io.Writer
	report                    strings.Builder
}

// scenario is what the figures are measured against.
func (b *bench) scenario() scenario {
	return scenario{Capacity: b.origin.Capacity, BaseMS: float64(b.origin.Latency) / float64(time.Millisecond),
		BrownStart: int(b.origin.BrownStart / time.Second), BrownEnd: int(b.origin.BrownEnd / time.Second),
		Settle: int(*settle / time.Second), SettleAfterBrown: int(*settle / time.Second)}
}

// run runs one contender once against a fresh origin and waitroom.
func (b *bench) run(c *contender, round int) figures {
	name := fmt.Sprintf("%s-r%d", c.name, round)
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
		Origin: oaddr, OnSaleAt: t0.UTC().Format(time.RFC3339), MaxNewPerMinute: c.perMin, NoShowGrace: *noShowGrace}
	if c.perMin > 0 {
		// A fixed rate: the controller's limit pinned far above what the
		// crowd could fill, so that only max_new_per_minute binds.
		wc.InitialActive, wc.MinActive = 1_000_000, 1_000_000
	} else {
		wc.InitialActive, wc.MinActive = *initialActive, *minActive
		if wc.MinActive > 0 && wc.InitialActive == 0 {
			wc.InitialActive = max(wc.MinActive, 50)
		}
	}
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
	rows := make([]row, n)
	for i := range rows {
		s := series[i]
		rows[i] = row{T: i, Capacity: s.Capacity, Busy: s.Busy, Done: s.Done, Rejected: s.Rejected, MaxQueue: s.MaxQueue,
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
	f := b.scenario().compute(rows, firstAdmit, lastAdmit, int(cr.done.Load()))
	csvPath := filepath.Join(*outDir, "controller-"+b.stamp+"-"+name+".csv")
	if err := writeCSV(csvPath, rows); err != nil {
		fatal(err)
	}
	svgPath := strings.TrimSuffix(csvPath, ".csv") + ".svg"
	if err := writeSVG(svgPath, "waitroom bench-controller: "+name, rows, b.scenario()); err != nil {
		fatal(err)
	}
	fmt.Fprintf(b.out, "  %-14s joined %d, admitted %d from %.1fs to %.1fs, checkouts %d, no-shows %d (late back %d; waitroom's no-show rate at the end %.2f), sent back to the room %d, 503 retries %d, errors %d\n",
		name, cr.joined.Load(), cr.admittedTotal(), firstAdmit, lastAdmit, cr.done.Load(), cr.noShows.Load(), cr.late.Load(), measuredNoShow,
		cr.bounced.Load(), cr.retries503.Load(), cr.errors.Load())
	fmt.Fprintf(b.out, "  %-14s refresh_seconds told while waiting: %s\n", "", cr.refreshTold())
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

// writeCSV writes the per-second series.
func writeCSV(path string, rows []row) error {
	var w strings.Builder
	w.WriteString("t,capacity,busy,utilisation,done,rejected_503,max_queue,p50_ms,p95_ms,admitted,checkouts,active,limit,serving,passes_issued\n")
	for _, r := range rows {
		fmt.Fprintf(&w, "%d,%.2f,%.2f,%.3f,%d,%d,%d,%.1f,%.1f,%d,%d,%d,%.0f,%.0f,%.0f\n", r.T, r.Capacity, r.Busy, r.util(), r.Done,
			r.Rejected, r.MaxQueue, r.P50, r.P95, r.Admitted, r.Finished, r.Active, r.Limit, r.Serving, r.Passes)
	}
	return os.WriteFile(path, []byte(w.String()), 0o644)
}

func randomHex(n int) string {
	b := make([]byte, n)
	crand.Read(b)
	return hex.EncodeToString(b)
}
