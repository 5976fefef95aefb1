package config

import (
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/waitroom/waitroom/proxy/target"
)

func (v *validator) origins(p string, origins []Origin) {
	if len(origins) == 0 && v.runs(RoleProxy) {
		v.fail(p, "needs at least one origin: the site waitroom forwards to")
	}
	names := make(map[string]int, len(origins))
	for i := range origins {
		op := fmt.Sprintf("%s[%d]", p, i)
		o := &origins[i]
		if !validName(o.Name) {
			v.fail(op+".name", "must be 1 to %d characters from [a-z0-9_-] (got %q)", MaxNameLength, o.Name)
		} else if j, dup := names[o.Name]; dup {
			v.fail(op+".name", "repeats origins[%d].name", j)
		} else {
			names[o.Name] = i
		}
		v.origin(op, o)
	}
}

func (v *validator) origin(p string, o *Origin) {
	if len(o.Addresses) == 0 {
		v.fail(p+".addresses", "needs at least one host:port, such as 127.0.0.1:9000")
	}
	seen := make(map[string]int, len(o.Addresses))
	for i, addr := range o.Addresses {
		ap := fmt.Sprintf("%s.addresses[%d]", p, i)
		if err := hostPort(addr, false); err != nil {
			v.fail(ap, "must be host:port, such as 127.0.0.1:9000 (%v)", err)
			continue
		}
		if j, dup := seen[addr]; dup {
			v.fail(ap, "repeats addresses[%d]", j)
			continue
		}
		seen[addr] = i
	}
	if !o.TLS {
		if o.TLSServerName != "" {
			v.fail(p+".tls_server_name", "is set while tls is false")
		}
		if o.TLSCAFile != "" {
			v.fail(p+".tls_ca_file", "is set while tls is false")
		}
	}
	if o.TLSServerName != "" && !validDomain(o.TLSServerName) {
		v.fail(p+".tls_server_name", "must be a host name such as shop.example.com (got %q)", o.TLSServerName)
	}
	if o.Host != "" && !validHostHeader(o.Host) {
		v.fail(p+".host", "must be a host name, optionally with :port, such as shop.example.com (got %q)", o.Host)
	}
	v.atLeast(p+".max_conns", int64(o.MaxConns), 1)
	if o.MaxInFlight < 0 {
		v.fail(p+".max_in_flight", "must be 0 (max_conns times the addresses) or more (got %d)", o.MaxInFlight)
	}
	v.positive(p+".dial_timeout", o.DialTimeout)
	v.positive(p+".read_timeout", o.ReadTimeout)
	v.positive(p+".write_timeout", o.WriteTimeout)
	v.nonNegative(p+".max_conn_wait", o.MaxConnWait)
	v.positive(p+".max_idle_conn_duration", o.MaxIdleConnDuration)
	if n := o.ReadBufferBytes; n < MinReadBufferBytes || n > MaxReadBufferBytes {
		v.fail(p+".read_buffer_bytes", "must be between %d (4 KiB) and %d (1 MiB) (got %d)", MinReadBufferBytes, MaxReadBufferBytes, n)
	}
	if o.MaxResponseBodyBytes < 0 {
		v.fail(p+".max_response_body_bytes", "must be 0 (no limit) or more (got %d)", o.MaxResponseBodyBytes)
	}
	v.between(p+".retries", int64(o.Retries), 0, MaxRetries)

	hc, hp := &o.HealthCheck, p+".health_check"
	if hc.Disabled {
		return // the other settings do not matter
	}
	if hc.Path != "" {
		if err := sitePath(hc.Path); err != nil {
			v.fail(hp+".path", "must be a path such as /healthz, or empty for a TCP connect check (%v)", err)
		}
	}
	v.positive(hp+".interval", hc.Interval)
	v.positive(hp+".timeout", hc.Timeout)
	if hc.Timeout > 0 && hc.Interval > 0 && hc.Timeout >= hc.Interval {
		v.fail(hp+".timeout", "must be less than interval (%s) (got %s)", hc.Interval, hc.Timeout)
	}
	v.atLeast(hp+".unhealthy_after", int64(hc.UnhealthyAfter), 1)
	v.atLeast(hp+".healthy_after", int64(hc.HealthyAfter), 1)
}

// validName checks an origin, event or lane name: 1 to MaxNameLength
// characters from [a-z0-9_-].
func validName(s string) bool {
	if s == "" || len(s) > MaxNameLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validHostHeader checks a Host header value: a DNS name or IP address,
// optionally with a port.
func validHostHeader(h string) bool {
	host := h
	if err := hostPort(h, false); err == nil {
		host = h[:strings.LastIndexByte(h, ':')]
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.Contains(host, ":") {
		_, err := ParseNetwork(host)
		return err == nil
	}
	return validDomain(host)
}

// sitePath checks a path on this site: absolute, not protocol-relative
// ("//host"), without spaces, control characters or backslashes.
func sitePath(p string) error {
	switch {
	case p == "" || p[0] != '/':
		return fmt.Errorf("%q does not start with /", p)
	case strings.HasPrefix(p, "//"):
		return fmt.Errorf("%q starts with //, which browsers read as another host", p)
	case strings.IndexFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' }) >= 0:
		return fmt.Errorf("%q holds a space, control character or backslash", p)
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Fragment != "" {
		return fmt.Errorf("%q is not a plain path", p)
	}
	return nil
}

// routes checks the routes and their references to events and origins.
func (v *validator) routes(p string, c *Config) {
	events := make(map[string]bool, len(c.Events))
	for _, e := range c.Events {
		events[e.ID] = true
	}
	origins := make(map[string]bool, len(c.Origins))
	for _, o := range c.Origins {
		origins[o.Name] = true
	}
	for i := range c.Routes {
		r := &c.Routes[i]
		rp := fmt.Sprintf("%s[%d]", p, i)
		v.routeMatch(rp, i, c)

		switch r.Action {
		case "", ActionQueue, ActionPass, ActionBlock:
		default:
			v.fail(rp+".action", "must be queue, pass or block (got %q)", r.Action)
		}
		switch a := r.EffectiveAction(); {
		case r.Event != "" && a == ActionPass:
			v.fail(rp+".event", "is set with action: pass, which forwards without a pass: remove event, or use queue or block")
		case r.Event == "" && (a == ActionQueue || a == ActionBlock):
			v.fail(rp+".event", "must be set with action: %s: it names the event whose pass the paths need", a)
		case r.Event != "" && !events[r.Event]:
			v.fail(rp+".event", "names no event in events (%s)", known(events, r.Event))
		}
		if r.Origin != "" && !origins[r.Origin] {
			v.fail(rp+".origin", "names no origin in origins (%s)", known(origins, r.Origin))
		}
	}
	u := &c.Unmatched
	switch u.Action {
	case "", ActionQueue, ActionPass, ActionBlock:
	default:
		v.fail("unmatched.action", "must be queue, pass or block (got %q)", u.Action)
	}
	switch a := u.EffectiveAction(); {
	case u.Event != "" && a == ActionPass:
		v.fail("unmatched.event", "is set with action pass, which forwards without a pass: remove event, or use queue or block")
	case u.Event == "" && (a == ActionQueue || a == ActionBlock):
		v.fail("unmatched.event", "must be set with action %s: it names the event whose pass unmatched paths need", a)
	case u.Event != "" && !events[u.Event]:
		v.fail("unmatched.event", "names no event in events (%s)", known(events, u.Event))
	}
	if u.Origin != "" && !origins[u.Origin] {
		v.fail("unmatched.origin", "names no origin in origins (%s)", known(origins, u.Origin))
	}
}

// routeMatch checks routes[i]'s prefix or glob, on its own and against
// serve.prefix and the routes before it.
func (v *validator) routeMatch(rp string, i int, c *Config) {
	r := &c.Routes[i]
	var key, pattern, literal string
	switch {
	case r.Prefix != "" && r.Glob != "":
		v.fail(rp, "set prefix or glob, not both")
		return
	case r.Prefix == "" && r.Glob == "":
		v.fail(rp, "set prefix or glob: the paths this route applies to")
		return
	case r.Prefix != "":
		key, pattern, literal = "prefix", r.Prefix, r.Prefix
		if err := routePath(r.Prefix); err != nil {
			v.fail(rp+".prefix", "must be a path such as /events/ (%v)", err)
			return
		}
	default:
		key, pattern, literal = "glob", r.Glob, r.Glob
		if n := strings.IndexAny(r.Glob, `*?[\`); n >= 0 {
			literal = r.Glob[:n]
		}
		if err := routePath(r.Glob); err != nil {
			v.fail(rp+".glob", "must be a pattern such as /events/*/checkout (%v)", err)
			return
		}
		if _, err := path.Match(strings.ReplaceAll(r.Glob, "**", "*"), ""); err != nil {
			v.fail(rp+".glob", "is not a valid pattern: check its [ ] classes and \\ escapes (got %q)", r.Glob)
			return
		}
	}
	if pre := strings.ToLower(c.Serve.Prefix); pre != "" && (strings.ToLower(literal) == pre || strings.HasPrefix(strings.ToLower(literal), pre+"/")) {
		v.fail(rp+"."+key, "is inside serve.prefix %s, which waitroom reserves: this route would never apply", pre)
		return
	}
	for j, q := range c.Routes[:i] {
		switch {
		case key == "prefix" && q.Prefix == pattern, key == "glob" && q.Glob == pattern:
			v.fail(rp+"."+key, "repeats routes[%d]: the first match wins, so this route never applies", j)
			return
		case key == "prefix" && q.Prefix != "" && q.Glob == "" && covers(&q, pattern, r.CaseSensitive):
			v.fail(rp+".prefix", "is covered by routes[%d] (prefix %s) listed before it: the first match wins, so list the longer prefix first", j, q.Prefix)
			return
		}
	}
}

// covers reports whether route q's prefix covers every path of the prefix
// pattern (of a route that is case-sensitive or not), as the proxy matches.
func covers(q *Route, pattern string, caseSensitive bool) bool {
	if q.CaseSensitive || caseSensitive {
		if q.CaseSensitive && caseSensitive {
			return strings.HasPrefix(pattern, q.Prefix)
		}
		// A case-insensitive q covers a case-sensitive pattern; not the
		// other way round.
		return !q.CaseSensitive && strings.HasPrefix(strings.ToLower(pattern), strings.ToLower(q.Prefix))
	}
	return strings.HasPrefix(strings.ToLower(pattern), strings.ToLower(q.Prefix))
}

// routePath checks a route's prefix or glob as a path: in the form the
// request normaliser gives (package proxy/target), since a pattern in any
// other form could never match.
func routePath(p string) error {
	switch {
	case p == "" || p[0] != '/':
		return fmt.Errorf("%q does not start with /", p)
	case strings.IndexFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '?' || r == '#' }) >= 0:
		return fmt.Errorf("%q holds a space, control character, ? or #", p)
	}
	var t target.Target
	if err := t.Parse([]byte(p), target.Options{EncodedSlashes: true}); err != nil {
		return fmt.Errorf("%q is not a valid path", p)
	}
	if string(t.URI()) != p {
		return fmt.Errorf("%q is not normalised: requests for it arrive as %q", p, t.URI())
	}
	return nil
}

// known lists the names in set for a message.
// known lists the names in set for a message about got, which is not
// one of them, with the nearest as a suggestion.
func known(set map[string]bool, got string) string {
	if len(set) == 0 {
		return "there are none"
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	if s := closest(got, names); s != "" {
		return "known: " + strings.Join(names, ", ") + "; did you mean " + s + "?"
	}
	return "known: " + strings.Join(names, ", ")
}
