package main

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/waitroom/waitroom/bench/internal/promtext"
)

// placeResult is what one attempt at a queue place came to.
type placeResult struct {
	action string // light_pow, heavy_pow, captcha, shadow, block, refused, timeout, error
	detail string // the refusal's error code, or what went wrong
	real   bool   // a place in the real queue (joined, and not shadowed)
	priced bool   // the work was priced from the native hash rate, not solved
	cpu    time.Duration
	est    time.Duration // the priced part of cpu
	server string        // what the operator saw (decisions applied, join results)
	client string        // a page's client report (JSON) when the visit ended
}

// challengeAnswer is the part of GET {prefix}/api/challenge a bot reads.
type challengeAnswer struct {
	Action string `json:"action"`
	PoW    *struct {
		Token   string `json:"token"`
		Seed    string `json:"seed"`
		Bits    int    `json:"bits"`
		Puzzles int    `json:"puzzles"`
	} `json:"pow"`
}

// errorCode reads {"error": code} out of an API answer.
func errorCode(body []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	json.Unmarshal(body, &e)
	if e.Error == "" {
		return "?"
	}
	return e.Error
}

// work names the proof of work of bits by the example's bands.
func (b *bench) work(bits int) string {
	switch bits {
	case b.x.lightBits:
		return "light_pow"
	case b.x.heavyBits:
		return "heavy_pow"
	}
	return fmt.Sprintf("pow_%dbits", bits)
}

// refusal maps a join's error code to the band it shows.
func refusal(code string) string {
	switch {
	case code == "blocked":
		return "block"
	case strings.HasPrefix(code, "captcha_"):
		return "captcha"
	}
	return "refused"
}

// scriptedPlace is one bot's attempt at a place: GET the challenge with
// get, solve it natively with the agent, POST the join with post (extra:
// more fields of the join body, such as a copied "client" object).
func (b *bench) scriptedPlace(get, post client, solver *agent, extra map[string]json.RawMessage) placeResult {
	s0 := b.snapshot()
	r := b.scriptedSteps(get, post, solver, extra)
	return b.serverView(r, s0)
}

func (b *bench) scriptedSteps(get, post client, solver *agent, extra map[string]json.RawMessage) placeResult {
	st, body, err := get.do("GET", b.x.prefix+"/api/challenge?event="+url.QueryEscape(b.x.event), nil)
	switch {
	case err != nil:
		return placeResult{action: "error", detail: err.Error()}
	case st != 200:
		code := errorCode(body)
		return placeResult{action: refusal(code), detail: fmt.Sprintf("challenge %d %s", st, code)}
	}
	var c challengeAnswer
	if err := json.Unmarshal(body, &c); err != nil {
		return placeResult{action: "error", detail: "challenge: " + err.Error()}
	}
	join := map[string]any{"event": b.x.event, "return": b.x.landing}
	for k, v := range extra {
		join[k] = v
	}
	r := placeResult{action: "none"}
	switch {
	case c.Action == "captcha":
		// No CAPTCHA farm: the bot tries the join without a token.
		r.action = "captcha"
	case c.Action == "pow" && c.PoW != nil:
		r.action = b.work(c.PoW.Bits)
		expected := float64(c.PoW.Puzzles) * math.Exp2(float64(c.PoW.Bits)) / b.rate
		if time.Duration(expected*float64(time.Second)) > *maxSolve {
			r.priced, r.real = true, true
			r.est = time.Duration(expected * float64(time.Second))
			r.detail = fmt.Sprintf("priced at %.1f CPU-s, not solved", expected)
			return r
		}
		resp, err := solver.call(agentReq{Op: "solve", Seed: c.PoW.Seed, Bits: c.PoW.Bits, Puzzles: c.PoW.Puzzles})
		if err != nil || resp.Error != "" {
			return placeResult{action: "error", detail: fmt.Sprintf("solve: %v %s", err, resp.Error)}
		}
		join["pow"] = map[string]any{"token": c.PoW.Token, "nonces": resp.Nonces}
	}
	jb, _ := json.Marshal(join)
	st, body, err = post.do("POST", b.x.prefix+"/api/join", jb)
	switch {
	case err != nil:
		r.action, r.detail = "error", err.Error()
	case st == 200:
		r.real = r.action != "captcha"
	default:
		code := errorCode(body)
		if r.action != "captcha" {
			r.action = refusal(code)
		}
		r.detail = fmt.Sprintf("join %d %s", st, code)
	}
	return r
}

// snap is what the operator's /metrics say of the event.
type snap struct {
	applied map[string]float64 // decisions by the action applied
	joins   map[string]float64 // joins by result
}

func (b *bench) snapshot() snap {
	text := b.metrics()
	s := snap{applied: map[string]float64{}, joins: map[string]float64{}}
	for _, a := range []string{"light_pow", "heavy_pow", "captcha", "shadow", "block"} {
		s.applied[a] = promtext.Sum(text, "waitroom_challenge_decisions_total", "event="+b.x.event, "applied="+a)
	}
	for _, j := range []string{"joined", "shadowed", "rejoined", "refused", "scheduled"} {
		s.joins[j] = promtext.Sum(text, "waitroom_joins_total", "event="+b.x.event, "result="+j)
	}
	return s
}

// serverView adds what the operator saw since s0: the decisions applied
// and the joins' results. A shadowed join looks like any other to the
// visitor; only here is it a shadow place.
func (b *bench) serverView(r placeResult, s0 snap) placeResult {
	s1 := b.snapshot()
	var parts []string
	for _, a := range []string{"light_pow", "heavy_pow", "captcha", "shadow", "block"} {
		if d := s1.applied[a] - s0.applied[a]; d > 0 {
			parts = append(parts, fmt.Sprintf("%s×%.0f", a, d))
		}
	}
	for _, j := range []string{"joined", "shadowed", "rejoined", "refused", "scheduled"} {
		if d := s1.joins[j] - s0.joins[j]; d > 0 {
			parts = append(parts, fmt.Sprintf("join:%s×%.0f", j, d))
		}
	}
	r.server = strings.Join(parts, " ")
	// Priced work sends no join: the decision applied to the challenge
	// is then the witness of a shadow place.
	if s1.joins["shadowed"] > s0.joins["shadowed"] || r.priced && s1.applied["shadow"] > s0.applied["shadow"] {
		r.action, r.real = "shadow", false
	}
	return r
}

// pagePlace is one visit of the real waiting-room page in a fresh browser
// context of br: from opening the tab until the page's join is answered
// (or the page is stuck at a CAPTCHA or a block), with the browser's CPU
// time over that span.
func (b *bench) pagePlace(br *browser) placeResult {
	s0 := b.snapshot()
	c0 := br.cpu()
	r := b.pageSteps(br)
	r.cpu = br.cpu() - c0 + r.est
	return b.serverView(r, s0)
}

func (b *bench) pageSteps(br *browser) (r placeResult) {
	t, err := br.newTab(b.x.prefix + "/api/")
	if err != nil {
		return placeResult{action: "error", detail: err.Error()}
	}
	defer t.close()
	defer func() { r.client = t.clientReport() }()
	if err := t.navigate(b.base + b.x.landing); err != nil {
		return placeResult{action: "error", detail: "navigate: " + err.Error()}
	}
	r = placeResult{action: "none"}
	deadline := time.After(*pageTimeout)
	fails := 0
	for {
		select {
		case s := <-t.done:
			body := []byte(t.body(s))
			switch {
			case strings.Contains(s.url, "/api/challenge"):
				if s.status != 200 {
					code := errorCode(body)
					if code == "blocked" {
						return placeResult{action: "block", detail: fmt.Sprintf("challenge %d %s", s.status, code)}
					}
					r.detail = fmt.Sprintf("challenge %d %s", s.status, code)
					continue
				}
				var c challengeAnswer
				json.Unmarshal(body, &c)
				switch {
				case c.Action == "captcha":
					return placeResult{action: "captcha", detail: b.widgetShown(t)}
				case c.Action == "pow" && c.PoW != nil:
					r.action = b.work(c.PoW.Bits)
					// Work above -max-solve at the browser's measured
					// rate is priced, not waited for (the heavy work
					// takes a browser minutes); the tab is closed.
					expected := float64(c.PoW.Puzzles) * math.Exp2(float64(c.PoW.Bits))
					if b.browserRate > 0 && time.Duration(expected/b.browserRate*float64(time.Second)) > *maxSolve {
						r.priced, r.real = true, true
						r.est = time.Duration(expected / b.browserRate * float64(time.Second))
						r.detail = fmt.Sprintf("priced at %.1f CPU-s at the browser's rate, not waited for", r.est.Seconds())
						return r
					}
				}
			case strings.Contains(s.url, "/api/join"):
				if s.status == 200 {
					r.real = true
					return r
				}
				code := errorCode(body)
				r.detail = fmt.Sprintf("join %d %s", s.status, code)
				if a := refusal(code); a != "refused" {
					r.action = a
					return r
				}
				// The page fetches a new challenge up to three times.
				if fails++; fails > 3 {
					r.action = "refused"
					return r
				}
			}
		case <-deadline:
			r.detail = fmt.Sprintf("no join within %s (%s)", *pageTimeout, r.action)
			r.action = "timeout"
			return r
		}
	}
}

// tabClient sends a bot's requests from a page with fetch, as the page's
// own script would.
type tabClient struct{ t *tab }

func (c tabClient) do(method, path string, body []byte) (int, []byte, error) {
	return c.t.fetch(method, path, body)
}
func (c tabClient) close() time.Duration { return 0 }

// widgetShown waits a few seconds for the page to render the CAPTCHA
// stub's widget, and says whether it did.
func (b *bench) widgetShown(t *tab) string {
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if v, _ := t.eval(`String(!!document.body && document.body.innerText.indexOf("benchmark stub") >= 0)`); v == "true" {
			return "the page shows the CAPTCHA widget"
		}
	}
	return "the page did not show the CAPTCHA widget within 5s"
}
