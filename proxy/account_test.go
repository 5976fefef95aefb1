package proxy

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/proxy/identity"
)

var identitySecret = []byte("identity-secret-0123456789abcdefgh")

// withIdentity reads a signed identity from the shop_id cookie, and sets
// the show's identity mode.
func withIdentity(mode identity.Mode, loginURL string) rigOption {
	return func(o *Options) {
		v, err := identity.New(identity.Options{Cookie: "shop_id", Secret: identitySecret})
		if err != nil {
			panic(err)
		}
		o.Identity = v
		o.Events[0].Identity, o.Events[0].LoginURL = mode, loginURL
	}
}

// apiErr decodes an error answer.
func apiErr(t *testing.T, r response) (code, loginURL string) {
	t.Helper()
	var e struct {
		Error    string `json:"error"`
		Message  string `json:"message"`
		LoginURL string `json:"login_url"`
	}
	if err := json.Unmarshal([]byte(r.body), &e); err != nil || e.Message == "" {
		t.Fatalf("error body %q: %v", r.body, err)
	}
	return e.Error, e.LoginURL
}

// TestJoinOnePlacePerAccount: with identity required, a join without a
// valid identity is refused with 401 and the login URL; two browsers of
// one account get one place, a third account another.
func TestJoinOnePlacePerAccount(t *testing.T) {
	r := newRig(t, withIdentity(identity.Required, "/login?next=/show/"))
	idCookie := func(account string, exp time.Time) string {
		return "shop_id=" + admission.MakeIdentity(identitySecret, account, exp)
	}
	const join = `{"event":"show"}`
	anon := newVisitor(t, "Mozilla/5.0 anon")
	for _, tc := range []struct {
		name, cookie, code string
	}{
		{"no identity", "", "login_required"},
		{"forged", "shop_id=" + admission.MakeIdentity([]byte("another-secret-0123456789abcdefgh"), "alice", t0.Add(time.Hour)), "identity_invalid"},
		{"expired", idCookie("alice", t0), "identity_invalid"},
		{"garbage", "shop_id=a.b.c", "identity_invalid"},
	} {
		res := anon.do(t, "POST", r.url+"/_wr/api/join", join, "Cookie", tc.cookie)
		if code, login := apiErr(t, res); res.status != http.StatusUnauthorized || code != tc.code || login != "/login?next=/show/" {
			t.Fatalf("%s: %d %s", tc.name, res.status, res.body)
		}
		if anon.cookie(r.url, "wr_ticket_show") != "" {
			t.Fatalf("%s: a ticket was set", tc.name)
		}
	}
	alice := idCookie("alice", t0.Add(time.Hour))
	phone, laptop := newVisitor(t, "Mozilla/5.0 phone"), newVisitor(t, "Mozilla/5.0 laptop")
	first := decodeStatus(t, phone.do(t, "POST", r.url+"/_wr/api/join", join, "Cookie", alice))
	second := decodeStatus(t, laptop.do(t, "POST", r.url+"/_wr/api/join", join, "Cookie", alice))
	bob := decodeStatus(t, newVisitor(t, "Mozilla/5.0 bob").do(t, "POST", r.url+"/_wr/api/join", join, "Cookie", idCookie("bob", t0.Add(time.Hour))))
	if first.Visitor == "" || second.Visitor != first.Visitor || bob.Visitor == first.Visitor {
		t.Fatalf("visitors: alice's phone %q, laptop %q, bob %q", first.Visitor, second.Visitor, bob.Visitor)
	}
	if phone.cookie(r.url, "wr_ticket_show") == "" || laptop.cookie(r.url, "wr_ticket_show") == "" {
		t.Fatal("a device of the account has no ticket")
	}
	// Each device's ticket is its own (bound to its user agent), for
	// the one place: both see the same position after the draw.
	r.tick(t, 12*time.Second)
	r.tick(t, 13*time.Second)
	a := decodeStatus(t, phone.do(t, "GET", r.url+"/_wr/api/status?event=show", ""))
	b := decodeStatus(t, laptop.do(t, "GET", r.url+"/_wr/api/status?event=show", ""))
	if a.Visitor != b.Visitor || (a.Position == nil) != (b.Position == nil) || (a.Position != nil && *a.Position != *b.Position) || a.Status != b.Status {
		t.Fatalf("alice's devices after the draw: %+v / %+v", a, b)
	}
	if f := r.engine.Figures("show").Lanes[admission.PublicLane]; f.Drawn != 2 {
		t.Fatalf("drawn %d; want 2 (alice once, bob)", f.Drawn)
	}
	for result, want := range map[string]float64{"joined": 2, "deduplicated": 1, "login_required": 4} {
		if n := counterValue(t, r.reg, "waitroom_joins_total", map[string]string{"event": "show", "result": result}); n != want {
			t.Errorf("joins %s = %v; want %v", result, n, want)
		}
	}
	for result, want := range map[string]float64{"verified": 3, "missing": 1, "invalid": 3} {
		if n := counterValue(t, r.reg, "waitroom_identity_total", map[string]string{"event": "show", "result": result}); n != want {
			t.Errorf("identity %s = %v; want %v", result, n, want)
		}
	}
}

// TestJoinIdentityOptional: with identity optional, a join without an
// identity (or with one that does not verify) is anonymous, a new place
// each time; with one, the account's place.
func TestJoinIdentityOptional(t *testing.T) {
	r := newRig(t, withIdentity(identity.Optional, ""))
	const join = `{"event":"show"}`
	a := decodeStatus(t, newVisitor(t, "ua-1").do(t, "POST", r.url+"/_wr/api/join", join))
	b := decodeStatus(t, newVisitor(t, "ua-2").do(t, "POST", r.url+"/_wr/api/join", join, "Cookie", "shop_id=bad"))
	if a.Visitor == b.Visitor {
		t.Fatal("two anonymous joins share a place")
	}
	c := "shop_id=" + admission.MakeIdentity(identitySecret, "carol", t0.Add(time.Hour))
	x := decodeStatus(t, newVisitor(t, "ua-3").do(t, "POST", r.url+"/_wr/api/join", join, "Cookie", c))
	y := decodeStatus(t, newVisitor(t, "ua-4").do(t, "POST", r.url+"/_wr/api/join", join, "Cookie", c))
	if x.Visitor != y.Visitor || x.Visitor == a.Visitor {
		t.Fatalf("carol's two joins: %q, %q", x.Visitor, y.Visitor)
	}
	// Required without a login URL: no login_url in the answer.
	r2 := newRig(t, withIdentity(identity.Required, ""))
	res := newVisitor(t, "ua").do(t, "POST", r2.url+"/_wr/api/join", join)
	if code, login := apiErr(t, res); res.status != 401 || code != "login_required" || login != "" || strings.Contains(res.body, "login_url") {
		t.Fatalf("required without a login URL: %d %s", res.status, res.body)
	}
}

// TestNewRefusesIdentityWithoutVerifier: an event that reads the
// identity needs a verifier.
func TestNewRefusesIdentityWithoutVerifier(t *testing.T) {
	r := newRig(t)
	o := r.p.opts
	o.Registerer = nil
	o.Events = []Event{{ID: "show", Identity: identity.Required}}
	if _, err := New(o); err == nil || !strings.Contains(err.Error(), "identity verifier") {
		t.Fatalf("New: %v", err)
	}
	o.Events = []Event{{ID: "show", Identity: "sometimes"}}
	if _, err := New(o); err == nil {
		t.Fatal("New accepted identity sometimes")
	}
}

// TestNoJSJoinNeedsLogin: the no-JS join form of an event that requires
// an identity sends a browser without one to the login URL; with one, it
// joins into the account's place.
func TestNoJSJoinNeedsLogin(t *testing.T) {
	r := newRig(t, withIdentity(identity.Required, "/login?next=/show/"))
	res := r.formPost(t, newVisitor(t, "ua"), "event=show")
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/login?next=/show/" {
		t.Fatalf("no-JS join without a login: %d %v %s", res.status, res.header, res.body)
	}
	c := "shop_id=" + admission.MakeIdentity(identitySecret, "dora", t0.Add(time.Hour))
	js := decodeStatus(t, newVisitor(t, "ua-1").do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`, "Cookie", c))
	v := newVisitor(t, "ua-2")
	if res := r.formPost(t, v, "event=show", "Cookie", c); res.status != http.StatusSeeOther ||
		!strings.HasPrefix(res.header.Get("Location"), "/_wr/nojs/status") {
		t.Fatalf("no-JS join with a login: %d %v", res.status, res.header)
	}
	if st := decodeStatus(t, v.do(t, "GET", r.url+"/_wr/api/status?event=show", "")); st.Visitor != js.Visitor {
		t.Fatalf("the no-JS browser's place %q, the account's %q", st.Visitor, js.Visitor)
	}
}
