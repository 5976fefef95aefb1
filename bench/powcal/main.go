package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/waitroom/waitroom/bench/internal/procstat"
	"github.com/waitroom/waitroom/internal/testkit/browsertest"
	"github.com/waitroom/waitroom/static"
)

var (
	puzzles  = flag.Int("k", 16, "sub-puzzles per challenge (K)")
	runs     = flag.Int("n", 7, "solves per difficulty")
	bitRange = flag.String("bits", "16-22", "difficulties to time, as lo-hi leading zero bits")
	threads  = flag.Int("threads", 0, "workers per solve; 0: waitroomSolve's default, min(hardwareConcurrency, 4, K)")
	rateTime = flag.Duration("rate-time", 2*time.Second, "length of each hash-rate measurement")
	target   = flag.Duration("target", time.Second, "median solve time the recommended light difficulty is closest to")
	outDir   = flag.String("out", "bench/out", "directory for the report (empty: none)")
)

func main() {
	flag.Parse()
	log.SetFlags(0)
	lo, hi, err := parseRange(*bitRange)
	if err != nil {
		log.Fatalf("powcal: -bits: %v", err)
	}
	if *puzzles < 1 || *runs < 1 || *threads < 0 {
		log.Fatal("powcal: -k and -n must be at least 1, -threads at least 0")
	}
	if err := browsertest.Check(); err != nil {
		log.Fatal(err)
	}
	pages, err := static.New([]static.PageConfig{{Event: event}})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := serve(pages)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	var report strings.Builder
	out := io.MultiWriter(os.Stdout, &report)
	if err := calibrate(out, pages, "http://"+srv.Addr, lo, hi); err != nil {
		log.Fatalf("powcal: %v", err)
	}
	if *outDir != "" {
		path := filepath.Join(*outDir, "powcal-"+time.Now().UTC().Format("20060102T150405Z")+".txt")
		if err := os.MkdirAll(*outDir, 0o755); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(report.String()), 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("\nreport: %s\n", path)
	}
}

func parseRange(s string) (lo, hi int, err error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		b = a
	}
	if lo, err = strconv.Atoi(a); err != nil {
		return 0, 0, err
	}
	if hi, err = strconv.Atoi(b); err != nil {
		return 0, 0, err
	}
	if lo < 0 || hi > 40 || lo > hi {
		return 0, 0, errors.New("want lo-hi with 0 <= lo <= hi <= 40")
	}
	return lo, hi, nil
}

// event is the page's event: the page is served with its room page's
// Content-Security-Policy, as the proxy serves a room page.
const event = "powcal"

// serve serves the solver's scripts and modules as the proxy does
// (Prefix/static/) and a page that loads pow.js, with the room page's
// CSP, on a loopback port.
func serve(pages *static.Pages) (*http.Server, error) {
	solver, _ := pages.PowAssets()
	page := `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>powcal</title>` +
		`<script src="/_wr/static/` + solver + `"></script></head><body><p>powcal</p></body></html>`
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_wr/static/{name}", func(w http.ResponseWriter, r *http.Request) {
		body, ct, ok := pages.Asset([]byte(r.PathValue("name")))
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		w.Write(body)
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", static.ContentTypeHTML)
		w.Header().Set("Content-Security-Policy", pages.RoomCSP(event))
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, page)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: mux, Addr: ln.Addr().String(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return srv, nil
}

// startBrowser launches Chromium headless with browsertest's switches and
// a fresh profile; stop ends it and removes the profile.
func startBrowser() (ctx context.Context, stop func(), err error) {
	dir, err := os.MkdirTemp("", "powcal-chromium-")
	if err != nil {
		return nil, nil, err
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(browsertest.ExecPath), chromedp.UserDataDir(dir)}
	for _, f := range browsertest.Flags {
		opts = append(opts, chromedp.Flag(strings.TrimPrefix(f, "--"), true))
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	stop = func() {
		cancel()
		cancelAlloc()
		os.RemoveAll(dir)
	}
	if err := chromedp.Do(ctx); err != nil {
		stop()
		return nil, nil, fmt.Errorf("starting %s: %w", browsertest.ExecPath, err)
	}
	return ctx, stop, nil
}

// eval evaluates expr in the page, awaiting a promise, within limit.
func eval[T any](ctx context.Context, limit time.Duration, expr string) (T, error) {
	tctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	return chromedp.Run(tctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// rateJS defines window.powcal, the page's side of the hash-rate
// measurements: start(kind, engine, n) starts hashing and resolves after
// half a second of warming up, from when it counts; stop() ends it and
// resolves to {hashes, ms}, the hashes counted and the ms since counting
// began. kind is "workers" (n Web Workers, each searching a 64-bit
// difficulty it never meets with engine, counted by their progress
// messages), "main" (the page's main thread, in slices of 30 ms between
// setTimeout calls, with engine), "subtle" (WebCrypto's digest of the
// 28-byte block, awaited one by one) or "subtle256" (256 promises at a
// time).
const rateJS = `(function (workerURL) {
	var seed = "00112233445566778899aabbccddeeff";
	var run = null;
	function sleep(d) { return new Promise(function (r) { setTimeout(r, d); }); }
	function loadScript() {
		if (window.waitroomPow) return Promise.resolve();
		return new Promise(function (resolve, reject) {
			var s = document.createElement("script");
			s.src = workerURL;
			s.onload = resolve;
			s.onerror = reject;
			document.head.appendChild(s);
		});
	}
	function workers(engine, n) {
		var ws = [];
		for (var i = 0; i < n; i++) {
			var w = new Worker(workerURL);
			w.onmessage = function (ev) {
				if (ev.data.type === "progress" && r.counting) r.hashes += ev.data.hashes;
				if (ev.data.engine !== engine) r.error = "asked for " + engine + ", got " + ev.data.engine;
			};
			w.postMessage({seed: seed, bits: 64, puzzles: [i], start: 0, engine: engine});
			ws.push(w);
		}
		var r = {hashes: 0, counting: false, stop: function () { ws.forEach(function (w) { w.terminate(); }); }};
		return r;
	}
	function main(engine) {
		var r = {hashes: 0, counting: false, stopped: false, stop: function () { r.stopped = true; }};
		return waitroomPow.load(engine).then(function (got) {
			if (got !== engine) throw new Error("asked for " + engine + ", got " + got);
			var p = waitroomPow.puzzle(seed, 0, 64, 0, engine);
			(function slice() {
				if (r.stopped) return;
				var end = performance.now() + 30, n = 0;
				while (performance.now() < end) { p.run(16384); n += 16384; }
				if (r.counting) r.hashes += n;
				setTimeout(slice, 0);
			})();
			return r;
		});
	}
	function subtle(batch) {
		var r = {hashes: 0, counting: false, stopped: false, stop: function () { r.stopped = true; }};
		var msg = new Uint8Array(28), dv = new DataView(msg.buffer), n = 0;
		crypto.getRandomValues(msg.subarray(0, 16));
		// The digests' promises may settle without a task in between:
		// the loop yields every 30 ms for timers and stop().
		(async function () {
			var yieldAt = performance.now() + 30;
			while (!r.stopped) {
				if (performance.now() > yieldAt) {
					await sleep(0);
					yieldAt = performance.now() + 30;
				}
				var ps = [];
				for (var j = 0; j < batch; j++) {
					dv.setUint32(24, n++);
					ps.push(crypto.subtle.digest("SHA-256", msg.slice()));
				}
				await Promise.all(ps);
				if (r.counting) r.hashes += batch;
			}
		})();
		return r;
	}
	window.powcal = {
		start: async function (kind, engine, n) {
			await loadScript();
			if (kind === "workers") run = workers(engine, n);
			else if (kind === "main") run = await main(engine);
			else run = subtle(kind === "subtle" ? 1 : 256);
			await sleep(500);
			run.counting = true;
			run.t0 = performance.now();
			return true;
		},
		stop: function () {
			var ms = performance.now() - run.t0;
			run.stop();
			return {hashes: run.hashes, ms: ms, error: run.error || ""};
		}
	};
	return true;
})`

// rate is one hash-rate measurement: hashes per wall-clock second and
// per CPU-second of the processes that did them.
type rate struct {
	name          string
	wall, perCPUs float64
	// cpus is the CPU-seconds per wall-clock second (how many cores
	// were busy, on average).
	cpus float64
}

// stopped is what powcal.stop() returns.
type stopped struct {
	Hashes float64 `json:"hashes"`
	Ms     float64 `json:"ms"`
	Error  string  `json:"error"`
}

// measureInPage runs one window.powcal measurement of kind over
// -rate-time and the CPU time of every process of the browser (see
// chromiumCPU) over the same wall-clock time.
func measureInPage(ctx context.Context, name, kind, engine string, n int) (rate, error) {
	pid := browserPID(ctx)
	if _, err := eval[bool](ctx, time.Minute, "powcal.start("+jsonString(kind)+", "+jsonString(engine)+", "+strconv.Itoa(n)+")"); err != nil {
		return rate{}, fmt.Errorf("%s: %w", name, err)
	}
	cpu0, t0 := chromiumCPU(pid), time.Now()
	time.Sleep(*rateTime)
	cpu1, wall := chromiumCPU(pid), time.Since(t0)
	got, err := eval[stopped](ctx, time.Minute, "powcal.stop()")
	if err == nil && got.Error != "" {
		err = errors.New(got.Error)
	}
	if err != nil {
		return rate{}, fmt.Errorf("%s: %w", name, err)
	}
	r := rate{name: name, wall: got.Hashes / got.Ms * 1000, cpus: (cpu1 - cpu0) / wall.Seconds()}
	r.perCPUs = r.wall / r.cpus
	return r, nil
}

// measureGo runs the plain Go loop: crypto/sha256.Sum256 of the same
// 28-byte block, the nonce in its last eight bytes, in one goroutine, for
// -rate-time; its CPU time is this process's (/proc/<pid>/stat, as
// chromiumCPU counts the browser's), idle but for the loop meanwhile.
func measureGo() rate {
	var msg [28]byte
	rand.Read(msg[:16])
	var sink byte
	hash := func(n uint64) {
		binary.BigEndian.PutUint64(msg[20:], n)
		sum := sha256.Sum256(msg[:])
		sink ^= sum[0]
	}
	for n := range uint64(1 << 20) { // warm up
		hash(n)
	}
	cpu0, t0 := ownCPU(), time.Now()
	var n uint64
	for time.Since(t0) < *rateTime {
		for range 1 << 16 {
			hash(n)
			n++
		}
	}
	cpu1, wall := ownCPU(), time.Since(t0)
	_ = sink
	r := rate{name: "Go crypto/sha256.Sum256, 1 goroutine", wall: float64(n) / wall.Seconds(), cpus: (cpu1 - cpu0) / wall.Seconds()}
	r.perCPUs = float64(n) / (cpu1 - cpu0)
	return r
}

// chromiumCPU returns the CPU-seconds (user and system) used so far by
// the browser process pid and all its descendants (renderers, the GPU
// and utility processes, zygotes): the whole cost of hashing in the
// browser, the worker's thread, the page's main thread that receives its
// messages, and everything else Chromium does meanwhile.
func chromiumCPU(pid int) float64 { return procstat.TreeCPU(pid).Seconds() }

// ownCPU returns the CPU-seconds this process has used so far.
func ownCPU() float64 {
	s, _ := procstat.Read(os.Getpid())
	return (time.Duration(s.UTime+s.STime) * procstat.Tick).Seconds()
}

// browserPID is the pid of the browser process chromedp started.
func browserPID(ctx context.Context) int {
	if c := chromedp.FromContext(ctx); c != nil && c.Browser != nil && c.Browser.Process() != nil {
		return c.Browser.Process().Pid
	}
	return -1
}

// solveJS times one waitroomSolve call: {ms, hashes} or {error}.
const solveJS = `(function (challenge, options) {
	var hashes = 0;
	var t0 = performance.now();
	return waitroomSolve(challenge, function (f, info) { hashes = info.hashes; }, options).then(function () {
		return {ms: performance.now() - t0, hashes: hashes};
	}, function (err) {
		return {error: String(err.message)};
	});
})`

type solveResult struct {
	Ms     float64 `json:"ms"`
	Hashes float64 `json:"hashes"`
	Error  string  `json:"error"`
}

func solveOnce(ctx context.Context, workerURL string, bits, k int) (solveResult, error) {
	seed := make([]byte, 16)
	rand.Read(seed)
	c := map[string]any{
		"token": "calibration", "seed": hex.EncodeToString(seed), "bits": bits, "puzzles": k,
		"expires_at": time.Now().Add(10 * time.Minute).UTC().Format(time.RFC3339),
	}
	opts := map[string]any{"worker": workerURL}
	if *threads > 0 {
		opts["threads"] = *threads
	}
	r, err := eval[solveResult](ctx, 10*time.Minute, solveJS+"("+jsonString(c)+", "+jsonString(opts)+")")
	if err == nil && r.Error != "" {
		err = errors.New(r.Error)
	}
	return r, err
}

func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func calibrate(out io.Writer, pages *static.Pages, base string, lo, hi int) error {
	ctx, stop, err := startBrowser()
	if err != nil {
		return err
	}
	defer stop()
	if _, err := eval[bool](ctx, 30*time.Second, "true"); err != nil {
		return err
	}
	tctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	_, err = chromedp.Run(tctx, chromedp.Navigate(base+"/"))
	cancel()
	if err != nil {
		return err
	}
	if ok, err := eval[bool](ctx, 10*time.Second, `typeof waitroomSolve === "function"`); err != nil || !ok {
		return fmt.Errorf("pow.js did not load: %v", err)
	}
	_, worker := pages.PowAssets()
	workerURL := "/_wr/static/" + worker
	cores, _ := eval[int](ctx, 10*time.Second, "navigator.hardwareConcurrency")
	ua, _ := eval[string](ctx, 10*time.Second, "navigator.userAgent")
	n := *threads
	if n == 0 {
		n = min(max(cores, 1), 4, *puzzles)
	}

	fmt.Fprintf(out, "waitroom proof-of-work calibration, %s\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(out, "machine: %d CPUs (runtime.NumCPU), navigator.hardwareConcurrency %d, %s/%s, load average %s\n",
		runtime.NumCPU(), cores, runtime.GOOS, runtime.GOARCH, procstat.LoadAvg())
	fmt.Fprintf(out, "browser: %s\n", chromiumVersion(ua))
	fmt.Fprintf(out, "solver: %s, %s; %d workers per solve; K = %d sub-puzzles; %d solves per difficulty\n\n",
		func() string { s, _ := pages.PowAssets(); return s }(), worker, n, *puzzles, *runs)

	if _, err := eval[bool](ctx, 10*time.Second, rateJS+"("+jsonString(workerURL)+")"); err != nil {
		return fmt.Errorf("setting up the rate measurements: %w", err)
	}
	if browserPID(ctx) < 0 {
		return errors.New("no browser process to measure")
	}
	goRate := measureGo()
	rs := []rate{goRate}
	for _, m := range []struct {
		name, kind, engine string
		workers            int
	}{
		{"JavaScript, 1 worker", "workers", "js", 1},
		{"WebAssembly scalar, 1 worker", "workers", "scalar", 1},
		{"WebAssembly SIMD, 1 worker", "workers", "simd", 1},
		{fmt.Sprintf("WebAssembly SIMD, %d workers", n), "workers", "simd", n},
		{"JavaScript, main thread", "main", "js", 0},
		{"WebAssembly SIMD, main thread", "main", "simd", 0},
		{"WebCrypto digest, awaited one by one", "subtle", "", 0},
		{"WebCrypto digest, 256 promises at a time", "subtle256", "", 0},
	} {
		r, err := measureInPage(ctx, m.name, m.kind, m.engine, m.workers)
		if err != nil {
			return fmt.Errorf("measuring hash rates: %w", err)
		}
		rs = append(rs, r)
	}
	fmt.Fprintf(out, "Hash rates on the 28-byte block, %s each; CPU time from /proc/<pid>/stat (utime+stime) of\n", *rateTime)
	fmt.Fprintf(out, "every Chromium process (browser, renderer, GPU, utility) and of powcal's own during the Go loop:\n\n")
	fmt.Fprintf(out, "| SHA-256 | hashes/s | CPUs busy | hashes per CPU-second | vs Go loop |\n|---|---:|---:|---:|---:|\n")
	for _, r := range rs {
		fmt.Fprintf(out, "| %s | %s | %.2f | %s | %.2f× |\n", r.name, rateStr(r.wall), r.cpus, rateStr(r.perCPUs), r.perCPUs/goRate.perCPUs)
	}
	fmt.Fprintf(out, "\nRatio to the plain Go loop, hashes per CPU-second, one worker (target >= 0.5x):\n")
	for _, r := range rs[1:4] {
		fmt.Fprintf(out, "  ratio %-30s %.2fx  (%s vs Go %s per CPU-second)\n", r.name+":", r.perCPUs/goRate.perCPUs, rateStr(r.perCPUs), rateStr(goRate.perCPUs))
	}

	// Start-up: the first solve also compiles the worker script.
	var startup []float64
	for i := 0; i < *runs+1; i++ {
		s, err := solveOnce(ctx, workerURL, 0, *puzzles)
		if err != nil {
			return fmt.Errorf("bits 0: %w", err)
		}
		if i > 0 {
			startup = append(startup, s.Ms)
		}
	}
	slices.Sort(startup)
	fmt.Fprintf(out, "\nStart-up of a solve (bits 0, %d workers): median %s, p90 %s\n\n", n, ms(quantile(startup, 0.5)), ms(quantile(startup, 0.9)))

	fmt.Fprintf(out, "Solve times, K = %d, %d solves each; CPU-s: Chromium's CPU-seconds per solve (median), and that over\n", *puzzles, *runs)
	fmt.Fprintf(out, "the %d workers, the solve time with a core per worker and nothing else running:\n\n", n)
	fmt.Fprintf(out, "| bits | expected hashes | median solve | p10 | p90 | hashes/s | CPU-s | CPU-s / %d |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n", n)
	pid := browserPID(ctx)
	best, bestDiff := -1, math.Inf(1)
	bestIdle, bestIdleDiff := -1, math.Inf(1)
	for b := lo; b <= hi; b++ {
		var times, hps, cpus []float64
		for i := 0; i < *runs; i++ {
			cpu0 := chromiumCPU(pid)
			s, err := solveOnce(ctx, workerURL, b, *puzzles)
			if err != nil {
				return fmt.Errorf("bits %d: %w", b, err)
			}
			cpus = append(cpus, chromiumCPU(pid)-cpu0)
			times = append(times, s.Ms)
			hps = append(hps, s.Hashes/s.Ms*1000)
		}
		slices.Sort(times)
		slices.Sort(hps)
		slices.Sort(cpus)
		med, cpu := quantile(times, 0.5), quantile(cpus, 0.5)
		idle := cpu / float64(n) * 1000
		fmt.Fprintf(out, "| %d | %s | %s | %s | %s | %s | %.2f | %s |\n", b, count(float64(*puzzles)*math.Exp2(float64(b))),
			ms(med), ms(quantile(times, 0.1)), ms(quantile(times, 0.9)), rateStr(quantile(hps, 0.5)), cpu, ms(idle))
		if d := math.Abs(med - float64(target.Milliseconds())); d < bestDiff {
			best, bestDiff = b, d
		}
		if d := math.Abs(idle - float64(target.Milliseconds())); d < bestIdleDiff {
			bestIdle, bestIdleDiff = b, d
		}
	}
	fmt.Fprintf(out, "\nRecommended default light difficulty on this machine: bits = %d with K = %d (median closest to %s);\n", best, *puzzles, *target)
	fmt.Fprintf(out, "with a core per worker: bits = %d (CPU-seconds per solve over %d workers closest to %s).\n", bestIdle, n, *target)
	fmt.Fprintf(out, "load average after: %s\n", procstat.LoadAvg())
	return nil
}

// quantile of sorted xs, interpolating linearly between neighbours.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(xs)-1)
	i := int(pos)
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[i] + (pos-float64(i))*(xs[i+1]-xs[i])
}

func ms(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2f s", v/1000)
	}
	return fmt.Sprintf("%.0f ms", v)
}

func rateStr(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2f M", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.0f k", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func count(v float64) string {
	switch {
	case v >= 1<<20:
		return fmt.Sprintf("%.1f M", v/(1<<20)) + " (" + strconv.FormatFloat(v, 'f', 0, 64) + ")"
	case v >= 1<<10:
		return fmt.Sprintf("%.0f K", v/(1<<10)) + " (" + strconv.FormatFloat(v, 'f', 0, 64) + ")"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// chromiumVersion picks "HeadlessChrome/x.y.z.w" out of the user agent.
func chromiumVersion(ua string) string {
	for _, f := range strings.Fields(ua) {
		if strings.Contains(f, "Chrome/") {
			return f
		}
	}
	return ua
}
