package proxy

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

func newCode(t testing.TB) string {
	t.Helper()
	var id [admission.ShortInviteIDLen]byte
	rand.Read(id[:])
	return admission.MakeShortInvite(testInviteSecret, "show", id)
}

func joinWith(t testing.TB, r *rig, v *visitor, invite string) response {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"event": "show", "invite": invite})
	return v.do(t, "POST", r.url+"/_wr/api/join", string(b))
}

// TestInviteJoin: a code typed any which way puts its visitor in the
// presale lane; a second visitor with it is told it was used; the first
// one joining again keeps their place. The status tells the owner their
// visitor id and where their draw page is.
func TestInviteJoin(t *testing.T) {
	r := newRig(t)
	code := newCode(t)
	fan := newVisitor(t, "fan")
	got := joinWith(t, r, fan, "  "+strings.ToLower(strings.ReplaceAll(code, "-", " "))+"\n")
	st := decodeStatus(t, got)
	if st.Lane != "presale" || st.DrawPage != "/_wr/draw/show/0?lane=presale" || st.TrancheSeconds != 5 || len(st.Visitor) != 32 {
		t.Fatalf("join with a code: %s", got.body)
	}
	again := decodeStatus(t, joinWith(t, r, fan, code))
	if again.Visitor != st.Visitor || again.Lane != "presale" {
		t.Fatalf("the same visitor again: %+v, was %+v", again, st)
	}
	other := newVisitor(t, "other")
	if got := joinWith(t, r, other, code); got.status != 409 || !strings.Contains(got.body, `"error":"invite_used"`) {
		t.Fatalf("a second visitor with the code: %d %s", got.status, got.body)
	}
	// The second visitor, in the public queue, moves to the presale with
	// a code of their own.
	pub := decodeStatus(t, other.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`))
	moved := decodeStatus(t, joinWith(t, r, other, newCode(t)))
	if pub.Lane != "public" || moved.Lane != "presale" || moved.Visitor == pub.Visitor {
		t.Fatalf("public %+v, then with a code %+v", pub, moved)
	}
	if n := counterValue(t, r.reg, "waitroom_invite_codes_total", map[string]string{"event": "show", "lane": "presale", "result": "redeemed"}); n != 3 {
		t.Errorf("redeemed counter %v, want 3", n)
	}
}

// TestWrongInvitesRateLimited: wrong codes spend the client's budget;
// then every code is refused unread (429, Retry-After), even a right
// one, which stays unused; the budget refills with time.
func TestWrongInvitesRateLimited(t *testing.T) {
	r := newRig(t)
	bot := newVisitor(t, "bot")
	burst := DefaultWrongInvites.PerIP.Burst
	for i := range burst {
		wrong := strings.Repeat(strconv.Itoa(i%10), 4) + "-AAAA-AAAA-AAAA-AAAA-AAAA"
		if got := joinWith(t, r, bot, wrong); got.status != 403 || !strings.Contains(got.body, `"error":"not_allowed"`) {
			t.Fatalf("wrong code %d: %d %s", i, got.status, got.body)
		}
	}
	good := newCode(t)
	got := joinWith(t, r, bot, good)
	if got.status != 429 || !strings.Contains(got.body, `"error":"too_many_codes"`) {
		t.Fatalf("a code after %d wrong ones: %d %s", burst, got.status, got.body)
	}
	ra, err := strconv.Atoi(got.header.Get("Retry-After"))
	if err != nil || ra < 1 || ra > 60 {
		t.Fatalf("Retry-After %q", got.header.Get("Retry-After"))
	}
	// A join without a code is not a guess: it goes through.
	if got := bot.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`); got.status != 200 {
		t.Fatalf("a join without a code: %d %s", got.status, got.body)
	}
	if n := counterValue(t, r.reg, "waitroom_invite_codes_total", map[string]string{"result": "limited"}); n != 1 {
		t.Errorf("limited counter %v", n)
	}
	r.clk.Add(time.Duration(ra) * time.Second)
	// The right code was refused unread: it is still good.
	st := decodeStatus(t, joinWith(t, r, newVisitor(t, "fan"), good))
	if st.Lane != "presale" {
		t.Fatalf("the code refused while limited does not work later: %+v", st)
	}
}

// TestDrawPage: {prefix}/draw/{event}/{tranche} is the event's draw page
// with the pages' policy; anything else there is a JSON 404.
func TestDrawPage(t *testing.T) {
	r := newRig(t)
	v := newVisitor(t, "reader")
	got := v.do(t, "GET", r.url+"/_wr/draw/show/0", "", "Accept-Language", "de")
	if got.status != 200 || !strings.Contains(got.header.Get("Content-Type"), "text/html") ||
		got.header.Get("Content-Security-Policy") != string(r.p.csp) || !strings.Contains(got.body, "Auslosung prüfen") ||
		!strings.Contains(got.body, "The Show") {
		t.Fatalf("draw page: %d %v\n%.300s", got.status, got.header, got.body)
	}
	for _, path := range []string{"/_wr/draw/nope/0", "/_wr/draw/show/x", "/_wr/draw/show/", "/_wr/draw/show/0/1",
		"/_wr/draw/show/1234567890", "/_wr/draw/", "/_wr/draw//0", "/_wr/draw/show/01"} {
		if got := v.do(t, "GET", r.url+path, ""); got.status != 404 || !strings.Contains(got.body, `"error":"not_found"`) {
			t.Errorf("%s: %d %s", path, got.status, got.body)
		}
	}
	if got := v.do(t, "POST", r.url+"/_wr/draw/show/0", "x"); got.status != 405 {
		t.Errorf("POST: %d", got.status)
	}
}

// TestAuditTimes: the audit says when the tranche opened and closed,
// since when its commitment is served, and when it was drawn.
func TestAuditTimes(t *testing.T) {
	r := newRig(t)
	v := newVisitor(t, "early")
	decodeStatus(t, v.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`))
	for d := 11 * time.Second; d < 14*time.Second; d += time.Second {
		r.tick(t, d)
	}
	var a struct {
		OpensAt, ClosesAt, CommittedFrom, DrawnAt *time.Time
		Commitment, Seed                          string
	}
	got := v.do(t, "GET", r.url+"/_wr/api/draws/show/0", "")
	if err := json.Unmarshal([]byte(strings.NewReplacer(`"opens_at"`, `"OpensAt"`, `"closes_at"`, `"ClosesAt"`,
		`"committed_from"`, `"CommittedFrom"`, `"drawn_at"`, `"DrawnAt"`).Replace(got.body)), &a); err != nil {
		t.Fatal(err)
	}
	if a.OpensAt != nil || a.ClosesAt == nil || !a.ClosesAt.Equal(t0.Add(10*time.Second)) ||
		a.CommittedFrom == nil || !a.CommittedFrom.Equal(t0.Add(-time.Hour)) || a.DrawnAt == nil || a.DrawnAt.Before(*a.ClosesAt) {
		t.Fatalf("audit times: %s", got.body)
	}
	seed, _ := hex.DecodeString(a.Seed)
	c := admission.Commitment(seed)
	if !bytes.Equal([]byte(hex.EncodeToString(c[:])), []byte(a.Commitment)) {
		t.Fatal("commitment")
	}
}

// FuzzDrawPath: the draw page's path parser never panics and accepts
// only an event without a slash and a tranche of digits.
func FuzzDrawPath(f *testing.F) {
	for _, s := range []string{"show/0", "show/12", "/0", "show/", "a/b/c", "show/-1", "show/1e3", strings.Repeat("x", 70) + "/1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ev, tranche, ok := parseDrawPath([]byte(s))
		if !ok {
			return
		}
		if len(ev) == 0 || len(ev) > 64 || bytes.IndexByte(ev, '/') >= 0 || tranche < 0 || string(ev)+"/"+strconv.Itoa(tranche) != s {
			t.Fatalf("parseDrawPath(%q) = %q, %d", s, ev, tranche)
		}
	})
}
