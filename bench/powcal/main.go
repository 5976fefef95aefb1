package main

import (
	"context"
	"crypto/rand"
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

	"github.com/waitroom/waitroom/internal/testkit/browsertest"
	"github.com/waitroom/waitroom/static"
)

var (
	puzzles  = flag.Int("k", 16, "sub-puzzles per challenge (K)")
	runs     = flag.Int("n", 7, "solves per difficulty")
	bitRange = flag.String("bits", "12-20", "difficulties to time, as lo-hi leading zero bits")
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
	pages, err := static.New(nil)
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

// serve serves the solver's scripts as the proxy does (Prefix/static/)
// and a page that loads pow.js, with the pages' CSP, on a loopback port.
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
		w.Header().Set("Content-Security-Policy", pages.CSP())
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

// rates are the hash rates measured in the page, hashes per second.
type rates struct {
	MainThread float64 `json:"main"`
	OneWorker  float64 `json:"one"`
	AllWorkers float64 `json:"all"`
	Subtle     float64 `json:"subtle"`
	SubtleAll  float64 `json:"subtle_batched"`
}

// rateJS measures the rates for ms milliseconds each. The workers search
// a 64-bit difficulty, which they never meet, and are counted by their
// progress messages after half a second of warming up.
const rateJS = `(async function (workerURL, workers, ms) {
	var seed = "00112233445566778899aabbccddeeff";
	function sleep(d) { return new Promise(function (r) { setTimeout(r, d); }); }
	async function inWorkers(n) {
		var ws = [], total = 0, counting = false;
		for (var i = 0; i < n; i++) {
			var w = new Worker(workerURL);
			w.onmessage = function (ev) { if (counting && ev.data.type === "progress") total += ev.data.hashes; };
			w.postMessage({seed: seed, bits: 64, puzzles: [i], start: 0});
			ws.push(w);
		}
		await sleep(500);
		counting = true;
		var t0 = performance.now();
		await sleep(ms);
		var dt = performance.now() - t0;
		ws.forEach(function (w) { w.terminate(); });
		return total / dt * 1000;
	}
	var r = {};
	await new Promise(function (resolve, reject) {
		var s = document.createElement("script");
		s.src = workerURL;
		s.onload = resolve;
		s.onerror = reject;
		document.head.appendChild(s);
	});
	var p = waitroomPow.puzzle(seed, 0, 64, 0);
	p.run(1 << 18);
	var n = 0, t0 = performance.now(), end = t0 + ms;
	while (performance.now() < end) { p.run(65536); n += 65536; }
	r.main = n / (performance.now() - t0) * 1000;
	r.one = await inWorkers(1);
	r.all = await inWorkers(workers);
	var msg = new Uint8Array(28), dv = new DataView(msg.buffer);
	crypto.getRandomValues(msg.subarray(0, 16));
	n = 0; t0 = performance.now(); end = t0 + ms;
	while (performance.now() < end) {
		dv.setUint32(24, n);
		await crypto.subtle.digest("SHA-256", msg);
		n++;
	}
	r.subtle = n / (performance.now() - t0) * 1000;
	n = 0; t0 = performance.now(); end = t0 + ms;
	while (performance.now() < end) {
		var ps = [];
		for (var j = 0; j < 256; j++) {
			dv.setUint32(24, n + j);
			ps.push(crypto.subtle.digest("SHA-256", msg.slice()));
		}
		await Promise.all(ps);
		n += 256;
	}
	r.subtle_batched = n / (performance.now() - t0) * 1000;
	return r;
})`

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
		runtime.NumCPU(), cores, runtime.GOOS, runtime.GOARCH, loadAvg())
	fmt.Fprintf(out, "browser: %s\n", chromiumVersion(ua))
	fmt.Fprintf(out, "solver: %s, %s; %d workers per solve; K = %d sub-puzzles; %d solves per difficulty\n\n",
		func() string { s, _ := pages.PowAssets(); return s }(), worker, n, *puzzles, *runs)

	r, err := eval[rates](ctx, 5*time.Minute, rateJS+"("+jsonString(workerURL)+", "+strconv.Itoa(n)+", "+strconv.FormatInt(rateTime.Milliseconds(), 10)+")")
	if err != nil {
		return fmt.Errorf("measuring hash rates: %w", err)
	}
	fmt.Fprintf(out, "Hash rates on the 28-byte block (%s each):\n\n", *rateTime)
	fmt.Fprintf(out, "| SHA-256 | hashes/s | vs WebCrypto awaited |\n|---|---:|---:|\n")
	for _, row := range []struct {
		name string
		v    float64
	}{
		{"pure JS, main thread", r.MainThread},
		{"pure JS, 1 worker", r.OneWorker},
		{fmt.Sprintf("pure JS, %d workers", n), r.AllWorkers},
		{"WebCrypto digest, awaited one by one", r.Subtle},
		{"WebCrypto digest, 256 promises at a time", r.SubtleAll},
	} {
		fmt.Fprintf(out, "| %s | %s | %.1f× |\n", row.name, rate(row.v), row.v/r.Subtle)
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

	fmt.Fprintf(out, "Solve times, K = %d, %d solves each:\n\n", *puzzles, *runs)
	fmt.Fprintf(out, "| bits | expected hashes | median solve | p10 | p90 | hashes/s |\n|---:|---:|---:|---:|---:|---:|\n")
	best, bestDiff := -1, math.Inf(1)
	for b := lo; b <= hi; b++ {
		var times, hps []float64
		for i := 0; i < *runs; i++ {
			s, err := solveOnce(ctx, workerURL, b, *puzzles)
			if err != nil {
				return fmt.Errorf("bits %d: %w", b, err)
			}
			times = append(times, s.Ms)
			hps = append(hps, s.Hashes/s.Ms*1000)
		}
		slices.Sort(times)
		slices.Sort(hps)
		med := quantile(times, 0.5)
		fmt.Fprintf(out, "| %d | %s | %s | %s | %s | %s |\n", b, count(float64(*puzzles)*math.Exp2(float64(b))),
			ms(med), ms(quantile(times, 0.1)), ms(quantile(times, 0.9)), rate(quantile(hps, 0.5)))
		if d := math.Abs(med - float64(target.Milliseconds())); d < bestDiff {
			best, bestDiff = b, d
		}
	}
	fmt.Fprintf(out, "\nRecommended default light difficulty on this machine: bits = %d with K = %d (median closest to %s).\n", best, *puzzles, *target)
	fmt.Fprintf(out, "load average after: %s\n", loadAvg())
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

func rate(v float64) string {
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

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
