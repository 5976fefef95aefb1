// How the attack suite (attack_test.go) runs and judges: the gated paths,
// the ways origins read a path (originReadings), the recording origin, the
// raw TCP exchange and runAttacks, which sends every row and checks what the
// origin saw.

package proxy

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// gatedPrefixes are the rig's paths that need a pass (withEventsRoute
// adds /events/), and waitroom's own, in lower case.
var gatedPrefixes = []string{"/events", "/tickets", "/show", "/checkout", "/other", "/_wr"}

// withEventsRoute adds the gated route, /events/ queued for event
// "show", and /tickets/ likewise, before the rig's own.
func withEventsRoute(o *Options) {
	o.Routes = append([]Route{{Prefix: "/events/", Event: "show", Action: ActionQueue},
		{Prefix: "/tickets/", Event: "show", Action: ActionQueue}}, o.Routes...)
}

// originReadings returns the paths origins could make of a request-target
// they received: fasthttp's own parse, and the raw target read the way
// IIS, Tomcat, nginx, Express and the rest do — one percent-decoding (a
// server that decodes twice is broken beyond any proxy's help), "\" as
// "/", path parameters stripped before or after decoding, dot-segments
// removed, case folded, and each segment's trailing dots and spaces
// dropped (Windows).
func originReadings(raw, fasthttpPath string) []string {
	p := raw
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if i := strings.Index(p, "://"); i >= 0 {
		p = p[i+3:]
		if j := strings.IndexByte(p, '/'); j >= 0 {
			p = p[j:]
		} else {
			p = "/"
		}
	}
	decode := func(s string) string {
		if d, err := url.PathUnescape(s); err == nil {
			return d
		}
		return s
	}
	params := func(s string) string {
		segs := strings.Split(s, "/")
		for i, seg := range segs {
			if j := strings.IndexByte(seg, ';'); j >= 0 {
				segs[i] = seg[:j]
			}
		}
		return strings.Join(segs, "/")
	}
	windows := func(s string) string {
		segs := strings.Split(s, "/")
		for i, seg := range segs {
			if strings.Trim(seg, ".") == "" && len(seg) > 2 {
				segs[i] = ".." // Windows reads "..." as ".."
				continue
			}
			segs[i] = strings.TrimRight(seg, ". ")
		}
		return strings.Join(segs, "/")
	}
	// rfc removes dot-segments as RFC 3986 §5.2.4 and the WHATWG URL
	// parser (Node, browsers) do, without merging slashes: "/a//../b" is
	// "/a/b" to them, "/b" to path.Clean.
	rfc := func(s string) string {
		var segs []string
		for _, seg := range strings.Split(s, "/")[1:] {
			switch seg {
			case ".":
			case "..":
				if len(segs) > 0 {
					segs = segs[:len(segs)-1]
				}
			default:
				segs = append(segs, seg)
			}
		}
		return "/" + strings.Join(segs, "/")
	}
	// netPath reads "//host/path" as a network-path reference, as Go's
	// url.ParseRequestURI (net/http) and Python's urlsplit do: "/path".
	netPath := func(s string) string {
		if rest, ok := strings.CutPrefix(s, "//"); ok {
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				return rest[i:]
			}
			return "/"
		}
		return s
	}
	var out []string
	for _, s := range []string{p, decode(p), params(decode(p)), decode(params(p)), fasthttpPath} {
		s = strings.ReplaceAll(s, `\`, "/")
		if strings.HasPrefix(s, "/") {
			out = append(out, rfc(s), netPath(s), rfc(netPath(s)))
		}
		out = append(out, s)
		// ToUpper then ToLower: "ſ" is "S", "ı" is "I", "K" is "k".
		c := windows(strings.ToLower(strings.ToUpper(path.Clean("/" + s))))
		out = append(out, c, path.Clean(c))
	}
	return out
}

// gated reports whether an origin could read raw as a gated path.
func gated(raw, fasthttpPath string) bool {
	for _, s := range originReadings(raw, fasthttpPath) {
		s = strings.ToLower(s)
		for _, g := range gatedPrefixes {
			if s == g || strings.HasPrefix(s, g+"/") {
				return true
			}
		}
	}
	return false
}

func TestOriginReadings(t *testing.T) {
	for _, raw := range []string{"/events/x", "/EVENTS/x", "/events./x", "/events%20/x", "/events;a/x",
		"/static/..;/events/x", "/static/%2e%2e/events/x", "/static%2F..%2Fevents/x", `/static/..\events/x`,
		"/static/..%5Cevents/x", "http://h/events/x", "/%65vents", "/static/.../events", "/%C5%BFhow", "/t%C4%B1ckets/",
		"/chec%E2%84%AAout", "//0/events/x", "/events//../x", "/events/%2e/..//x"} {
		if !gated(raw, "") {
			t.Errorf("%q: not read as gated", raw)
		}
	}
	for _, raw := range []string{"/static/x", "/static/%252e%252e/events/x", "/?/events/x", "/eventsx"} {
		if gated(raw, "") {
			t.Errorf("%q: read as gated", raw)
		}
	}
}

// seenRaw is what the recording origin got, as it came on the wire.
type seenRaw struct {
	uri, path, header string
	// visitors and events are every X-Waitroom-Visitor and
	// X-Waitroom-Event the origin got.
	visitors, events []string
}

// recorder records the raw target and header block of everything the
// rig's origin serves.
type recorder struct {
	mu   sync.Mutex
	seen []seenRaw
}

func record(r *rig) *recorder {
	rec := &recorder{}
	r.origin.mu.Lock()
	r.origin.handler = func(ctx *fasthttp.RequestCtx) {
		h := &ctx.Request.Header
		s := seenRaw{uri: string(h.RequestURI()), path: string(ctx.Path()), header: string(h.Header())}
		for _, v := range h.PeekAll("X-Waitroom-Visitor") {
			s.visitors = append(s.visitors, string(v))
		}
		for _, v := range h.PeekAll("X-Waitroom-Event") {
			s.events = append(s.events, string(v))
		}
		rec.mu.Lock()
		rec.seen = append(rec.seen, s)
		rec.mu.Unlock()
		ctx.SetContentType("text/plain")
		ctx.WriteString("origin:" + string(ctx.Path()))
	}
	r.origin.mu.Unlock()
	return rec
}

func (rec *recorder) since(i int) []seenRaw {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]seenRaw(nil), rec.seen[i:]...)
}

func (rec *recorder) len() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.seen)
}

// exchange sends raw over a new connection and reads up to n responses
// (fewer when the server closes). 1xx responses are skipped.
func exchange(t *testing.T, addr, raw string, n int, halfClose bool) (statuses []int, bodies []string, err error) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	go func() {
		// The server may answer and close before it has read it all.
		io.WriteString(c, raw)
		if halfClose {
			c.(*net.TCPConn).CloseWrite()
		}
	}()
	br := bufio.NewReader(c)
	for len(statuses) < n {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return statuses, bodies, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 200 {
			continue
		}
		statuses, bodies = append(statuses, resp.StatusCode), append(bodies, string(b))
		if err != nil {
			return statuses, bodies, err
		}
	}
	return statuses, bodies, nil
}

// front is a server the attacks are sent to.
type front struct {
	name, addr string
	// direct: waitroom itself, whose statuses the rows pin.
	direct bool
	// passThrough are the forged headers this front passes to the origin
	// by its own design (nginx and Caddy append a client's
	// X-Forwarded-For), in lower case.
	passThrough []string
}

// runAttacks sends every row to f and checks what the origin saw.
func runAttacks(t *testing.T, r *rig, f front) {
	rec := record(r)
	v := r.admit(t, "Mozilla/5.0 attack")
	pass := v.cookie(r.url, "wr_pass_show")
	bh := v.bindingFor(t)
	ps, err := r.keys.VerifyPass(pass, "show", bh, r.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	visitor := ps.Visitor.String()
	// checkSeen fails for a gated path without the visitor, or a forged
	// header, among what the origin saw.
	checkSeen := func(t *testing.T, seen []seenRaw) {
		t.Helper()
		for _, s := range seen {
			if gated(s.uri, s.path) && (len(s.visitors) != 1 || s.visitors[0] != visitor) {
				t.Errorf("the origin saw gated %q (path %q) without a pass (visitor %q)", s.uri, s.path, s.visitors)
			}
			// On any path, the visitor headers are waitroom's or absent.
			if len(s.visitors) > 1 || len(s.visitors) == 1 && s.visitors[0] != visitor {
				t.Errorf("the origin saw %q with visitor %q", s.uri, s.visitors)
			}
			if len(s.events) > 1 || len(s.events) == 1 && (s.events[0] != "show" || len(s.visitors) == 0) {
				t.Errorf("the origin saw %q with event %q", s.uri, s.events)
			}
			for _, line := range strings.Split(s.header, "\r\n") {
				name, value, _ := strings.Cut(line, ":")
				name = strings.ToLower(strings.ReplaceAll(strings.TrimSpace(name), "_", "-"))
				if strings.Contains(strings.ToLower(value), "forged") && !contains(f.passThrough, name) {
					t.Errorf("a forged header reached the origin: %q", line)
				}
			}
		}
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			sm := strings.ReplaceAll(smuggled, "{{HOST}}", f.addr)
			raw := strings.NewReplacer("{{HOST}}", f.addr, "{{PASS}}", pass, "{{UA}}", v.ua,
				"{{SMUGLEN}}", strconv.Itoa(len(sm)), "{{SMUGHEX}}", strconv.FormatInt(int64(len(sm)), 16),
				"{{LONGLEN}}", strconv.Itoa(len(sm)+longBody)).Replace(a.raw)
			n := max(a.reqs, 1)
			before := rec.len()
			statuses, bodies, err := exchange(t, f.addr, raw, n, a.halfClose)
			seen := rec.since(before)
			t.Logf("statuses %v (%v); origin saw %d", statuses, err, len(seen))
			if os.Getenv("ATTACK_DUMP") != "" { // the heads the origin got, for debugging a row
				for _, s := range seen {
					t.Logf("%q", s.header)
				}
			}
			checkSeen(t, seen)
			for i, b := range bodies {
				// The origin's answer for a gated path would say so.
				if !a.pass && strings.HasPrefix(b, "origin:") && gated("/", strings.TrimPrefix(b, "origin:")) {
					t.Errorf("response %d is the origin's for a gated path: %.80q", i, b)
				}
			}
			if a.pass {
				found := false
				for _, s := range seen {
					found = found || gated(s.uri, s.path) && len(s.visitors) == 1 && s.visitors[0] == visitor
				}
				if !found || len(statuses) == 0 || statuses[0] != 200 {
					t.Fatalf("with a pass: statuses %v, origin saw %+v", statuses, seen)
				}
			}
			if !f.direct {
				return
			}
			if a.mayReset && len(statuses) == 0 {
				return
			}
			if !equalInts(statuses, a.want) {
				t.Errorf("statuses %v, want %v (read: %v; bodies %.200q)", statuses, a.want, err, bodies)
			}
		})
	}
	// A request smuggled to the origin is served after the response the
	// client got; a last exchange on the origin's connections settles it.
	if _, _, err := exchange(t, f.addr, strings.ReplaceAll(get("/static/last"), "{{HOST}}", f.addr), 1, false); err != nil {
		t.Fatal(err)
	}
	checkSeen(t, rec.since(0))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
