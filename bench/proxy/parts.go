package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/internal/testkit/nginxtest"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

var bgctx = context.Background()

// nginxConf is nginx as a plain reverse proxy to the origin: one worker
// (nginxtest's worker_processes), upstream keep-alive, HTTP/1.1 upstream,
// and no keep-alive connection closed during a run.
const nginxConf = `
  upstream origin {
    server %s;
    keepalive 64;
    keepalive_requests 1000000;
  }
  server {
    listen 127.0.0.1:{{PORT}};
    keepalive_requests 1000000;
    location / {
      proxy_pass http://origin;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }`

// gatedPath is a path of the bench event's queue route.
const gatedPath = "/gated/page"

// passThrough is part 1: admitted requests through waitroom and nginx to
// the same origin, and the origin hit directly.
func (b *bench) passThrough(nginxBin string) {
	fmt.Fprintf(b.out, "\n== 1. Admitted pass-through: GET %s with a valid pass cookie, origin answers %d bytes ==\n", gatedPath, pageSize)
	fmt.Fprintln(b.out, "waitroom: checks the pass (cached after the first request), forwards to the origin (keep-alive pool).")
	fmt.Fprintln(b.out, "nginx: plain reverse proxy, 1 worker, upstream keepalive 64, proxy_http_version 1.1, Connection \"\".")
	fmt.Fprintln(b.out, "fasthttp proxy: a bare fasthttp reverse proxy (one HostClient, no gate, no header rewriting), GOMAXPROCS=1:")
	fmt.Fprintln(b.out, "the floor of waitroom's own stack.")
	fmt.Fprintln(b.out, "direct: wrk to the origin itself (then alone on CPU 1). cpu: share of a core used by the server under")
	fmt.Fprintln(b.out, "test / by wrk plus the origin behind it (the generator side, CPU 0 when pinned).")
	now := time.Now().UTC()
	w := b.startWaitroom(wrConfig{Name: "passthrough", Store: "embedded",
		OpensAt: now.Format(time.RFC3339), OnSaleAt: now.Format(time.RFC3339), InitialActive: 50})
	defer w.stop()
	ngx, err := nginxtest.Launch(nginxtest.Options{Dir: mkdir(b.tmp, "nginx"), Workers: 1,
		HTTP: fmt.Sprintf(nginxConf, b.origin.addr)})
	if err != nil {
		fatal(err)
	}
	defer ngx.Stop()
	ngxPID := readPID(filepath.Join(ngx.Dir, "nginx.pid"))
	pinGroup("nginx", ngxPID, 2, cpuServer)
	direct := startOrigin(b.tmp, "direct-origin", cpuServer, pageSize)
	defer direct.stop()
	bare := startBareProxy(b.tmp, b.origin.addr, cpuServer)
	defer bare.stop()

	cookie := "Cookie: wr_pass_" + eventID + "=" + b.pass()
	// The gate is on: without the pass waitroom answers with the waiting
	// room, with it the origin's page comes back through every contender.
	if code, body, err := httpDo("GET", "http://"+w.addr+gatedPath, "", nil, nil); err != nil || code != 200 || bytes.Equal(body, originBody(pageSize)) {
		w.fatalf("without a pass: %d %v, origin page: %v", code, err, bytes.Equal(body, originBody(pageSize)))
	}
	for _, url := range []string{"http://" + w.addr, ngx.URL(), "http://" + bare.addr, "http://" + direct.addr} {
		code, body, err := httpDo("GET", url+gatedPath, "", nil, []string{cookie})
		if err != nil || code != 200 || !bytes.Equal(body, originBody(pageSize)) {
			fatalf("%s%s with the pass: %d %v, body %.80q", url, gatedPath, code, err, body)
		}
	}
	originBefore := originCount(b.origin)
	directBefore := originCount(direct)

	wr := &contender{name: "waitroom", server: w.pgid(), backend: b.origin.pgid(),
		run: wrkRun{URL: "http://" + w.addr + gatedPath, Conns: *conns, Headers: []string{cookie}}}
	nx := &contender{name: "nginx", server: ngxPID, backend: b.origin.pgid(),
		run: wrkRun{URL: ngx.URL() + gatedPath, Conns: *conns, Headers: []string{cookie}}}
	bp := &contender{name: "fasthttp proxy", server: bare.pgid(), backend: b.origin.pgid(),
		run: wrkRun{URL: "http://" + bare.addr + gatedPath, Conns: *conns, Headers: []string{cookie}}}
	dr := &contender{name: "direct", server: direct.pgid(),
		run: wrkRun{URL: "http://" + direct.addr + gatedPath, Conns: *conns, Headers: []string{cookie}}}
	cs := []*contender{wr, nx, bp, dr}
	b.measure(cs, "req/s")

	// Every request wrk counted reached an origin and was answered there.
	served := originCount(b.origin) - originBefore
	slack := int64((wr.runs + nx.runs + bp.runs) * *conns) // requests in flight when a wrk run stops
	proxied := wr.total + nx.total + bp.total
	if served < proxied || served > proxied+slack {
		fatalf("the origin served %d requests, wrk completed %d through the proxies", served, proxied)
	}
	if d := originCount(direct) - directBefore; d < dr.total || d > dr.total+int64(dr.runs**conns) {
		fatalf("the direct origin served %d requests, wrk completed %d", d, dr.total)
	}
	m := w.metrics(b.adminToken)
	ok2xx := int64(metricValue(m, "waitroom_origin_requests_total", "event="+eventID, "class=2xx"))
	var bad float64
	for _, class := range []string{"1xx", "3xx", "4xx", "5xx", "other", "failed"} {
		bad += metricValue(m, "waitroom_origin_requests_total", "event="+eventID, "class="+class)
	}
	room := metricValue(m, "waitroom_requests_total", "action=queue", "outcome=room")
	refused := metricValue(m, "waitroom_passes_refused_total", "event="+eventID)
	if ok2xx < wr.total || bad != 0 || room != 1 || refused != 0 {
		fatalf("waitroom /metrics: %d forwarded with 2xx (wrk completed %d), %.0f not 2xx, %.0f sent to the waiting room (want 1), %.0f passes refused",
			ok2xx, wr.total, bad, room, refused)
	}
	fmt.Fprintf(b.out, "checked: 0 non-2xx in every wrk run; the origin served %d requests for the %d wrk completed through the proxies;\n", served, proxied)
	fmt.Fprintf(b.out, "waitroom /metrics: %d forwarded to the origin with 2xx, 0 failed, 0 passes refused, 1 sent to the waiting room (the no-pass check).\n", ok2xx)

	b.table(cs, "req/s", nx, map[*contender]string{
		wr: fmt.Sprintf("≥ 1.0× %s, p99 ≤ nginx %s", verdict(wr.rate() >= nx.rate()), verdict(wr.p99() <= nx.p99())),
	})
	fmt.Fprintf(b.out, "waitroom/nginx %.2f× (target ≥ 1.0: %s); p99 %s vs nginx %s (target ≤: %s); waitroom/direct %.2f×; nginx/direct %.2f×\n",
		wr.rate()/nx.rate(), verdict(wr.rate() >= nx.rate()), ms(wr.p99()), ms(nx.p99()), verdict(wr.p99() <= nx.p99()),
		wr.rate()/dr.rate(), nx.rate()/dr.rate())
	fmt.Fprintf(b.out, "waitroom/fasthttp proxy %.2f× (what the gate, rewriting and measuring cost); fasthttp proxy/nginx %.2f× (the stack's floor)\n",
		wr.rate()/bp.rate(), bp.rate()/nx.rate())
	fmt.Fprintf(b.out, "per CPU second: waitroom/fasthttp proxy %.2f× (server CPU per request %s vs %s)\n",
		cpuRatio(wr, bp), us(wr.cpuPerReq()), us(bp.cpuPerReq()))
}

// pass signs a pass for the bench event with the configured secret.
func (b *bench) pass() string {
	keys, err := admission.NewKeyring(admission.Key{ID: "bench", Alg: "HS256", Secret: []byte(b.secret)})
	if err != nil {
		fatal(err)
	}
	now := time.Now()
	tok, err := keys.SignPass(admission.Pass{ID: admission.NewPassID(), Event: eventID, Visitor: admission.NewVisitorID(),
		Lane: admission.PublicLane, Number: 1, IssuedAt: now, ExpiresAt: now.Add(3 * time.Hour)})
	if err != nil {
		fatal(err)
	}
	return tok
}

// originCount asks an origin how many pages it has served.
func originCount(p *proc) int64 {
	code, body, err := httpDo("GET", "http://"+p.addr+originCountPath, "", nil, nil)
	if err != nil || code != 200 {
		p.fatalf("count: %d %v", code, err)
	}
	n, err := strconv.ParseInt(string(body), 10, 64)
	if err != nil {
		p.fatalf("count: %q", body)
	}
	return n
}

func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		fatalf("%s: %v", path, err)
	}
	return pid
}

// statusBody is the part of the status JSON the benchmark reads.
type statusBody struct {
	Status   string `json:"status"`
	Position *int64 `json:"position"`
}

// visitor is a browser of the status part: its ticket cookie and the
// last status it saw.
type visitor struct {
	cookie string // "wr_ticket_bench=…"
	last   statusBody
	raw    []byte
}

// call sends a join or status request as v and keeps a renewed ticket.
func (v *visitor) call(method, url string, body []byte) error {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if v.cookie != "" {
		req.Header.Set("Cookie", v.cookie)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw := new(bytes.Buffer)
	raw.ReadFrom(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "wr_ticket_"+eventID {
			v.cookie = c.Name + "=" + c.Value
		}
	}
	v.raw = raw.Bytes()
	return json.Unmarshal(v.raw, &v.last)
}

// status is part 2: the O(1) status poll of a drawn, waiting visitor
// against a bare fasthttp hello-world server.
func (b *bench) status() {
	const visitors = 10
	fmt.Fprintln(b.out, "\n== 2. Status polls: GET /_wr/api/status?event=bench with a drawn ticket, vs a bare fasthttp hello world ==")
	fmt.Fprintf(b.out, "%d visitors join before the on-sale; the drawn one furthest back (caps: max_active 1, max_new_per_minute 1)\n", visitors)
	fmt.Fprintln(b.out, "is polled: position = number − serving counter, from the cached ticket, no store lookup, no pass signed.")
	fmt.Fprintln(b.out, "hello: the benchmark's fasthttp server answering \"Hello, World!\", GOMAXPROCS=1, alone on CPU 1 like waitroom.")
	opens := time.Now().UTC().Truncate(time.Second)
	onSale := opens.Add(6 * time.Second)
	w := b.startWaitroom(wrConfig{Name: "status", Store: "embedded", OpensAt: opens.Format(time.RFC3339),
		OnSaleAt: onSale.Format(time.RFC3339), MaxActive: 1, MaxNewPerMinute: 1, InitialActive: 1})
	defer w.stop()
	hello := startOrigin(b.tmp, "hello", cpuServer, 0)
	defer hello.stop()

	api := "http://" + w.addr + "/_wr/api/"
	vs := make([]*visitor, visitors)
	for i := range vs {
		vs[i] = &visitor{}
		if err := vs[i].call("POST", api+"join", []byte(`{"event":"`+eventID+`"}`)); err != nil {
			w.fatalf("join: %v", err)
		}
	}
	if time.Now().After(onSale) {
		fmt.Fprintln(b.out, "note: the joins finished after the on-sale; they are drawn in the first tranche instead of the pre-queue")
	}
	// Poll until every visitor's tranche is drawn (a position, or admitted).
	deadline := time.Now().Add(60 * time.Second)
	for {
		drawn := 0
		for _, v := range vs {
			if err := v.call("GET", api+"status?event="+eventID, nil); err != nil {
				w.fatalf("status: %v", err)
			}
			if v.last.Position != nil || v.last.Status == "admitted" {
				drawn++
			}
		}
		if drawn == len(vs) {
			break
		}
		if time.Now().After(deadline) {
			w.fatalf("the visitors were not drawn within 60s of joining; last status %s", vs[0].raw)
		}
		time.Sleep(500 * time.Millisecond)
	}
	var polled *visitor
	for _, v := range vs {
		if v.last.Status == "waiting" && v.last.Position != nil && (polled == nil || *v.last.Position > *polled.last.Position) {
			polled = v
		}
	}
	if polled == nil {
		w.fatalf("no visitor is waiting after the draw: %s", vs[0].raw)
	}
	fmt.Fprintf(b.out, "status polled (checked before measuring): %s\n", bytes.TrimSpace(polled.raw))
	issued := metricValue(w.metrics(b.adminToken), "waitroom_passes_issued_total", "event="+eventID)

	wr := &contender{name: "waitroom status", server: w.pgid(),
		run: wrkRun{URL: api + "status?event=" + eventID, Conns: *conns, Headers: []string{"Cookie: " + polled.cookie}}}
	hw := &contender{name: "fasthttp hello world", server: hello.pgid(),
		run: wrkRun{URL: "http://" + hello.addr + "/", Conns: *conns}}
	cs := []*contender{wr, hw}
	b.measure(cs, "req/s")

	if err := polled.call("GET", api+"status?event="+eventID, nil); err != nil || polled.last.Status != "waiting" {
		w.fatalf("after measuring: %v %s", err, polled.raw)
	}
	m := w.metrics(b.adminToken)
	if after := metricValue(m, "waitroom_passes_issued_total", "event="+eventID); after != issued {
		w.fatalf("%.0f passes were issued while measuring: the measured path was not the waiting status", after-issued)
	}
	fmt.Fprintf(b.out, "checked after measuring: still waiting (%s), no pass issued while measuring, 0 non-2xx.\n", bytes.TrimSpace(polled.raw))
	ratio := wr.rate() / hw.rate()
	b.table(cs, "req/s", hw, map[*contender]string{wr: "≥ 0.75× " + verdict(ratio >= 0.75)})
	fmt.Fprintf(b.out, "status/hello %.2f× (target ≥ 0.75: %s)\n", ratio, verdict(ratio >= 0.75))
	fmt.Fprintf(b.out, "per CPU second: status/hello %.2f× (server CPU per request %s vs %s)\n",
		cpuRatio(wr, hw), us(wr.cpuPerReq()), us(hw.cpuPerReq()))
}

// joins is part 3: joins per second with the embedded store and with
// Redis (appendfsync always, and everysec), each without and with the bot
// defence's proof of work.
func (b *bench) joins() {
	ttl := max(10*time.Minute, 4**duration)
	fmt.Fprintln(b.out, "\n== 3. Joins per second: POST /_wr/api/join {\"event\":\"bench\"} without a cookie (each request a new visitor) ==")
	fmt.Fprintln(b.out, "The queue is open and the sale an hour away: every join lands in the pre-queue. Each join mints a visitor,")
	fmt.Fprintln(b.out, "records it in the admission store and signs a ticket cookie. embedded: journal with fsync (group commit) on")
	fmt.Fprintln(b.out, "local disk. redis: a redis-server with appendonly yes on the generator's CPU (CPU 0), appendfsync as labelled.")
	fmt.Fprintln(b.out, "+ PoW: the same store with the event's challenge on: each join carries a solved proof of work, which waitroom")
	fmt.Fprintf(b.out, "verifies (%d SHA-256 and one HMAC) and redeems once (embedded: in memory; redis: SET NX in Redis) before joining.\n", powPuzzles)
	fmt.Fprintf(b.out, "Light work of %d bits × %d puzzles: production's puzzle count, so production's verification work, which does\n", powBits, powPuzzles)
	fmt.Fprintf(b.out, "not depend on the bits (production's light work: %d bits × %d); no risk signals. Before each run, untimed, the\n",
		challenge.DefaultLightBits, challenge.DefaultPuzzles)
	fmt.Fprintf(b.out, "benchmark fetches challenges with wrk's User-Agent and solves them, %g× what the fastest run so far of the store\n", powHeadroom)
	fmt.Fprintf(b.out, "(with or without the work) would have used; wrk sends each once (challenge_ttl %s).\n", ttl)
	now := time.Now().UTC()
	opens, onSale := now.Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339)
	// Every store's contender without the work warms up before those with
	// it, whose first runs it sizes (powFeed.before); the table shows them
	// side by side.
	var plain, withPoW []joinTarget
	for _, s := range []struct{ key, name, fsync string }{
		{"embedded", "embedded", ""}, {"always", "redis (appendfsync always)", "always"},
		{"everysec", "redis (appendfsync everysec)", "everysec"},
	} {
		if !slices.Contains(strings.Split(*joinStores, ","), s.key) {
			continue
		}
		for _, pow := range []bool{false, true} {
			cfg := wrConfig{Name: "join-embedded", Store: "embedded", OpensAt: opens, OnSaleAt: onSale, InitialActive: 50}
			name, redisPGID := s.name, 0
			if pow {
				cfg.Name += "-pow"
				cfg.PoWBits, cfg.PoWPuzzles, cfg.ChallengeTTL = powBits, powPuzzles, ttl
				name += " + PoW"
			}
			if s.fsync != "" {
				cfg.Name = strings.Replace(cfg.Name, "embedded", "redis-"+s.fsync, 1)
				var rds *redistest.Server
				rds, redisPGID = b.startRedis(cfg.Name, s.fsync)
				defer rds.Stop()
				cfg.Store, cfg.RedisURL = "redis", rds.URL()
			}
			w := b.startWaitroom(cfg)
			defer w.stop()
			t := b.joinContender(name, w, redisPGID)
			if !pow {
				plain = append(plain, t)
				continue
			}
			t.feed = &powFeed{wr: w, path: filepath.Join(b.tmp, "join-pow-bodies.txt"), self: t.contender,
				base: plain[len(plain)-1].contender}
			t.run.Script = b.writeScript("join_pow.lua", joinPoWScript)
			t.run.Args = []string{t.feed.path, powUserAgent}
			t.feed.admin = b.adminToken
			withPoW = append(withPoW, t)
		}
	}
	if len(plain) == 0 {
		fatalf("-join-stores %q names no store (embedded, always, everysec)", *joinStores)
	}
	cs := append(slices.Clone(plain), withPoW...)
	for _, t := range withPoW {
		for _, p := range plain {
			t.feed.first = append(t.feed.first, p.contender)
		}
	}
	before := make([]float64, len(cs))
	for i, c := range cs {
		before[i] = metricValue(c.wr.metrics(b.adminToken), "waitroom_joins_total", "event="+eventID, "result=joined")
	}
	list := make([]*contender, len(cs))
	for i, c := range cs {
		list[i] = c.contender
	}
	b.measure(list, "joins/s")
	var total int64
	for i, c := range cs {
		joined := int64(metricValue(c.wr.metrics(b.adminToken), "waitroom_joins_total", "event="+eventID, "result=joined") - before[i])
		if joined < c.total || joined > c.total+int64(c.runs**conns) {
			fatalf("%s: waitroom counted %d joins, wrk completed %d", c.name, joined, c.total)
		}
		total += joined
	}
	fmt.Fprintf(b.out, "checked: 0 non-2xx; waitroom counted every join wrk completed as a new visitor (%d in all).\n", total)
	var issued, tightest float64
	var solving time.Duration
	for _, t := range withPoW {
		issued += t.feed.check(b.adminToken)
		solving += t.feed.solving
		tightest = max(tightest, t.feed.tightest)
	}
	fmt.Fprintf(b.out, "checked, + PoW: /metrics shows all %.0f challenges fetched issued as the light work, 0 joins refused by the bot\n", issued)
	fmt.Fprintf(b.out, "defence (waitroom_challenge_refusals_total), 0 shadowed. Fetching and solving took %s (%.0f/s), untimed;\n",
		solving.Round(time.Second), issued/solving.Seconds())
	fmt.Fprintf(b.out, "the busiest run used %.0f%% of the challenges solved for it.\n", 100*tightest)
	var table []*contender
	var ratios []string
	for i := range plain {
		table = append(table, plain[i].contender, withPoW[i].contender)
		ratios = append(ratios, fmt.Sprintf("%.2f× (%s)", withPoW[i].rate()/plain[i].rate(), plain[i].name))
	}
	b.table(table, "joins/s", plain[0].contender, nil)
	if len(plain) == 3 {
		emb, always, everysec := plain[0], plain[1], plain[2]
		fmt.Fprintf(b.out, "redis/embedded: %.2f× (appendfsync always), %.2f× (everysec)\n", always.rate()/emb.rate(), everysec.rate()/emb.rate())
	}
	fmt.Fprintf(b.out, "joins with PoW / joins without: %s\n", strings.Join(ratios, ", "))
	var perCPU []string
	for i := range plain {
		perCPU = append(perCPU, fmt.Sprintf("%.2f× (%s)", cpuRatio(withPoW[i].contender, plain[i].contender), plain[i].name))
	}
	fmt.Fprintf(b.out, "per CPU second: joins with PoW / joins without: %s\n", strings.Join(perCPU, ", "))
}

// startRedis runs a redis-server with appendonly yes and appendfsync
// fsync on the generator's CPU, and returns it with its process group.
func (b *bench) startRedis(name, fsync string) (*redistest.Server, int) {
	rds, err := redistest.Launch(redistest.Options{AppendOnly: true, Dir: mkdir(b.tmp, "redis-"+name)})
	if err != nil {
		fatal(err)
	}
	atExit(rds.Stop)
	c := rds.Client()
	defer c.Close()
	if err := c.ConfigSet(bgctx, "appendfsync", fsync).Err(); err != nil {
		fatal(err)
	}
	pid := redisPID(rds)
	pinGroup("redis", pid, 1, cpuGenerator)
	return rds, pid
}

// joinTarget is a join contender and its waitroom.
type joinTarget struct {
	*contender
	wr *waitroom
}

func (b *bench) joinContender(name string, w *waitroom, redisPGID int) joinTarget {
	return joinTarget{wr: w, contender: &contender{name: name, server: w.pgid(), backend: redisPGID,
		run: wrkRun{URL: "http://" + w.addr + "/_wr/api/join", Conns: *conns, Script: b.writeScript("join.lua", joinScript)}}}
}
