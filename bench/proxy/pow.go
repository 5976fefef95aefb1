package main

import (
	"bufio"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/challenge"
)

// The proof of work of the joins with the bot defence on. Verifying a
// solution costs the server one SHA-256 per puzzle and one HMAC whatever
// the bits, so the puzzles are production's and the bits low: the
// benchmark solves every challenge before the run, and that stays cheap.
const (
	powBits    = 2
	powPuzzles = challenge.DefaultPuzzles
	// powHeadroom is how many times the challenges a run is expected to
	// spend are solved for it (see powFeed.before).
	powHeadroom = 2.0
	// powUserAgent is what wrk sends with the joins and the benchmark
	// with the challenge fetches: a challenge is bound to it.
	powUserAgent = "waitroom-bench/1 (wrk)"
	// powWorkers fetch and solve challenges in parallel.
	powWorkers = 16
)

//go:embed join_pow.lua
var joinPoWScript string

// powFeed pre-solves the challenges of a contender whose joins carry a
// proof of work: before each wrk run it fetches enough challenges from
// the contender's waitroom, solves them, and writes one join body a line
// to the file join_pow.lua reads.
type powFeed struct {
	wr    *waitroom  // the contender's waitroom, which issues the challenges
	path  string     // the file of join bodies, one a line
	admin string     // the admin token, to read /metrics with
	self  *contender // the contender the bodies are for
	// base is the contender of the same store without the work, and
	// first the contenders without it of every store, which run their
	// warm-ups before self's: their rates size self's runs.
	base  *contender
	first []*contender

	issued   int64         // challenges fetched, over every run
	solving  time.Duration // fetching and solving, over every run
	tightest float64       // the largest share of its bodies a run used
	want     int           // bodies written for the coming run
}

// before writes the bodies of a run of d: the join rate expected times d
// with headroom, plus one a connection (requests in flight when wrk
// stops) and one for the request wrk makes to check the script. The rate
// expected is the fastest run so far of this contender or of the same
// store without the work (which does less per join); for the first run
// (the warm-up, when this contender has no rate yet), the fastest run of
// any store without the work.
func (f *powFeed) before(d time.Duration) {
	rate := max(f.base.peak, f.self.peak)
	if f.self.peak == 0 {
		for _, c := range f.first {
			rate = max(rate, c.peak)
		}
	}
	if rate == 0 {
		fatalf("%s: no join rate to size the challenges by: %s must run first", f.self.name, f.base.name)
	}
	f.want = int(math.Ceil(rate*d.Seconds()*powHeadroom)) + *conns + 1
	start := time.Now()
	f.solve(f.want)
	f.solving += time.Since(start)
	f.issued += int64(f.want)
}

// after fails the run if wrk ran out of bodies, and keeps the tightest.
func (f *powFeed) after(r wrkResult, out string) {
	if strings.Contains(out, "ran out of solved challenges") {
		fatalf("%s: wrk sent more joins than the %d challenges solved for the run (raise powHeadroom): the run is invalid\n%s",
			f.self.name, f.want, out)
	}
	f.tightest = max(f.tightest, float64(r.Requests)/float64(f.want))
}

// challengeResponse is the part of GET {prefix}/api/challenge the
// benchmark reads.
type challengeResponse struct {
	Action string `json:"action"`
	PoW    struct {
		Token   string `json:"token"`
		Seed    string `json:"seed"`
		Bits    int    `json:"bits"`
		Puzzles int    `json:"puzzles"`
	} `json:"pow"`
}

// powJoin is a join body with a solved challenge.
type powJoin struct {
	Event string `json:"event"`
	PoW   struct {
		Token  string   `json:"token"`
		Nonces []uint64 `json:"nonces"`
	} `json:"pow"`
}

// solve fetches n challenges, solves them, and writes their join bodies
// to f.path, one a line.
func (f *powFeed) solve(n int) {
	file, err := os.Create(f.path)
	if err != nil {
		fatal(err)
	}
	w := bufio.NewWriterSize(file, 1<<20)
	hc := &fasthttp.HostClient{Addr: f.wr.addr, MaxConns: powWorkers}
	var mu sync.Mutex
	left := int64(n)
	var wg sync.WaitGroup
	for range powWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			// A challenge is bound to the client's header fingerprint
			// too: Host, then User-Agent, as join_pow.lua writes them.
			req.Header.DisableSpecialHeader()
			req.SetRequestURI("http://" + f.wr.addr + "/_wr/api/challenge?event=" + eventID)
			req.Header.Set("Host", f.wr.addr)
			req.Header.Set("User-Agent", powUserAgent)
			for atomic.AddInt64(&left, -1) >= 0 {
				line := f.solveOne(hc, req, resp)
				mu.Lock()
				w.Write(line)
				w.WriteByte('\n')
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	hc.CloseIdleConnections()
	if err := w.Flush(); err != nil {
		fatal(err)
	}
	if err := file.Close(); err != nil {
		fatal(err)
	}
}

// solveOne fetches a challenge with req (wrk's User-Agent) and returns the
// join body that solves it.
func (f *powFeed) solveOne(hc *fasthttp.HostClient, req *fasthttp.Request, resp *fasthttp.Response) []byte {
	url := req.URI().String()
	if err := hc.DoTimeout(req, resp, 10*time.Second); err != nil {
		f.wr.fatalf("GET %s: %v", url, err)
	}
	var c challengeResponse
	if err := json.Unmarshal(resp.Body(), &c); err != nil || resp.StatusCode() != 200 {
		f.wr.fatalf("GET %s: %d %v %.200q", url, resp.StatusCode(), err, resp.Body())
	}
	if c.Action != "pow" || c.PoW.Bits != powBits || c.PoW.Puzzles != powPuzzles {
		f.wr.fatalf("GET %s: action %q, %d bits × %d puzzles: want the light work, %d × %d",
			url, c.Action, c.PoW.Bits, c.PoW.Puzzles, powBits, powPuzzles)
	}
	seed, err := hex.DecodeString(c.PoW.Seed)
	if err != nil || len(seed) != 16 {
		f.wr.fatalf("GET %s: seed %q", url, c.PoW.Seed)
	}
	var j powJoin
	j.Event, j.PoW.Token = eventID, c.PoW.Token
	j.PoW.Nonces = challenge.Solve([16]byte(seed), powBits, powPuzzles)
	line, err := json.Marshal(j)
	if err != nil {
		fatal(err)
	}
	return line
}

// check reads the contender's /metrics after the runs: every
// challenge issued was the light one, no join was refused by the bot
// defence or shadowed, and every join wrk completed was accepted (the
// caller checks the count of joins). It returns the challenges issued.
func (f *powFeed) check(adminToken string) float64 {
	m := f.wr.metrics(adminToken)
	light := metricValue(m, "waitroom_challenge_decisions_total", "event="+eventID, "action=light_pow", "applied=light_pow")
	decided := metricSum(m, "waitroom_challenge_decisions_total", "event="+eventID)
	refused := metricSum(m, "waitroom_challenge_refusals_total", "event="+eventID)
	shadowed := metricValue(m, "waitroom_joins_total", "event="+eventID, "result=shadowed")
	if light != float64(f.issued) || decided != light || refused != 0 || shadowed != 0 {
		f.wr.fatalf("/metrics: %.0f challenges decided, %.0f of them light (the benchmark fetched %d); %.0f joins refused by the bot defence, %.0f shadowed",
			decided, light, f.issued, refused, shadowed)
	}
	return light
}

// refusals lists the contender's waitroom_challenge_refusals_total lines,
// to say why a run's joins were refused.
func (f *powFeed) refusals() string {
	var out []string
	for _, l := range strings.Split(f.wr.metrics(f.admin), "\n") {
		if strings.HasPrefix(l, "waitroom_challenge_refusals_total{") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}
