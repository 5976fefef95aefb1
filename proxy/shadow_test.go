package proxy

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/challenge"
)

// transcript is what one visitor saw: each answer's JSON, the cookies
// set, and the tokens they carried.
type transcript struct {
	name    string
	v       *visitor
	answers []map[string]any
	cookies [][]string // Set-Cookie lines of each answer
}

func (tr *transcript) record(t *testing.T, res response) map[string]any {
	t.Helper()
	if res.status != http.StatusOK {
		t.Fatalf("%s: %d %s", tr.name, res.status, res.body)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(res.body), &m); err != nil {
		t.Fatalf("%s: %v in %s", tr.name, err, res.body)
	}
	tr.answers = append(tr.answers, m)
	tr.cookies = append(tr.cookies, res.header.Values("Set-Cookie"))
	return m
}

// jwtParts decodes a token's header and claims.
func jwtParts(t *testing.T, tok string) (map[string]any, map[string]any) {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a JWT", tok)
	}
	var out [2]map[string]any
	for i := range out {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		d := json.NewDecoder(strings.NewReader(string(raw)))
		d.UseNumber()
		if err := d.Decode(&out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out[0], out[1]
}

// shape is a JSON object's keys with the type of each value: what is
// the same for every visitor.
func shape(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		keys = append(keys, fmt.Sprintf("%s:%T", k, v))
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

// cookieShape is a Set-Cookie line without its value.
func cookieShape(line string) string {
	name, rest, _ := strings.Cut(line, "=")
	_, attrs, _ := strings.Cut(rest, ";")
	return name + ";" + attrs
}

func claimNum(t *testing.T, tok string) int64 {
	t.Helper()
	_, c := jwtParts(t, tok)
	n, err := c["num"].(json.Number).Int64()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestShadowIndistinguishable follows two real visitors and a shadowed
// bot through a join, polls across their tranche's draw and admissions
// of the visitors ahead, and the public audit: the status JSON, the
// cookies, the tokens' structure and the audit differ only where the two
// real visitors' differ from each other.
func TestShadowIndistinguishable(t *testing.T) {
	r := newRig(t, withDefence(t, challenge.Bands{HeavyPoW: 70, Shadow: 90}))
	// A crowd in the pre-queue, ahead of everyone below.
	var crowd []admission.Ticket
	for range 600 {
		tk, _, err := r.engine.Join(t.Context(), "show", admission.JoinRequest{})
		if err != nil {
			t.Fatal(err)
		}
		crowd = append(crowd, tk)
	}
	r.tick(t, 11*time.Second) // the pre-queue is drawn; admission starts
	real1 := &transcript{name: "real 1", v: newVisitor(t, chromeUA)}
	real2 := &transcript{name: "real 2", v: newVisitor(t, chromeUA)}
	bot := &transcript{name: "shadowed", v: newVisitor(t, "python-requests/2.32.3")}
	all := []*transcript{real1, real2, bot}
	for _, tr := range all {
		var hs []string
		if tr != bot {
			hs = chromeHeaders
		}
		a, res := getChallenge(t, r, tr.v, "show", hs...)
		if res.status != 200 || a.PoW == nil {
			t.Fatalf("%s's challenge: %d %s", tr.name, res.status, res.body)
		}
		tr.record(t, tr.v.do(t, "POST", r.url+"/_wr/api/join", solve(t, a, "show"), hs...))
	}
	if n := counterValue(t, r.reg, "waitroom_joins_total", map[string]string{"event": "show", "result": "shadowed"}); n != 1 {
		t.Fatalf("shadowed joins %v, want the bot's", n)
	}
	botTicket := bot.v.cookie(r.url, "wr_ticket_show")
	_, claims := jwtParts(t, botTicket)
	vid, _ := admission.ParseVisitorID(claims["vid"].(string))
	if !r.engine.Shadowed("show", vid) {
		t.Fatal("the bot is not in the shadow queue")
	}

	// Polls before the draw, across it (the tranche joined at 11 s
	// closes at 15 s), and while the crowd ahead is admitted.
	for s := 12; s <= 20; s++ {
		r.tick(t, secs(s))
		for _, tk := range crowd {
			// The crowd comes for its passes, and with them to the site.
			if res, err := r.engine.Status(t.Context(), "show", tk); err == nil && res.Pass != nil {
				r.engine.NoteUse("show", res.Pass)
			}
		}
		for _, tr := range all {
			var hs []string
			if tr != bot {
				hs = chromeHeaders
			}
			tr.record(t, tr.v.do(t, "GET", r.url+"/_wr/api/status?event=show", "", hs...))
		}
	}
	serving := r.engine.Figures("show").Lanes["public"].Serving
	if serving < 300 || serving >= 601 {
		t.Fatalf("serving counter %d: the test wants admissions ahead of the three, none of them", serving)
	}

	for i := range real1.answers {
		a, b, s := real1.answers[i], real2.answers[i], bot.answers[i]
		// Same keys, same types, same status, same advice.
		if shape(s) != shape(a) || shape(a) != shape(b) {
			t.Fatalf("answer %d shapes differ:\nreal  %s\nreal  %s\nshadow %s", i, shape(a), shape(b), shape(s))
		}
		for _, k := range []string{"status", "refresh_seconds", "lane", "tranche", "reason", "redirect", "draw_at", "position_display"} {
			if fmt.Sprint(s[k]) != fmt.Sprint(a[k]) || fmt.Sprint(a[k]) != fmt.Sprint(b[k]) {
				t.Fatalf("answer %d: %s is %v, %v for the real visitors and %v for the shadowed one", i, k, a[k], b[k], s[k])
			}
		}
		// Cookies: set at the same answers, with the same names and
		// attributes.
		if len(bot.cookies[i]) != len(real1.cookies[i]) || len(real1.cookies[i]) != len(real2.cookies[i]) {
			t.Fatalf("answer %d sets cookies %v, %v and %v", i, real1.cookies[i], real2.cookies[i], bot.cookies[i])
		}
		for j := range real1.cookies[i] {
			if cookieShape(bot.cookies[i][j]) != cookieShape(real1.cookies[i][j]) {
				t.Fatalf("answer %d: cookie %q vs %q", i, real1.cookies[i][j], bot.cookies[i][j])
			}
		}
	}
	// The ticket was reissued with its number, like everyone's.
	if bot.v.cookie(r.url, "wr_ticket_show") == botTicket {
		t.Fatal("the shadowed visitor's ticket was never reissued")
	}
	last := len(real1.answers) - 1
	if real1.answers[last]["status"] != "waiting" {
		t.Fatalf("the last answers are %v, want waiting", real1.answers[last]["status"])
	}

	// Positions move as everyone's: number − position is one serving
	// counter for all three.
	var tokens [3]string
	for i, tr := range all {
		tokens[i] = tr.v.cookie(r.url, "wr_ticket_show")
	}
	ahead := map[int64]bool{}
	for i, tr := range all {
		pos, _ := tr.answers[last]["position"].(float64)
		ahead[claimNum(t, tokens[i])-int64(pos)] = true
	}
	if len(ahead) != 1 {
		t.Fatalf("number − position differs between visitors: %v", ahead)
	}
	first := map[string]float64{}
	for _, tr := range all {
		for _, a := range tr.answers {
			if a["status"] == "waiting" {
				first[tr.name] = a["position"].(float64)
				break
			}
		}
		if p := tr.answers[last]["position"].(float64); p >= first[tr.name] {
			t.Fatalf("%s's position did not move: %v then %v", tr.name, first[tr.name], p)
		}
	}

	// Tokens: the same header, the same claims of the same types.
	h1, c1 := jwtParts(t, tokens[0])
	_, c2 := jwtParts(t, tokens[1])
	hs, cs := jwtParts(t, tokens[2])
	if fmt.Sprint(hs) != fmt.Sprint(h1) || shape(cs) != shape(c1) || shape(c1) != shape(c2) {
		t.Fatalf("token structure differs:\n%v %s\n%v %s", h1, shape(c1), hs, shape(cs))
	}
	for _, k := range []string{"typ", "ev", "lane", "tr", "iat", "exp"} {
		if fmt.Sprint(cs[k]) != fmt.Sprint(c1[k]) {
			t.Fatalf("claim %s: real %v, shadowed %v", k, c1[k], cs[k])
		}
	}

	// The audit lists all three, in an order anyone can check.
	res := real1.v.do(t, "GET", r.url+"/_wr/api/draws/show/1", "")
	var audit struct {
		Commitment string   `json:"commitment"`
		Drawn      bool     `json:"drawn"`
		Seed       string   `json:"seed"`
		Hashes     []string `json:"hashes"`
	}
	if err := json.Unmarshal([]byte(res.body), &audit); err != nil || !audit.Drawn {
		t.Fatalf("audit: %d %s", res.status, res.body)
	}
	var commitment [32]byte
	hex.Decode(commitment[:], []byte(audit.Commitment))
	seed, _ := hex.DecodeString(audit.Seed)
	hashes := make([][32]byte, len(audit.Hashes))
	for i, h := range audit.Hashes {
		hex.Decode(hashes[i][:], []byte(h))
	}
	if !admission.CheckAudit(commitment, seed, hashes) {
		t.Fatal("the audit does not check out")
	}
	for i, tok := range tokens {
		_, c := jwtParts(t, tok)
		id, _ := hex.DecodeString(c["vid"].(string))
		sum := sha256.Sum256(id)
		if !slices.Contains(audit.Hashes, hex.EncodeToString(sum[:])) {
			t.Fatalf("%s is not in the audit", all[i].name)
		}
	}
}
