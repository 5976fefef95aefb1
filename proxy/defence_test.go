package proxy

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/bits"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/challenge/memstore"
)

// chromeHeaders are the headers a real Chrome's fetch() sends with a join,
// in its order.
var chromeHeaders = []string{
	"sec-ch-ua", `"Chromium";v="131", "Not_A Brand";v="24"`,
	"sec-ch-ua-mobile", "?0",
	"sec-ch-ua-platform", `"Linux"`,
	"Accept", "application/json",
	"Sec-Fetch-Site", "same-origin",
	"Sec-Fetch-Mode", "cors",
	"Sec-Fetch-Dest", "empty",
	"Accept-Encoding", "gzip, deflate, br, zstd",
	"Accept-Language", "en-US,en;q=0.9",
}

const chromeUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

// withDefence turns the bot defence on for "show" with bands b and the
// headers signal at weight 100, and small work so tests solve it fast.
// Go's HTTP client sends headers in its own order, which the headers
// signal finds unusual for Chrome (0.6, so 60 points): the bands of these
// tests start the heavy work above that. Real Chromium is scored in
// internal/app's browser test.
func withDefence(t testing.TB, b challenge.Bands) rigOption {
	return func(o *Options) {
		guard := memstore.New(memstore.Options{})
		t.Cleanup(func() { guard.Close() })
		pow, err := challenge.NewPoW([]byte(testSecret), guard)
		if err != nil {
			t.Fatal(err)
		}
		hs, err := challenge.NewHeaderSignal(challenge.HeaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sc, err := challenge.NewScorer([]challenge.WeightedSignal{{Name: "headers", Weight: 100, Signal: hs}}, challenge.ScorerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		o.Defence = &Defence{PoW: pow, Scorer: sc}
		for i := range o.Events {
			o.Events[i].Challenge = &EventChallenge{Policy: challenge.Policy{Bands: b},
				Light: Work{Bits: 4, Puzzles: 4}, Heavy: Work{Bits: 6, Puzzles: 4}}
		}
	}
}

type challengeAnswer struct {
	Event  string `json:"event"`
	Action string `json:"action"`
	PoW    *struct {
		Token     string `json:"token"`
		Seed      string `json:"seed"`
		Bits      uint8  `json:"bits"`
		Puzzles   uint8  `json:"puzzles"`
		ExpiresAt string `json:"expires_at"`
	} `json:"pow"`
}

func getChallenge(t *testing.T, r *rig, v *visitor, event string, headers ...string) (challengeAnswer, response) {
	t.Helper()
	res := v.do(t, "GET", r.url+"/_wr/api/challenge?event="+event, "", headers...)
	var a challengeAnswer
	if res.status == 200 {
		if err := json.Unmarshal([]byte(res.body), &a); err != nil {
			t.Fatalf("challenge JSON %q: %v", res.body, err)
		}
	}
	return a, res
}

// solve returns the join body carrying a's solution.
func solve(t *testing.T, a challengeAnswer, event string) string {
	t.Helper()
	var seed [16]byte
	if _, err := hex.Decode(seed[:], []byte(a.PoW.Seed)); err != nil {
		t.Fatal(err)
	}
	nonces := challenge.Solve(seed, a.PoW.Bits, a.PoW.Puzzles)
	b, _ := json.Marshal(map[string]any{"event": event, "pow": map[string]any{"token": a.PoW.Token, "nonces": nonces}})
	return string(b)
}

func TestChallengeOffNeedsNothing(t *testing.T) {
	r := newRig(t)
	v := newVisitor(t, "curl/8.5.0")
	a, res := getChallenge(t, r, v, "show")
	if res.status != 200 || a.Action != "none" || a.PoW != nil {
		t.Fatalf("challenge with the defence off: %d %s", res.status, res.body)
	}
	if res := v.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`); res.status != 200 {
		t.Fatalf("join: %d %s", res.status, res.body)
	}
}

func TestChallengeJoin(t *testing.T) {
	r := newRig(t, withDefence(t, challenge.Bands{HeavyPoW: 70, Block: 95}))
	browser := newVisitor(t, chromeUA)
	a, res := getChallenge(t, r, browser, "show", chromeHeaders...)
	if res.status != 200 || a.Action != "pow" || a.PoW == nil || a.PoW.Bits != 4 || a.PoW.Puzzles != 4 || len(a.PoW.Seed) != 32 {
		t.Fatalf("a browser's challenge: %d %s", res.status, res.body)
	}
	if cc := res.header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("Cache-Control %q", cc)
	}
	body := solve(t, a, "show")

	// Without a solution, or with a broken one, nobody joins.
	for name, b := range map[string]string{
		"no solution":   `{"event":"show"}`,
		"wrong nonces":  unsolved(t, a),
		"too few":       fmt.Sprintf(`{"event":"show","pow":{"token":%q,"nonces":[0]}}`, a.PoW.Token),
		"forged token":  strings.Replace(body, a.PoW.Token[:8], "AAAAAAAA", 1),
		"not an object": `{"event":"show","pow":"x"}`,
		"text nonces":   fmt.Sprintf(`{"event":"show","pow":{"token":%q,"nonces":["1"]}}`, a.PoW.Token),
		"unknown field": strings.Replace(body, `"nonces"`, `"extra":1,"nonces"`, 1),
	} {
		res := browser.do(t, "POST", r.url+"/_wr/api/join", b, chromeHeaders...)
		if res.status != 403 && res.status != 400 || !strings.Contains(res.body, `"error"`) || strings.Contains(res.body, "challenge:") {
			t.Errorf("%s: %d %s", name, res.status, res.body)
		}
		if browser.cookie(r.url, "wr_ticket_show") != "" {
			t.Fatalf("%s: a ticket was set", name)
		}
	}

	res = browser.do(t, "POST", r.url+"/_wr/api/join", body, chromeHeaders...)
	if res.status != 200 || browser.cookie(r.url, "wr_ticket_show") == "" {
		t.Fatalf("join with the solution: %d %s", res.status, res.body)
	}
	// The same solution again, from another browser on the same device.
	other := newVisitor(t, chromeUA)
	res = other.do(t, "POST", r.url+"/_wr/api/join", body, chromeHeaders...)
	if res.status != 409 || !strings.Contains(res.body, "challenge_used") {
		t.Fatalf("a replayed solution: %d %s", res.status, res.body)
	}
	// On another device (another User-Agent) it is not valid at all.
	a2, _ := getChallenge(t, r, other, "show", chromeHeaders...)
	moved := newVisitor(t, strings.Replace(chromeUA, "131", "130", 1))
	res = moved.do(t, "POST", r.url+"/_wr/api/join", solve(t, a2, "show"), chromeHeaders...)
	if res.status != 403 || !strings.Contains(res.body, "challenge_invalid") {
		t.Fatalf("a solution from another device: %d %s", res.status, res.body)
	}
	// For another event it is not valid either.
	res = other.do(t, "POST", r.url+"/_wr/api/join", solve(t, a2, "other"), chromeHeaders...)
	if res.status != 403 || !strings.Contains(res.body, "challenge_invalid") {
		t.Fatalf("a solution for another event: %d %s", res.status, res.body)
	}
	// Still good for its own.
	if res := other.do(t, "POST", r.url+"/_wr/api/join", solve(t, a2, "show"), chromeHeaders...); res.status != 200 {
		t.Fatalf("the solution for its own event: %d %s", res.status, res.body)
	}
	if n := counterValue(t, r.reg, "waitroom_challenge_refusals_total", map[string]string{"event": "show", "reason": "replayed"}); n != 1 {
		t.Fatalf("replayed refusals counted %v", n)
	}
}

func TestChallengeBands(t *testing.T) {
	r := newRig(t, withDefence(t, challenge.Bands{HeavyPoW: 70}))
	// A tool scores high enough for the heavy work...
	tool := newVisitor(t, "python-requests/2.32.3")
	a, res := getChallenge(t, r, tool, "show")
	if res.status != 200 || a.Action != "pow" || a.PoW.Bits != 6 {
		t.Fatalf("a tool's challenge: %d %s", res.status, res.body)
	}
	// ... and with a block band it is blocked outright.
	r2 := newRig(t, withDefence(t, challenge.Bands{HeavyPoW: 70, Block: 95}))
	_, res = getChallenge(t, r2, tool, "show")
	if res.status != 403 || !strings.Contains(res.body, `"blocked"`) {
		t.Fatalf("a blocked request: %d %s", res.status, res.body)
	}
}

func TestShadowQueue(t *testing.T) {
	r := newRig(t, withDefence(t, challenge.Bands{HeavyPoW: 70, Shadow: 90}))
	bot := newVisitor(t, "python-requests/2.32.3")
	a, res := getChallenge(t, r, bot, "show")
	if res.status != 200 || a.Action != "pow" {
		t.Fatalf("the shadowed bot is not told: %d %s", res.status, res.body)
	}
	res = bot.do(t, "POST", r.url+"/_wr/api/join", solve(t, a, "show"))
	st := decodeStatus(t, res)
	if st.Status != "prequeue" || bot.cookie(r.url, "wr_ticket_show") == "" {
		t.Fatalf("shadow join: %+v", st)
	}
	if n := counterValue(t, r.reg, "waitroom_joins_total", map[string]string{"event": "show", "result": "shadowed"}); n != 1 {
		t.Fatalf("shadowed joins %v", n)
	}
	// A real browser joins behind it and is admitted; the bot never is.
	browser := newVisitor(t, chromeUA)
	ab, _ := getChallenge(t, r, browser, "show", chromeHeaders...)
	if res := browser.do(t, "POST", r.url+"/_wr/api/join", solve(t, ab, "show"), chromeHeaders...); res.status != 200 {
		t.Fatalf("browser join: %d %s", res.status, res.body)
	}
	for s := 11; s < 40; s += 2 {
		r.tick(t, secs(s))
		browser.do(t, "GET", r.url+"/_wr/api/status?event=show", "", chromeHeaders...)
		st := decodeStatus(t, bot.do(t, "GET", r.url+"/_wr/api/status?event=show", ""))
		if st.Status == "admitted" || bot.cookie(r.url, "wr_pass_show") != "" {
			t.Fatalf("the shadowed bot was admitted: %+v", st)
		}
	}
	if browser.cookie(r.url, "wr_pass_show") == "" {
		t.Fatal("the browser was not admitted")
	}
	// Its turn came and went: it was told to wait, like a late visitor.
	st = decodeStatus(t, bot.do(t, "GET", r.url+"/_wr/api/status?event=show", ""))
	if st.Status != "waiting" || st.Position == nil || *st.Position != 0 {
		t.Fatalf("the shadowed bot's status: %+v", st)
	}
}

func TestDryRunAppliesOnlyLightWork(t *testing.T) {
	r := newRig(t, withDefence(t, challenge.Bands{Block: 1}), func(o *Options) { o.Events[0].Challenge.Policy.DryRun = true })
	a, res := getChallenge(t, r, newVisitor(t, ""), "show")
	if res.status != 200 || a.Action != "pow" || a.PoW.Bits != 4 {
		t.Fatalf("dry run: %d %s", res.status, res.body)
	}
	if n := counterValue(t, r.reg, "waitroom_challenge_decisions_total", map[string]string{"event": "show", "action": "block", "applied": "light_pow"}); n != 1 {
		t.Fatalf("dry-run decisions %v", n)
	}
}

// unsolved is a join body for a whose first nonce does not solve its
// sub-puzzle.
func unsolved(t *testing.T, a challengeAnswer) string {
	t.Helper()
	var msg [28]byte
	if _, err := hex.Decode(msg[:16], []byte(a.PoW.Seed)); err != nil {
		t.Fatal(err)
	}
	var seed [16]byte
	copy(seed[:], msg[:16])
	nonces := challenge.Solve(seed, a.PoW.Bits, a.PoW.Puzzles)
	for n := uint64(0); ; n++ {
		binary.BigEndian.PutUint64(msg[20:], n)
		sum := sha256.Sum256(msg[:])
		if bits.LeadingZeros32(binary.BigEndian.Uint32(sum[:4])) < int(a.PoW.Bits) {
			nonces[0] = n
			break
		}
	}
	b, _ := json.Marshal(map[string]any{"event": "show", "pow": map[string]any{"token": a.PoW.Token, "nonces": nonces}})
	return string(b)
}
