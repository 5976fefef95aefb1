package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/waitroom/waitroom/bench/internal/stats"
)

// strategy is one way of getting queue places.
type strategy struct {
	key, name string
	tool      string // a program it needs, "" for none
	// target: the target applies (≥ 100× the fan per place, or
	// no place: CAPTCHA, shadow, block, refused). The fan's target is the
	// light work; the spoofed headless browser is only reported.
	target string
	run    func(b *bench, from string) roundResult
}

// roundResult is one round of a strategy.
type roundResult struct {
	places []placeResult
	cpu    time.Duration // every process of the bot, over the round; priced work included
	est    time.Duration // the priced part of cpu
	err    string
}

const (
	targetBot  = "bot"
	targetFan  = "fan"
	targetNone = "report"
)

var strategies = []strategy{
	{key: "fan", name: "fan: Chromium, normal profile, the real page", tool: "chromium", target: targetFan, run: (*bench).fanRound},
	{key: "curl", name: "curl + native solver", tool: "curl", target: targetBot, run: (*bench).curlRound},
	{key: "python", name: "Python (http.client, requests' headers) + native solver", tool: "python3", target: targetBot, run: (*bench).pythonRound},
	{key: "go", name: "Go net/http default client + native solver", target: targetBot, run: (*bench).goRound},
	{key: "go-chrome", name: "Go, Chrome's header lines copied + native solver", target: targetBot, run: (*bench).goChromeRound},
	{key: "hybrid-go", name: "hybrid: challenge fetched in Chromium, solved natively, joined from Go", tool: "chromium", target: targetBot, run: (*bench).hybridGoRound},
	{key: "hybrid-browser", name: "hybrid: challenge fetched in Chromium, solved natively, joined from Chromium", tool: "chromium", target: targetBot, run: (*bench).hybridBrowserRound},
	{key: "hybrid-browser-12", name: "hybrid-browser taking 12 places a round from one address (the rate signal's hard limit a minute)", tool: "chromium", target: targetNone, run: (*bench).hybridBrowser12Round},
	{key: "headless", name: "headless Chromium, default UA, the real page", tool: "chromium", target: targetBot, run: (*bench).headlessRound},
	{key: "headless-ua", name: "headless Chromium, --user-agent of desktop Chrome, the real page", tool: "chromium", target: targetNone, run: (*bench).headlessUARound},
}

// scripted runs n places with get/post and the agent's native solver,
// charging the round with the CPU of cl (when it runs its own processes)
// and of the agent.
func (b *bench) scripted(from string, n int, cl client, mk func(ag *agent) (get, post client), extra bool) roundResult {
	ag, err := startAgent(b.certs.certFile, from, b.target)
	if err != nil {
		return roundResult{err: err.Error()}
	}
	get, post := cl, cl
	if mk != nil {
		get, post = mk(ag)
	}
	var ex = b.chrome.extra
	if !extra {
		ex = nil
	}
	var r roundResult
	for range n {
		p := b.scriptedPlace(get, post, ag, ex)
		r.places = append(r.places, p)
		r.est += p.est
	}
	r.cpu = ag.stop() + r.est
	if cl != nil {
		r.cpu += cl.close()
	}
	return r
}

func (b *bench) curlRound(from string) roundResult {
	return b.scripted(from, *places, &curlClient{base: b.base, local: from, caFile: b.certs.certFile}, nil, false)
}

func (b *bench) pythonRound(from string) roundResult {
	host, port, _ := strings.Cut(b.target, ":")
	py, err := startPython(b.tmp, host, port, from, b.certs.certFile)
	if err != nil {
		return roundResult{err: err.Error()}
	}
	return b.scripted(from, *places, py, nil, false)
}

func (b *bench) goRound(from string) roundResult {
	return b.scripted(from, *places, nil, func(ag *agent) (client, client) {
		c := &agentClient{a: ag, kind: "go-default"}
		return c, c
	}, false)
}

func (b *bench) goChromeRound(from string) roundResult {
	return b.scripted(from, *places, nil, func(ag *agent) (client, client) {
		c := &agentClient{a: ag, kind: "go-chrome", get: b.chrome.get, post: b.chrome.post}
		return c, c
	}, true)
}

// hybrid: a Chromium of the fan's kind, coming from the bot's address,
// holds a page of the waiting room's origin (its root, which passes to
// the shop) and fetches each challenge from it; the agent solves; the
// join goes from Go with the browser's header lines (joinFromGo) or from
// the page. Cookies are cleared before each place. The browser's CPU over
// the round counts, with the agent's.
func (b *bench) hybrid(from string, n int, joinFromGo bool) roundResult {
	px, err := startConnectProxy(from, b.target)
	if err != nil {
		return roundResult{err: err.Error()}
	}
	defer px.close()
	// A Chromium like the fan's, but driven (navigator.webdriver true):
	// its own client report is not sent, the fan's captured one is.
	conf := b.fanConf(px.addr())
	conf.person = false
	br, err := startBrowser(conf)
	if err != nil {
		return roundResult{err: err.Error()}
	}
	defer br.close()
	c0 := br.cpu()
	t, err := br.newTab(b.x.prefix + "/api/")
	if err != nil {
		return roundResult{err: err.Error()}
	}
	defer t.close()
	if err := t.navigate(b.base + "/"); err != nil {
		return roundResult{err: err.Error()}
	}
	var r roundResult
	rr := b.scripted(from, n, nil, func(ag *agent) (client, client) {
		if joinFromGo {
			return tabCookieless{t}, &agentClient{a: ag, kind: "go-chrome", get: b.chrome.get, post: b.chrome.post}
		}
		return tabCookieless{t}, tabClient{t}
	}, true)
	r = rr
	r.cpu += br.cpu() - c0
	return r
}

// tabCookieless fetches the challenge after clearing the browser's
// cookies: each place is a new visitor.
type tabCookieless struct{ t *tab }

func (c tabCookieless) do(method, path string, body []byte) (int, []byte, error) {
	if err := c.t.clearCookies(); err != nil {
		return 0, nil, err
	}
	return c.t.fetch(method, path, body)
}
func (c tabCookieless) close() time.Duration { return 0 }

func (b *bench) hybridGoRound(from string) roundResult      { return b.hybrid(from, *places, true) }
func (b *bench) hybridBrowserRound(from string) roundResult { return b.hybrid(from, *places, false) }

// hybridBrowser12Round is hybrid-browser taking 12 places in a round from
// one address, as a bot that has few addresses must: the rate signal's
// hard limit for an address in a minute (configs/single-node.yaml).
func (b *bench) hybridBrowser12Round(from string) roundResult {
	return b.hybrid(from, max(12, *places), false)
}

// pages runs n visits of the real page in browsers started with c (each
// in a fresh browser context), the browser's CPU per visit.
func (b *bench) pages(from string, c browserConf) roundResult {
	px, err := startConnectProxy(from, b.target)
	if err != nil {
		return roundResult{err: err.Error()}
	}
	defer px.close()
	c.proxy, c.bypass, c.spki = px.addr(), strings.TrimPrefix(b.svc.captchaBase, "http://"), b.certs.spki
	br, err := startBrowser(c)
	if err != nil {
		return roundResult{err: err.Error()}
	}
	defer br.close()
	var r roundResult
	for range *places {
		p := b.pagePlace(br)
		r.places = append(r.places, p)
		r.cpu += p.cpu
		r.est += p.est
	}
	return r
}

func (b *bench) fanRound(from string) roundResult { return b.pages(from, b.fanConf("")) }
func (b *bench) headlessRound(from string) roundResult {
	return b.pages(from, browserConf{headless: true})
}
func (b *bench) headlessUARound(from string) roundResult {
	return b.pages(from, browserConf{headless: true, userAgent: b.chrome.ua})
}

// result gathers a strategy's rounds.
type result struct {
	s       strategy
	skipped string
	rounds  []roundResult
}

// perPlace is the median over rounds of the CPU per real place (+Inf for
// a round without one), and whether any of it was priced.
func (r *result) perPlace() (float64, bool) {
	var v []float64
	priced := false
	for _, rr := range r.rounds {
		n := 0
		for _, p := range rr.places {
			if p.real {
				n++
			}
			priced = priced || p.priced
		}
		if n == 0 {
			v = append(v, math.Inf(1))
			continue
		}
		v = append(v, rr.cpu.Seconds()/float64(n))
	}
	return stats.Median(v), priced
}

// perTry is the median over rounds of the CPU per place tried, whatever
// it came to.
func (r *result) perTry() float64 {
	var v []float64
	for _, rr := range r.rounds {
		if len(rr.places) > 0 {
			v = append(v, rr.cpu.Seconds()/float64(len(rr.places)))
		}
	}
	return stats.Median(v)
}

// fanPerPlace is the median of the fan's visits' CPU.
func (r *result) fanPerPlace() float64 {
	var v []float64
	for _, rr := range r.rounds {
		for _, p := range rr.places {
			if p.real {
				v = append(v, p.cpu.Seconds())
			}
		}
	}
	return stats.Median(v)
}

// actions tallies the places' actions: "light_pow 9/9".
func (r *result) actions() (string, map[string]int, int) {
	count := map[string]int{}
	n := 0
	for _, rr := range r.rounds {
		for _, p := range rr.places {
			count[p.action]++
			n++
		}
	}
	var keys []string
	for k := range count {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return count[keys[i]] > count[keys[j]] || count[keys[i]] == count[keys[j]] && keys[i] < keys[j]
	})
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d/%d", k, count[k], n))
	}
	return strings.Join(parts, ", "), count, n
}

func (b *bench) run() {
	want := map[string]bool{}
	for _, k := range strings.Split(*only, ",") {
		if k = strings.TrimSpace(k); k != "" {
			want[k] = true
		}
	}
	var results []*result
	for _, s := range strategies {
		r := &result{s: s}
		if len(want) > 0 && !want[s.key] && s.key != "fan" {
			continue
		}
		switch {
		case (s.tool == "chromium" || s.key == "go-chrome") && b.noChromium != "":
			r.skipped = b.noChromium
		case s.tool != "" && s.tool != "chromium":
			if _, err := exec.LookPath(s.tool); err != nil {
				r.skipped = s.tool + " not found"
			}
		}
		results = append(results, r)
	}
	fmt.Fprintf(b.out, "\n%d places per strategy per round, %d rounds; each strategy and round from an address and /24 of its own (127.S.R.1)\n", *places, *rounds)
	for round := 1; round <= *rounds; round++ {
		for i, r := range results {
			if r.skipped != "" {
				continue
			}
			start := time.Now()
			rr := r.s.run(b, addr(10+slices.IndexFunc(strategies, func(s strategy) bool { return s.key == r.s.key }), round))
			r.rounds = append(r.rounds, rr)
			_ = i
			b.printRound(round, r.s, rr, time.Since(start))
		}
	}
	b.report(results)
}

func (b *bench) printRound(round int, s strategy, rr roundResult, took time.Duration) {
	if rr.err != "" {
		fmt.Fprintf(b.out, "  round %d  %-17s error: %s\n", round, s.key, rr.err)
		return
	}
	// Places that came to the same are printed once, with a count.
	var keys []string
	count := map[string]int{}
	var cpus []string
	for _, p := range rr.places {
		t := p.action
		if p.detail != "" {
			t += " (" + p.detail + ")"
		}
		if p.server != "" {
			t += " [server: " + p.server + "]"
		}
		if count[t] == 0 {
			keys = append(keys, t)
		}
		count[t]++
		if p.cpu > 0 {
			cpus = append(cpus, fmt.Sprintf("%.2f", p.cpu.Seconds()))
		}
	}
	var ps []string
	for _, k := range keys {
		ps = append(ps, fmt.Sprintf("%d× %s", count[k], k))
	}
	visits := ""
	if len(cpus) > 0 {
		visits = " visits " + strings.Join(cpus, "/") + "s;"
	}
	fmt.Fprintf(b.out, "  round %d  %-17s cpu %6.2fs;%s %s  (%.0fs)\n", round, s.key, rr.cpu.Seconds(), visits, strings.Join(ps, "; "), took.Seconds())
	// What the pages said of their browser (client.js's report), once
	// per distinct report; the solve's time and hashes, which differ per
	// visit, left out.
	seen := map[string]bool{}
	for _, p := range rr.places {
		var m map[string]json.RawMessage
		if json.Unmarshal([]byte(p.client), &m) != nil || m == nil {
			continue
		}
		delete(m, "solve_ms")
		delete(m, "hashes")
		c, _ := json.Marshal(m)
		if !seen[string(c)] {
			seen[string(c)] = true
			fmt.Fprintf(b.out, "           %-17s the page's client report (solve_ms, hashes left out): %s\n", "", c)
		}
	}
}

func (b *bench) report(results []*result) {
	var fan *result
	for _, r := range results {
		if r.s.key == "fan" {
			fan = r
		}
	}
	fanCPU := math.NaN()
	if fan != nil && fan.skipped == "" {
		fanCPU = fan.fanPerPlace()
	}
	tw := tabwriter.NewWriter(b.out, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\nstrategy\tactions (all places)\tCPU-s per real place\t× fan\ttarget\n")
	var verdicts []string
	for _, r := range results {
		if r.skipped != "" {
			fmt.Fprintf(tw, "%s\tskipped: %s\t-\t-\t-\n", r.s.key, r.skipped)
			verdicts = append(verdicts, fmt.Sprintf("SKIP  %s: %s", r.s.name, r.skipped))
			continue
		}
		acts, count, n := r.actions()
		if r.s.target == targetFan {
			ok := count["light_pow"] == n && n > 0
			fmt.Fprintf(tw, "%s\t%s\t%.2f\t1×\tlight work, every place\n", r.s.key, acts, fanCPU)
			verdicts = append(verdicts, fmt.Sprintf("%s  %s gets the light work (no false positive): %s", verdict(ok), r.s.name, acts))
			continue
		}
		cpu, priced := r.perPlace()
		ratio := cpu / fanCPU
		cpuS, ratioS := fmt.Sprintf("%.2f", cpu), fmt.Sprintf("%.1f×", ratio)
		switch {
		case math.IsInf(cpu, 1):
			cpuS, ratioS = "no place", "∞"
		case math.IsNaN(fanCPU):
			ratioS = "no fan"
		}
		switch {
		case priced && math.IsInf(cpu, 1):
			cpuS = fmt.Sprintf("no place (~%.2f per try, priced)", r.perTry())
		case priced:
			cpuS = "~" + cpuS + " (priced)"
		}
		stopped := count["captcha"] + count["shadow"] + count["block"] + count["refused"]
		ok := ratio >= targetRatio || math.IsInf(cpu, 1) || (stopped == n && n > 0)
		what := "≥ 100× the fan, or CAPTCHA/shadow/block"
		if r.s.target == targetNone {
			what = "reported"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.s.key, acts, cpuS, ratioS, what)
		switch r.s.target {
		case targetBot:
			verdicts = append(verdicts, fmt.Sprintf("%s  %s: %s per place, %s", verdict(ok), r.s.name, ratioS, acts))
		default:
			verdicts = append(verdicts, fmt.Sprintf("INFO  %s: %s per place (%s CPU-s), %s", r.s.name, ratioS, cpuS, acts))
		}
	}
	tw.Flush()
	fmt.Fprintf(b.out, "\nCPU-s per real place: every process of the bot (curl/python3/agent rusage, Chromium's /proc times) over a round, over its places in the real queue (shadowed ones are not places); median of rounds. The fan: Chromium's CPU from opening the tab to the join's answer, median of visits.\n")
	fmt.Fprintf(b.out, "\n%s\n", strings.Join(verdicts, "\n"))
	fmt.Fprintf(b.out, "\n%s\n", b.svc.summary())
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}
