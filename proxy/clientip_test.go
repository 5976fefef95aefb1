package proxy

import (
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/proxy/httpguard"
)

// withTrusted makes the proxy trust cidrs, reading header.
func withTrusted(header string, cidrs ...string) rigOption {
	return func(o *Options) {
		var ps []netip.Prefix
		for _, c := range cidrs {
			ps = append(ps, netip.MustParsePrefix(c))
		}
		o.Trusted = httpguard.NewTrustedHeader(ps, header)
	}
}

// originHeaders records, for each request the origin gets, the headers
// that carry a client address.
type originHeaders struct {
	mu   sync.Mutex
	seen []map[string]string
}

func (oh *originHeaders) handle(ctx *fasthttp.RequestCtx) {
	m := map[string]string{}
	for _, k := range []string{"X-Forwarded-For", "X-Real-Ip", "Forwarded", "Cf-Connecting-Ip"} {
		if vs := ctx.Request.Header.PeekAll(k); len(vs) > 0 {
			var parts []string
			for _, v := range vs {
				parts = append(parts, string(v))
			}
			m[k] = strings.Join(parts, " | ")
		}
	}
	oh.mu.Lock()
	oh.seen = append(oh.seen, m)
	oh.mu.Unlock()
	ctx.WriteString("origin:" + string(ctx.Path()))
}

func (oh *originHeaders) last(t *testing.T) map[string]string {
	t.Helper()
	oh.mu.Lock()
	defer oh.mu.Unlock()
	if len(oh.seen) == 0 {
		t.Fatal("the origin saw no request")
	}
	return oh.seen[len(oh.seen)-1]
}

// spoofs are a client's claims to be 203.0.113.5, in every header.
var spoofs = []string{
	"X-Forwarded-For", "203.0.113.5",
	"Forwarded", "for=203.0.113.5",
	"X-Real-IP", "203.0.113.5",
	"CF-Connecting-IP", "203.0.113.5",
}

// TestClientAddressUntrustedPeer: whichever header waitroom reads, a
// client that is not a trusted proxy cannot name its own address: a
// spoofed one does not reach a bypass network, and the origin gets the
// peer's address in every client address header.
func TestClientAddressUntrustedPeer(t *testing.T) {
	for _, header := range []string{"X-Forwarded-For", "Forwarded", "X-Real-IP", "CF-Connecting-IP"} {
		t.Run(header, func(t *testing.T) {
			oh := &originHeaders{}
			// Loopback is not trusted: only 10.0.0.0/8 is.
			r := newRig(t, withTrusted(header, "10.0.0.0/8"), withBypass([]string{"203.0.113.0/24"}, ""))
			r.origin.handler = oh.handle
			v := newVisitor(t, "ua")
			if got := v.do(t, "GET", r.url+"/show/x", "", spoofs...); got.body == "origin:/show/x" {
				t.Fatal("a spoofed client address bypassed the queue")
			}
			if r.origin.count() != 0 {
				t.Fatal("the origin saw a gated request")
			}
			if got := v.do(t, "GET", r.url+"/about", "", spoofs...); got.body != "origin:/about" {
				t.Fatalf("pass path: %d %s", got.status, got.body)
			}
			want := map[string]string{"X-Forwarded-For": "127.0.0.1", "X-Real-Ip": "127.0.0.1"}
			if header == "CF-Connecting-IP" {
				// The configured header is rewritten to the client.
				want["Cf-Connecting-Ip"] = "127.0.0.1"
			}
			got := oh.last(t)
			for _, k := range []string{"X-Forwarded-For", "X-Real-Ip", "Forwarded", "Cf-Connecting-Ip"} {
				if k == "Cf-Connecting-Ip" && header != "CF-Connecting-IP" {
					continue // not a header waitroom reads: passed on as any other
				}
				if got[k] != want[k] {
					t.Errorf("origin's %s = %q, want %q", k, got[k], want[k])
				}
			}
		})
	}
}

// TestClientAddressTrustedPeer: from a trusted proxy, the right-most
// address that is not trusted is the client, for the bypass and for what
// the origin is told.
func TestClientAddressTrustedPeer(t *testing.T) {
	tests := []struct {
		name     string
		header   string
		send     []string
		bypassed bool
		origin   map[string]string
	}{
		{"xff spoofed left entry", "X-Forwarded-For", []string{"X-Forwarded-For", "203.0.113.5, 198.51.100.7"}, false,
			map[string]string{"X-Forwarded-For": "203.0.113.5, 198.51.100.7, 127.0.0.1", "X-Real-Ip": "198.51.100.7"}},
		{"xff right-most untrusted", "X-Forwarded-For", []string{"X-Forwarded-For", "198.51.100.7, 203.0.113.5, 10.1.1.1"}, true,
			map[string]string{"X-Forwarded-For": "198.51.100.7, 203.0.113.5, 10.1.1.1, 127.0.0.1", "X-Real-Ip": "203.0.113.5"}},
		{"xff all trusted", "X-Forwarded-For", []string{"X-Forwarded-For", "10.2.2.2, 10.1.1.1"}, false,
			map[string]string{"X-Real-Ip": "10.2.2.2"}},
		{"xff malformed right of client", "X-Forwarded-For", []string{"X-Forwarded-For", "203.0.113.5, bogus"}, false,
			map[string]string{"X-Real-Ip": "127.0.0.1"}},
		{"forwarded spoofed left", "Forwarded", []string{"Forwarded", `for=203.0.113.5, for="[2001:db8::7]:443"`, "X-Forwarded-For", "203.0.113.5"}, false,
			map[string]string{"X-Forwarded-For": "2001:db8::7", "X-Real-Ip": "2001:db8::7", "Forwarded": ""}},
		{"forwarded client", "Forwarded", []string{"Forwarded", "for=198.51.100.7, for=203.0.113.5;proto=https, for=10.1.1.1"}, true,
			map[string]string{"X-Forwarded-For": "203.0.113.5", "X-Real-Ip": "203.0.113.5", "Forwarded": ""}},
		{"forwarded unknown", "Forwarded", []string{"Forwarded", "for=203.0.113.5, for=unknown"}, false,
			map[string]string{"X-Forwarded-For": "127.0.0.1"}},
		{"x-real-ip", "X-Real-IP", []string{"X-Real-IP", "203.0.113.5", "X-Forwarded-For", "198.51.100.7"}, true,
			map[string]string{"X-Forwarded-For": "203.0.113.5", "X-Real-Ip": "203.0.113.5"}},
		{"x-real-ip list refused", "X-Real-IP", []string{"X-Real-IP", "198.51.100.7, 203.0.113.5"}, false,
			map[string]string{"X-Forwarded-For": "127.0.0.1", "X-Real-Ip": "127.0.0.1"}},
		{"cf-connecting-ip", "CF-Connecting-IP", []string{"CF-Connecting-IP", "203.0.113.5"}, true,
			map[string]string{"X-Forwarded-For": "203.0.113.5", "Cf-Connecting-Ip": "203.0.113.5"}},
		{"cf-connecting-ip mapped", "CF-Connecting-IP", []string{"CF-Connecting-IP", "::ffff:203.0.113.5"}, true,
			map[string]string{"Cf-Connecting-Ip": "203.0.113.5"}},
		{"cf-connecting-ip malformed", "CF-Connecting-IP", []string{"CF-Connecting-IP", "203.0.113.5x"}, false,
			map[string]string{"X-Forwarded-For": "127.0.0.1", "Cf-Connecting-Ip": "127.0.0.1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oh := &originHeaders{}
			r := newRig(t, withTrusted(tt.header, "127.0.0.1/32", "10.0.0.0/8"), withBypass([]string{"203.0.113.0/24"}, ""))
			r.origin.handler = oh.handle
			got := newVisitor(t, "ua").do(t, "GET", r.url+"/show/x", "", tt.send...)
			if bypassed := got.body == "origin:/show/x"; bypassed != tt.bypassed {
				t.Fatalf("bypassed = %v, want %v (%d %.100s)", bypassed, tt.bypassed, got.status, got.body)
			}
			if !tt.bypassed {
				if got := newVisitor(t, "ua").do(t, "GET", r.url+"/about", "", tt.send...); got.body != "origin:/about" {
					t.Fatalf("pass path: %d %s", got.status, got.body)
				}
			}
			seen := oh.last(t)
			for k, want := range tt.origin {
				if seen[k] != want {
					t.Errorf("origin's %s = %q, want %q", k, seen[k], want)
				}
			}
		})
	}
}

// TestClientAddressRateLimit: the API's per-address limit counts the
// computed client: spoofed addresses from an untrusted peer share the
// peer's bucket, distinct clients behind a trusted proxy each have one.
func TestClientAddressRateLimit(t *testing.T) {
	status := func(t *testing.T, r *rig, xff string) int {
		t.Helper()
		return newVisitor(t, "ua").do(t, "GET", r.url+"/_wr/api/status?event=show", "", "X-Forwarded-For", xff).status
	}
	t.Run("untrusted peer", func(t *testing.T) {
		r := newRig(t, withLimiter(0.001, 2), withTrusted("X-Forwarded-For", "10.0.0.0/8"))
		for i, xff := range []string{"198.51.100.1", "198.51.100.2"} {
			if got := status(t, r, xff); got == 429 {
				t.Fatalf("request %d limited", i)
			}
		}
		if got := status(t, r, "198.51.100.3"); got != 429 {
			t.Fatalf("a new spoofed address escaped the peer's limit: %d", got)
		}
	})
	t.Run("trusted peer", func(t *testing.T) {
		r := newRig(t, withLimiter(0.001, 2), withTrusted("X-Forwarded-For", "127.0.0.1/32"))
		for i := range 5 {
			if got := status(t, r, "6.6.6.6, 198.51.100."+string(rune('1'+i))); got == 429 {
				t.Fatalf("client %d limited by the others' requests", i)
			}
		}
		for range 2 {
			status(t, r, "198.51.100.1")
		}
		if got := status(t, r, "7.7.7.7, 198.51.100.1"); got != 429 {
			t.Fatalf("one client over its limit (a different spoofed left entry): %d", got)
		}
	})
}

// TestClientAddressBinding: a pass bound to the client's network is bound
// to the computed client behind a trusted proxy, not to the proxy (which
// every visitor shares) nor to a spoofed left entry.
func TestClientAddressBinding(t *testing.T) {
	r := newRig(t, withTrusted("X-Forwarded-For", "127.0.0.1/32"), func(o *Options) { o.Binding.IPPrefix = true })
	v := newVisitor(t, "ua")
	const client = "198.51.100.7"
	st := decodeStatus(t, v.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`, "X-Forwarded-For", client))
	for d := 11 * time.Second; st.Status != "admitted" && d < 20*time.Second; d += time.Second {
		r.tick(t, d)
		st = decodeStatus(t, v.do(t, "GET", r.url+"/_wr/api/status?event=show", "", "X-Forwarded-For", client))
	}
	if st.Status != "admitted" {
		t.Fatalf("never admitted: %+v", st)
	}
	for _, tt := range []struct {
		xff  string
		pass bool
	}{
		{client, true},
		{"198.51.100.200", true}, // same network
		{"203.0.113.5, " + client, true},
		{"192.0.2.7", false},
		{client + ", 192.0.2.7", false}, // the right-most untrusted entry is the client
		{"", false},                     // the proxy itself
	} {
		got := v.do(t, "GET", r.url+"/show/x", "", "X-Forwarded-For", tt.xff)
		if passed := got.body == "origin:/show/x"; passed != tt.pass {
			t.Errorf("X-Forwarded-For %q: passed %v, want %v", tt.xff, passed, tt.pass)
		}
	}
}
