package main

import (
	"bytes"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/waitroom/waitroom/bench/internal/cleanup"
	"github.com/waitroom/waitroom/bench/internal/procstat"
	"github.com/waitroom/waitroom/internal/testkit/browsertest"
	"github.com/waitroom/waitroom/internal/testkit/freeport"
)

var (
	bin         = flag.String("bin", "bin/waitroom", "the waitroom binary (make build)")
	configPath  = flag.String("config", "configs/single-node.yaml", "the example configuration to run")
	places      = flag.Int("n", 3, "places each strategy tries per round")
	rounds      = flag.Int("rounds", 3, "rounds (medians are reported)")
	only        = flag.String("only", "", "strategies to run, comma-separated (default all; the fan always runs)")
	maxSolve    = flag.Duration("max-solve", 20*time.Second, "the most CPU time a native solve may take; costlier work is priced from the measured hash rate instead of solved")
	pageTimeout = flag.Duration("page-timeout", 60*time.Second, "how long a page may take to join")
	useXvfb     = flag.Bool("xvfb", true, "run the fan's Chromium headful under Xvfb when Xvfb is installed")
	outDir      = flag.String("out", "bench/out", "directory for the report (empty: none)")

	agentMode = flag.Bool("agent", false, "internal: run as a bot's agent (see agent.go)")
	caFlag    = flag.String("ca", "", "internal: the agent's CA file")
	localFlag = flag.String("local", "", "internal: the agent's source address")
	targetArg = flag.String("target", "", "internal: the agent's host:port")
)

// Targets of the issue.
const (
	targetRatio = 100.0
)

type bench struct {
	x          *example
	tmp        string
	certs      *certs
	svc        *services
	wr         *exec.Cmd
	wrLog      string
	target     string // host:port of the waiting room (TLS)
	base       string // https://target
	admin      string // http://host:port
	adminToken string
	rate       float64 // native hashes per CPU-second
	// The page's solver in Chromium of the fan's kind, hashes per
	// CPU-second of the browser's processes: the price of work a browser
	// is not made to wait for (above -max-solve).
	browserRate float64
	browserNote string
	display     string // the fan's X display; "" headless
	fanNote     string
	noChromium  string // why the Chromium strategies are skipped; "" when they run
	out         io.Writer

	// What Chromium sends, captured from a browser of the fan's kind.
	chrome struct {
		get, post [][2]string
		extra     map[string]json.RawMessage // join body fields besides event, return, pow, captcha
		ua        string
	}
}

func main() {
	flag.Parse()
	log.SetFlags(0)
	if *agentMode {
		runAgent(*caFlag, *localFlag, *targetArg)
		return
	}
	cleanup.StopOnSignal()
	if *places < 1 || *rounds < 1 || *rounds > 200 {
		cleanup.Fatalf("bots: -n must be at least 1 and -rounds 1 to 200")
	}
	if _, err := os.Stat(*bin); err != nil {
		cleanup.Fatalf("%s: %v (run `make build`)", *bin, err)
	}
	x, err := readExample(*configPath)
	if err != nil {
		cleanup.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "waitroom-bench-bots-")
	if err != nil {
		cleanup.Fatal(err)
	}
	cleanup.AtExit(func() { os.RemoveAll(tmp) })
	defer os.RemoveAll(tmp)

	var report strings.Builder
	b := &bench{x: x, tmp: tmp, out: io.MultiWriter(os.Stdout, &report)}
	b.setUp()
	defer b.tearDown()
	b.run()

	if *outDir != "" {
		if err := os.MkdirAll(*outDir, 0o755); err == nil {
			path := filepath.Join(*outDir, "bots-"+time.Now().UTC().Format("20060102T150405Z")+".txt")
			if os.WriteFile(path, []byte(report.String()), 0o644) == nil {
				fmt.Printf("\nreport written to %s\n", path)
			}
		}
	}
}

// addr is the loopback address of strategy s in round r: each in a /24 of
// its own, so that no strategy's joins count in another's rate signals.
func addr(s, r int) string { return fmt.Sprintf("127.%d.%d.1", s, r) }

func (b *bench) setUp() {
	var err error
	if b.certs, err = makeCert(b.tmp); err != nil {
		cleanup.Fatal(err)
	}
	if b.svc, err = startServices(); err != nil {
		cleanup.Fatal(err)
	}
	cleanup.AtExit(b.svc.close)
	b.target, b.admin = freeAddr(), freeAddr()
	b.base = "https://" + b.target
	cfg := filepath.Join(b.tmp, "waitroom.yaml")
	if err := b.x.copyFor(local{listen: b.target, admin: b.admin, inventory: freeAddr(),
		certFile: b.certs.certFile, keyFile: b.certs.keyFile, dataDir: b.tmp, origin: b.svc.originAddr,
		captchaBase: b.svc.captchaBase, webhook: b.svc.hookURL, now: time.Now()}, cfg); err != nil {
		cleanup.Fatal(err)
	}
	env := os.Environ()
	var secrets []string
	for _, v := range b.x.vars {
		val := randomHex(32)
		if strings.Contains(v, "ADMIN_TOKEN") {
			b.adminToken = val
		}
		env = append(env, v+"="+val)
		secrets = append(secrets, v)
	}
	b.wrLog = filepath.Join(b.tmp, "waitroom.log")
	logf, err := os.Create(b.wrLog)
	if err != nil {
		cleanup.Fatal(err)
	}
	b.wr = exec.Command(*bin, "serve", "-c", cfg)
	b.wr.Env, b.wr.Stdout, b.wr.Stderr = env, logf, logf
	b.wr.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := b.wr.Start(); err != nil {
		cleanup.Fatal(err)
	}
	logf.Close()
	cleanup.AtExit(b.stopWaitroom)
	b.waitReady()

	fmt.Fprintf(b.out, "waitroom bot-cost benchmark, %s, %d CPUs, %s, load average %s\n",
		time.Now().UTC().Format(time.RFC3339), runtime.NumCPU(), runtime.Version(), procstat.LoadAvg())
	fmt.Fprintf(b.out, "config: %s as shipped (bands, signals, work, rate limits, binding unchanged), over TLS with waitroom terminating it; changed in the copy:\n", b.x.path)
	for _, c := range b.x.changes {
		fmt.Fprintf(b.out, "  - %s\n", c)
	}
	fmt.Fprintf(b.out, "  - from the environment, random: %s\n", strings.Join(secrets, ", "))
	fmt.Fprintf(b.out, "event %s: light work %d bits × %d puzzles, heavy %d bits × %d puzzles\n",
		b.x.event, b.x.lightBits, b.x.lightPuzz, b.x.heavyBits, b.x.heavyPuzz)

	// The native solver's rate, in an agent like the bots' own.
	ag, err := startAgent(b.certs.certFile, "127.0.0.1", b.target)
	if err != nil {
		cleanup.Fatal(err)
	}
	r, err := ag.call(agentReq{Op: "rate"})
	ag.stop()
	if err != nil || r.Rate <= 0 {
		cleanup.Fatalf("measuring the native hash rate: %v %s", err, r.Error)
	}
	b.rate = r.Rate
	fmt.Fprintf(b.out, "native solver (Go, crypto/sha256, all cores): %.2f M hashes per CPU-second; light work ≈ %.2f CPU-s, heavy ≈ %.2f CPU-s\n",
		b.rate/1e6, float64(b.x.lightPuzz)*math.Exp2(float64(b.x.lightBits))/b.rate,
		float64(b.x.heavyPuzz)*math.Exp2(float64(b.x.heavyBits))/b.rate)

	if err := browsertest.Check(); err != nil {
		b.noChromium = err.Error()
		fmt.Fprintf(b.out, "browser: none (%s): the fan, the hybrids, headless Chromium and go-chrome (which copies Chromium's headers) are skipped\n", b.noChromium)
		return
	}
	if *useXvfb {
		x, why := startXvfb()
		if x != nil {
			b.display = x.display
			cleanup.AtExit(x.stop)
			b.fanNote = "headful under Xvfb " + x.display
		} else {
			b.fanNote = "headless (--headless=new): " + why
		}
	} else {
		b.fanNote = "headless (--headless=new): -xvfb=false"
	}
	fmt.Fprintf(b.out, "browser: %s; the fan's Chromium: %s, a fresh profile, its own user agent\n", chromiumVersion(), b.fanNote)
	b.capture()
}

func (b *bench) stopWaitroom() {
	if b.wr == nil || b.wr.Process == nil {
		return
	}
	syscall.Kill(-b.wr.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { b.wr.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-b.wr.Process.Pid, syscall.SIGKILL)
		<-done
	}
	b.wr = nil
}

func (b *bench) tearDown() {
	b.stopWaitroom()
	b.svc.close()
}

func (b *bench) waitReady() {
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + b.admin + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) || (b.wr.ProcessState != nil) {
			log, _ := os.ReadFile(b.wrLog)
			if len(log) > 3000 {
				log = log[len(log)-3000:]
			}
			cleanup.Fatalf("waitroom did not get ready within 20s (%v)\n%s", err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *bench) metrics() string {
	req, _ := http.NewRequest("GET", "http://"+b.admin+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+b.adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cleanup.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		cleanup.Fatalf("GET /metrics: %d", resp.StatusCode)
	}
	return string(body)
}

// fanConf is how the fan's Chromium starts (proxy: the CONNECT proxy of
// its address, or none).
func (b *bench) fanConf(proxy string) browserConf {
	return browserConf{headless: b.display == "", display: b.display, proxy: proxy, person: true,
		bypass: strings.TrimPrefix(b.svc.captchaBase, "http://"), spki: b.certs.spki}
}

// capture learns what a Chromium of the fan's kind sends: the real page
// is loaded through the recorder, runs its challenge and join, and the
// header lines of its GET of the challenge and POST of the join (and the
// join body's extra fields) are kept for the bots that copy them.
func (b *bench) capture() {
	rec, err := startRecorder(b.certs, addr(3, 0), b.target)
	if err != nil {
		cleanup.Fatal(err)
	}
	defer rec.close()
	br, err := startBrowser(b.fanConf(""))
	if err != nil {
		cleanup.Fatal(err)
	}
	defer br.close()
	t, err := br.newTab(b.x.prefix + "/api/")
	if err != nil {
		cleanup.Fatalf("capture: opening a tab: %v", err)
	}
	defer t.close()
	if err := t.navigate("https://" + rec.addr() + b.x.landing); err != nil {
		cleanup.Fatalf("capture: navigating: %v", err)
	}
	api := b.x.prefix + "/api/"
	// The recorder speaks to the waiting room with Go's TLS under
	// Chromium's header lines, which the consistency and ja4 signals see
	// through: its visit can get the heavy work or a CAPTCHA, and then
	// the page is not waited for.
	got := ""
	deadline := time.After(*pageTimeout)
wait:
	for {
		if _, ok := rec.find("POST", api+"join"); ok {
			break
		}
		select {
		case <-rec.ch:
		case s := <-t.done:
			if !strings.Contains(s.url, "/api/challenge") {
				continue
			}
			var c challengeAnswer
			json.Unmarshal([]byte(t.body(s)), &c)
			switch {
			case s.status != 200:
				got = fmt.Sprintf("challenge %d", s.status)
			case c.Action == "pow" && c.PoW != nil && c.PoW.Bits == b.x.lightBits:
				continue
			case c.Action == "pow" && c.PoW != nil:
				got = b.work(c.PoW.Bits)
			default:
				got = c.Action
			}
			break wait
		case <-deadline:
			got = "no join within " + pageTimeout.String()
			break wait
		case <-time.After(time.Second):
		}
	}
	how := "the page's own challenge and join"
	joined := false
	if _, ok := rec.find("POST", api+"join"); ok {
		joined = true
	}
	// The page's solver (pow.js with client.js) and worker, as room.js
	// loads them; then the tab leaves the room page (whose own solve of
	// a heavy challenge would run on) for the shop's root at the same
	// origin, loads the solver there and measures it.
	urls, _ := t.eval(`(function () { var e = document.getElementById("wr-config"); if (!e) return ""; var c = JSON.parse(e.textContent); return JSON.stringify([c.pow_js || "", c.pow_worker || ""]); })()`)
	var solver [2]string
	json.Unmarshal([]byte(urls), &solver)
	if err := t.navigate("https://" + rec.addr() + "/"); err != nil {
		cleanup.Fatalf("capture: navigating: %v", err)
	}
	b.measureBrowser(t, br, solver[0], solver[1])
	if !joined {
		// The page did not join: the join is sent by hand with the
		// page's fetch options, its referrer and the page's client
		// report (after the measured solve of the light work's size).
		how = "the page's challenge (the recorder's visit got " + got + "); the join sent by hand with the page's fetch options and the client report of the page's solver after a light-sized solve"
		join := map[string]any{"event": b.x.event, "return": b.x.landing}
		if c := t.clientReport(); c != "" {
			join["client"] = json.RawMessage(c)
		}
		jb, _ := json.Marshal(join)
		t.fetchFrom("https://"+rec.addr()+b.x.landing, "POST", api+"join", jb)
	}
	get, ok1 := rec.find("GET", api+"challenge")
	post, ok2 := rec.find("POST", api+"join")
	if !ok1 || !ok2 {
		cleanup.Fatalf("capture: the browser's requests were not seen (challenge %v, join %v)", ok1, ok2)
	}
	b.chrome.get = rehost(get.headers, rec.addr(), b.target)
	b.chrome.post = rehost(post.headers, rec.addr(), b.target)
	var body map[string]json.RawMessage
	json.Unmarshal(post.body, &body)
	b.chrome.extra = map[string]json.RawMessage{}
	for k, v := range body {
		switch k {
		case "event", "return", "pow", "captcha":
		default:
			b.chrome.extra[k] = v
		}
	}
	b.chrome.ua, _ = t.eval("navigator.userAgent")
	names := func(hs [][2]string) string {
		var s []string
		for _, h := range hs {
			s = append(s, h[0])
		}
		return strings.Join(s, ", ")
	}
	fmt.Fprintf(b.out, "captured from the fan's kind of Chromium (%s):\n  user agent: %s\n  GET  challenge: %s\n  POST join:      %s\n  join body fields copied: %v\n  the page's client report in that join: %s\n",
		how, b.chrome.ua, names(b.chrome.get), names(b.chrome.post), slices.Sorted(maps.Keys(b.chrome.extra)), b.chrome.extra["client"])
	fmt.Fprintf(b.out, "%s\n", b.browserNote)
}

// measureBrowser measures the page's solver in the capture's browser (a
// Chromium of the fan's kind): made-up challenges of the light work's
// size, solved by pow.js in a page of the site as room.js has it solve a
// real one, hashes over the CPU time of all the browser's processes; the
// fastest of three solves. Work above
// -max-solve at this rate is priced for the browser strategies, as it is
// from the native rate for the native solvers.
func (b *bench) measureBrowser(t *tab, br *browser, solverURL, workerURL string) {
	if solverURL == "" || workerURL == "" {
		b.browserNote = "browser solver: not measured (the room page gave no solver URLs): browser work above -max-solve is waited for"
		return
	}
	if err := t.loadScript(solverURL); err != nil {
		b.browserNote = fmt.Sprintf("browser solver: not measured (%v): browser work above -max-solve is waited for", err)
		return
	}
	url := workerURL
	// Three solves; the fastest counts, which prices the heavy work at
	// its cheapest for the browser strategies (the machine is shared).
	var runs []string
	engine := ""
	for range 3 {
		ch := map[string]any{"token": "bench", "seed": randomHex(16), "bits": b.x.lightBits, "puzzles": b.x.lightPuzz,
			"expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "worker_url": url}
		c0 := br.cpu()
		hashes, eng, err := t.solve(ch, 3*time.Minute)
		cpu := (br.cpu() - c0).Seconds()
		if err != nil || hashes <= 0 || cpu <= 0 {
			b.browserRate = 0
			b.browserNote = fmt.Sprintf("browser solver: not measured (%v, %.0f hashes, %.2f CPU-s): browser work above -max-solve is waited for", err, hashes, cpu)
			return
		}
		engine = eng
		b.browserRate = max(b.browserRate, hashes/cpu)
		runs = append(runs, fmt.Sprintf("%.2f", hashes/cpu/1e6))
	}
	b.browserNote = fmt.Sprintf("browser solver (the page's pow.js, engine %s, in Chromium of the fan's kind, all its processes' CPU): %.2f M hashes per CPU-second (the fastest of %s M over 3 solves of the light work's size); light work ≈ %.2f CPU-s, heavy ≈ %.1f CPU-s",
		engine, b.browserRate/1e6, strings.Join(runs, ", "),
		float64(b.x.lightPuzz)*math.Exp2(float64(b.x.lightBits))/b.browserRate,
		float64(b.x.heavyPuzz)*math.Exp2(float64(b.x.heavyBits))/b.browserRate)
}

// rehost puts the waiting room's host:port where the recorder's was, and
// drops cookies (each bot place is a new visitor).
func rehost(hs [][2]string, from, to string) [][2]string {
	var out [][2]string
	for _, h := range hs {
		if strings.EqualFold(h[0], "Cookie") {
			continue
		}
		out = append(out, [2]string{h[0], strings.ReplaceAll(h[1], from, to)})
	}
	return out
}

func freeAddr() string {
	port, err := freeport.Get()
	if err != nil {
		cleanup.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
}

func randomHex(n int) string {
	b := make([]byte, n)
	crand.Read(b)
	return hex.EncodeToString(b)
}

func chromiumVersion() string {
	out, _ := exec.Command(browsertest.ExecPath, "--version").Output()
	line, _, _ := strings.Cut(string(bytes.TrimSpace(out)), "\n")
	return strings.TrimSpace(line)
}
