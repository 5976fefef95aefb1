package proxy

import (
	"crypto/sha256"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/proxy/httpguard"
)

// The JA4 fingerprints the tests' clients claim through the trusted
// front proxy's header.
const (
	ja4Browser = "t13d1516h2_8daaf6152771_02713d6af862"
	ja4Resumed = "t13d1517h2_8daaf6152771_b1ff8ab2d16f"
	ja4Script  = "t13d1311h1_e8f1e7e78f70_6bebaf5329ac"
)

// withFrontProxy trusts loopback as a front proxy that tells the client's
// address (X-Forwarded-For) and JA4 (X-Ja4).
func withFrontProxy(o *Options) {
	o.Trusted = httpguard.NewTrusted([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")})
	o.Defence.JA4Header = "X-Ja4"
}

// client is the headers of one client behind the front proxy.
func client(addr, ja4 string, extra ...string) []string {
	return append([]string{"X-Forwarded-For", addr, "X-Ja4", ja4}, extra...)
}

// without is headers less the header named name.
func without(headers []string, name string) []string {
	var out []string
	for i := 0; i+1 < len(headers); i += 2 {
		if !strings.EqualFold(headers[i], name) {
			out = append(out, headers[i], headers[i+1])
		}
	}
	return out
}

// TestChallengeBoundToWhatWasScored: a solved challenge is redeemed only
// by the client it was issued to — same address (an IPv6 address's /64),
// same JA4, same header fingerprint, same User-Agent — so a real browser
// cannot fetch challenges for a script to join with.
func TestChallengeBoundToWhatWasScored(t *testing.T) {
	r := newRig(t, withDefence(t, challenge.Bands{HeavyPoW: 70}), withFrontProxy)
	browser := newVisitor(t, chromeUA)
	for _, tc := range []struct {
		name         string
		fetch, join  []string
		ua           string
		wantAccepted bool
	}{
		{"another address", client("203.0.113.7", ja4Browser, chromeHeaders...),
			client("203.0.113.8", ja4Browser, chromeHeaders...), chromeUA, false},
		{"another TLS stack", client("203.0.113.7", ja4Browser, chromeHeaders...),
			client("203.0.113.7", ja4Script, chromeHeaders...), chromeUA, false},
		{"the same TLS stack, a resumed session", client("203.0.113.7", ja4Browser, chromeHeaders...),
			client("203.0.113.7", ja4Resumed, chromeHeaders...), chromeUA, true},
		{"another header set", client("203.0.113.7", ja4Browser, chromeHeaders...),
			client("203.0.113.7", ja4Browser, without(chromeHeaders, "Accept-Language")...), chromeUA, false},
		{"another client-hint brand list", client("203.0.113.7", ja4Browser, chromeHeaders...),
			client("203.0.113.7", ja4Browser, append(without(chromeHeaders, "sec-ch-ua"), "sec-ch-ua", `"Chromium";v="131"`)...), chromeUA, false},
		{"another User-Agent", client("203.0.113.7", ja4Browser, chromeHeaders...),
			client("203.0.113.7", ja4Browser, chromeHeaders...), strings.Replace(chromeUA, "131.0.0.0", "131.0.0.1", 1), false},
		{"another IPv6 network", client("2001:db8:1:2::7", ja4Browser, chromeHeaders...),
			client("2001:db8:1:3::7", ja4Browser, chromeHeaders...), chromeUA, false},
		{"the same IPv6 /64", client("2001:db8:1:2::7", ja4Browser, chromeHeaders...),
			client("2001:db8:1:2::8", ja4Browser, chromeHeaders...), chromeUA, true},
		{"the same client", client("203.0.113.7", ja4Browser, chromeHeaders...),
			client("203.0.113.7", ja4Browser, chromeHeaders...), chromeUA, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, res := getChallenge(t, r, browser, "show", tc.fetch...)
			if res.status != 200 || a.Action != "pow" {
				t.Fatalf("challenge: %d %s", res.status, res.body)
			}
			joiner := newVisitor(t, tc.ua)
			res = joiner.do(t, "POST", r.url+"/_wr/api/join", solve(t, a, "show"), tc.join...)
			if tc.wantAccepted {
				if res.status != 200 {
					t.Fatalf("the same client's join: %d %s", res.status, res.body)
				}
				return
			}
			// Refused as any invalid solution is: the client is not told
			// what did not match.
			if res.status != 403 || !strings.Contains(res.body, `"challenge_invalid"`) ||
				!strings.Contains(res.body, "the challenge solution is not valid") {
				t.Fatalf("a join from another client: %d %s", res.status, res.body)
			}
		})
	}
	if n := counterValue(t, r.reg, "waitroom_challenge_refusals_total", map[string]string{"event": "show", "reason": "binding"}); n != 6 {
		t.Fatalf("binding refusals counted %v, want 6", n)
	}
}

// TestProbingLearnsNothing: a client that once scored high is asked at
// least the heavy work for a while, whatever it sends next, so trying
// header combinations one after the other does not find the cheap one;
// clients with another address or another TLS stack are not touched; and
// a light challenge fetched before the client gave itself away is no
// longer enough to join with.
func TestProbingLearnsNothing(t *testing.T) {
	r := newRig(t, withDefence(t, challenge.Bands{HeavyPoW: 70, Captcha: 95}), withFrontProxy)
	fan := newVisitor(t, chromeUA)
	bot := newVisitor(t, "python-requests/2.32.3")
	const light, heavy = 4, 6
	bits := func(v *visitor, headers ...string) uint8 {
		t.Helper()
		a, res := getChallenge(t, r, v, "show", headers...)
		if res.status != 200 || a.Action != "pow" {
			t.Fatalf("challenge: %d %s", res.status, res.body)
		}
		if strings.Contains(res.body, "score") {
			t.Fatalf("the challenge answer tells a score: %s", res.body)
		}
		return a.PoW.Bits
	}
	probe := client("198.51.100.9", ja4Script, chromeHeaders...)
	early, _ := getChallenge(t, r, fan, "show", probe...)
	if early.PoW.Bits != light {
		t.Fatalf("a browser-like first request got %d bits, want the light %d", early.PoW.Bits, light)
	}
	// The script shows itself once...
	if b := bits(bot, client("198.51.100.9", ja4Script)...); b != heavy {
		t.Fatalf("a declared tool got %d bits, want the heavy %d", b, heavy)
	}
	// ...and every disguise it tries next from there gets the heavy work.
	for _, h := range [][]string{probe, without(probe, "Accept-Language"), without(probe, "sec-ch-ua")} {
		if b := bits(fan, h...); b != heavy {
			t.Fatalf("a probe after a suspicious request got %d bits, want the heavy %d", b, heavy)
		}
	}
	// Its light challenge from before no longer joins; a fresh one does.
	res := fan.do(t, "POST", r.url+"/_wr/api/join", solve(t, early, "show"), probe...)
	if res.status != 403 || !strings.Contains(res.body, `"challenge_invalid"`) {
		t.Fatalf("a light solution from a client now suspect: %d %s", res.status, res.body)
	}
	if n := counterValue(t, r.reg, "waitroom_challenge_refusals_total", map[string]string{"event": "show", "reason": "short"}); n != 1 {
		t.Fatalf("short refusals counted %v, want 1", n)
	}
	fresh, _ := getChallenge(t, r, fan, "show", probe...)
	if res := fan.do(t, "POST", r.url+"/_wr/api/join", solve(t, fresh, "show"), probe...); res.status != 200 {
		t.Fatalf("a fresh heavy solution: %d %s", res.status, res.body)
	}
	// Fans at the same address with a browser's TLS, or elsewhere with the
	// same TLS, are not touched; nor is the memory more than the heavy
	// work: it never asks a CAPTCHA or shadows by itself.
	other := newVisitor(t, chromeUA)
	if b := bits(other, client("198.51.100.9", ja4Browser, chromeHeaders...)...); b != light {
		t.Fatalf("a browser behind the same address got %d bits, want the light %d", b, light)
	}
	if b := bits(other, client("198.51.100.10", ja4Script, chromeHeaders...)...); b != light {
		t.Fatalf("another address got %d bits, want the light %d", b, light)
	}
}

func TestCarryCeiling(t *testing.T) {
	for _, tc := range []struct {
		b    challenge.Bands
		want int
	}{
		{challenge.DefaultBands(), challenge.DefaultCaptcha - 1},
		{challenge.Bands{HeavyPoW: 30, Shadow: 80}, 79},
		{challenge.Bands{HeavyPoW: 30}, 100},
		{challenge.Bands{Captcha: 60, Block: 95}, 0},
		{challenge.Bands{}, 0},
	} {
		if got := carryCeiling(tc.b); got != tc.want {
			t.Errorf("carryCeiling(%+v) = %d, want %d", tc.b, got, tc.want)
		}
	}
}

// TestPassBoundToTLSStack: with Binding.TLSStack a pass a browser earned
// fails from a client with another TLS stack, however alike its headers,
// and works on the browser's next connection, a resumed session.
func TestPassBoundToTLSStack(t *testing.T) {
	r := newRig(t, withDefence(t, challenge.Bands{HeavyPoW: 70}), withFrontProxy, func(o *Options) { o.Binding.TLSStack = true })
	v := newVisitor(t, chromeUA)
	from := client("203.0.113.7", ja4Browser, chromeHeaders...)
	a, res := getChallenge(t, r, v, "show", from...)
	if res.status != 200 {
		t.Fatalf("challenge: %d %s", res.status, res.body)
	}
	st := decodeStatus(t, v.do(t, "POST", r.url+"/_wr/api/join", solve(t, a, "show"), from...))
	for d := 11 * time.Second; st.Status != "admitted" && d < 20*time.Second; d += time.Second {
		r.tick(t, d)
		st = decodeStatus(t, v.do(t, "GET", r.url+"/_wr/api/status?event=show", "", from...))
	}
	if st.Status != "admitted" {
		t.Fatalf("never admitted: %+v", st)
	}
	for _, tc := range []struct {
		name string
		ja4  string
		pass bool
	}{
		{"the browser", ja4Browser, true},
		{"the browser, a resumed session", ja4Resumed, true},
		{"a script with the browser's headers", ja4Script, false},
		{"no JA4", "", false},
		{"the browser again", ja4Browser, true},
	} {
		got := v.do(t, "GET", r.url+"/show/x", "", client("203.0.113.7", tc.ja4, chromeHeaders...)...)
		if passed := got.body == "origin:/show/x"; passed != tc.pass {
			t.Errorf("%s: passed %v, want %v (%d %.80s)", tc.name, passed, tc.pass, got.status, got.body)
		}
	}
}

// TestChallengeBindingEncoding: challengeBinding hashes exactly what it
// hashed when it wrote through a sha256.Hash, so challenges issued by a
// replica before an upgrade still verify on one after it.
func TestChallengeBindingEncoding(t *testing.T) {
	hs := make([]challenge.Header, 0, len(chromeHeaders)/2+2)
	hs = append(hs, challenge.Header{Name: "Host", Value: "shop.example"}, challenge.Header{Name: "User-Agent", Value: chromeUA})
	for i := 0; i < len(chromeHeaders); i += 2 {
		hs = append(hs, challenge.Header{Name: chromeHeaders[i], Value: chromeHeaders[i+1]})
	}
	for _, r := range []*challenge.Request{
		{Headers: hs, JA4: ja4Browser, IP: netip.MustParseAddr("203.0.113.9")},
		{Headers: hs, JA4: "not a ja4", IP: netip.MustParseAddr("2001:db8::1:2:3:4")},
		{Headers: []challenge.Header{{Name: "User-Agent", Value: strings.Repeat("long ", 200)}}},
		{},
	} {
		h := sha256.New()
		h.Write([]byte("waitroom/challenge-binding/v2\x00"))
		ua, _ := r.Get("User-Agent")
		h.Write([]byte(ua))
		h.Write([]byte{0})
		h.Write([]byte(challenge.HeaderFingerprint(r.Headers)))
		h.Write([]byte{0})
		h.Write([]byte(challenge.TLSStack(r.JA4)))
		h.Write([]byte{0})
		if r.IP.IsValid() {
			a := clientAddr(r.IP).As16()
			h.Write(a[:])
		}
		if got, want := challengeBinding(r), [16]byte(h.Sum(nil)[:16]); got != want {
			t.Errorf("binding of %+v: %x, want %x", r, got, want)
		}
	}
}
