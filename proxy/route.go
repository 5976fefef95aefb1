package proxy

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/waitroom/waitroom/proxy/target"
)

// Action is what a route does with a request that has no valid pass.
type Action int

// Route actions.
const (
	// ActionPass forwards every request to the origin: static assets, the
	// home page, anything that needs no queue.
	ActionPass Action = iota
	// ActionQueue sends a request without a valid pass for the route's
	// event to the waiting room.
	ActionQueue
	// ActionBlock refuses a request without a valid pass (403): deep links
	// such as checkout steps, or APIs bots call directly.
	ActionBlock
)

// String is the action's configuration name.
func (a Action) String() string {
	switch a {
	case ActionQueue:
		return "queue"
	case ActionBlock:
		return "block"
	}
	return "pass"
}

// Route maps request paths to an event and an origin. Exactly one of
// Prefix and Glob is set.
type Route struct {
	// Prefix matches every path that starts with it, as nginx's prefix
	// locations do: /events/summer also matches /events/summer-vip (end
	// it with "/" to match a directory only).
	Prefix string
	// Glob matches the whole path: "*" matches within one segment, "**"
	// any number of whole segments, "?" one byte.
	Glob string
	// Event is the event whose pass the route needs ("" for ActionPass).
	Event string
	// Origin names the origin requests go to ("" for the first one).
	Origin string
	// Action is what happens to a request without a valid pass.
	Action Action
	// CaseSensitive matches the path as it is; by default the match
	// ignores ASCII case, since many origins (IIS, case-insensitive file
	// systems, routers that fold case) serve /EVENTS/x as /events/x.
	CaseSensitive bool
	// EncodedSlashes lets paths with "%2F" or "%5C" through this route
	// (they are refused with 400 everywhere else).
	EncodedSlashes bool
	// AllowTrace lets TRACE requests through this route (405 otherwise).
	AllowTrace bool
}

// matcher is a compiled route. It matches target.Key forms of a
// normalised path: a route's prefix or glob goes through target.Key too,
// so both sides are compared alike.
type matcher struct {
	prefix []byte
	// dir is prefix without its trailing "/" (nil when prefix has none):
	// a directory prefix also covers the directory itself, /events for
	// /events/, which origins serve as (or redirect to) the same page.
	dir  []byte
	glob []string // pattern segments, without the leading "/"
	fold bool
}

func compileRoute(r Route) (matcher, error) {
	m := matcher{fold: !r.CaseSensitive}
	switch {
	case (r.Prefix == "") == (r.Glob == ""):
		return matcher{}, fmt.Errorf("proxy: a route needs exactly one of prefix and glob")
	case r.Prefix != "":
		if err := normalised(r.Prefix); err != nil {
			return matcher{}, fmt.Errorf("proxy: route prefix %q: %w", r.Prefix, err)
		}
		m.prefix = target.Key(nil, []byte(r.Prefix), m.fold)
		if n := len(m.prefix); n > 1 && m.prefix[n-1] == '/' {
			m.dir = m.prefix[:n-1]
		}
	default:
		if err := normalised(r.Glob); err != nil {
			return matcher{}, fmt.Errorf("proxy: route glob %q: %w", r.Glob, err)
		}
		m.glob = strings.Split(string(target.Key(nil, []byte(r.Glob), m.fold))[1:], "/")
	}
	return m, nil
}

// normalised checks that a route's pattern is a path in the form
// target.Parse gives: one that differs could never match.
func normalised(pattern string) error {
	if !strings.HasPrefix(pattern, "/") {
		return fmt.Errorf("does not start with /")
	}
	var t target.Target
	if err := t.Parse([]byte(pattern), target.Options{EncodedSlashes: true}); err != nil {
		return err
	}
	if string(t.URI()) != pattern {
		return fmt.Errorf("is not normalised: requests for it arrive as %q", t.URI())
	}
	return nil
}

// match reports whether a path's key matches; fold and exact are its
// target.Key forms with and without case folding.
func (m *matcher) match(fold, exact []byte) bool {
	key := exact
	if m.fold {
		key = fold
	}
	if m.prefix != nil {
		return bytes.HasPrefix(key, m.prefix) || (m.dir != nil && bytes.Equal(key, m.dir))
	}
	if len(key) == 0 || key[0] != '/' {
		return false
	}
	if globMatch(m.glob, key[1:]) {
		return true
	}
	// A trailing "/" is the same page to most origins.
	n := len(key)
	return n > 1 && key[n-1] == '/' && globMatch(m.glob, key[1:n-1])
}

// globMatch matches path segments against pattern segments, where "**"
// matches zero or more whole segments. It backtracks only to the last
// "**" (the classic wildcard algorithm one level up), so it takes
// O(len(pattern) × segments) steps at worst and allocates nothing.
func globMatch(pat []string, path []byte) bool {
	pi, j := 0, 0 // j: start of the current path segment; len(path)+1 when all are used
	starPi, starJ := -1, 0
	for pi < len(pat) || j <= len(path) {
		if pi < len(pat) && pat[pi] == "**" {
			starPi, starJ = pi, j
			pi++
			continue
		}
		if pi < len(pat) && j <= len(path) {
			end := segmentEnd(path, j)
			if segmentMatch(pat[pi], path[j:end]) {
				pi, j = pi+1, end+1
				continue
			}
		}
		if starPi >= 0 && starJ <= len(path) {
			starJ = segmentEnd(path, starJ) + 1
			pi, j = starPi+1, starJ
			continue
		}
		return false
	}
	return true
}

func segmentEnd(path []byte, j int) int {
	if i := bytes.IndexByte(path[j:], '/'); i >= 0 {
		return j + i
	}
	return len(path)
}

// segmentMatch matches one segment: "*" any run of bytes, "?" one byte.
func segmentMatch(pat string, s []byte) bool {
	pi, si := 0, 0
	starPi, starSi := -1, 0
	for si < len(s) {
		switch {
		case pi < len(pat) && pat[pi] == '*':
			starPi, starSi = pi, si
			pi++
		case pi < len(pat) && (pat[pi] == '?' || pat[pi] == s[si]):
			pi, si = pi+1, si+1
		case starPi >= 0:
			starSi++
			pi, si = starPi+1, starSi
		default:
			return false
		}
	}
	for pi < len(pat) && pat[pi] == '*' {
		pi++
	}
	return pi == len(pat)
}

// TableConfig is what WriteRouteTable describes.
type TableConfig struct {
	// Prefix is the reserved prefix (DefaultPrefix when empty).
	Prefix string
	Routes []Route
	// Unmatched is the route of paths no route matches.
	Unmatched Route
	// DefaultOrigin names the first origin ("" in auth_request mode).
	DefaultOrigin  string
	PathParameters target.Semicolons
	DefaultHost    string
}

// WriteRouteTable writes the routing as the proxy applies it: the
// reserved prefix, every route in order with its case rule, action, event
// and origin, what happens to the paths no route matches, and the
// request-target rules that hold before any route is looked at.
func WriteRouteTable(w io.Writer, c TableConfig) error {
	prefix := c.Prefix
	if prefix == "" {
		prefix = DefaultPrefix
	}
	origin := func(name string) string {
		switch {
		case name != "":
			return name
		case c.DefaultOrigin != "":
			return c.DefaultOrigin
		}
		return "(none: auth_request)"
	}
	event := func(r Route) string {
		if r.Event == "" {
			return "-"
		}
		return r.Event
	}
	extras := func(r Route) string {
		var x []string
		if r.EncodedSlashes {
			x = append(x, "encoded slashes allowed")
		}
		if r.AllowTrace {
			x = append(x, "TRACE allowed")
		}
		return strings.Join(x, ", ")
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "route\tmatches\tcase\taction\tevent\torigin")
	fmt.Fprintf(tw, "-\t%s/ and below\tignored\t(own)\t-\twaitroom\n", prefix)
	for i, r := range c.Routes {
		match, kase := "prefix "+r.Prefix, "ignored"
		if r.Glob != "" {
			match = "glob " + r.Glob
		}
		if n := len(r.Prefix); n > 1 && r.Prefix[n-1] == '/' {
			match += " (and " + r.Prefix[:n-1] + ")"
		}
		if r.CaseSensitive {
			kase = "exact"
		}
		line := fmt.Sprintf("%d\t%s\t%s\t%s\t%s\t%s", i, match, kase, r.Action, event(r), origin(r.Origin))
		if x := extras(r); x != "" {
			line += "\t" + x
		}
		fmt.Fprintln(tw, line)
	}
	u := c.Unmatched
	fmt.Fprintf(tw, "*\tany other path\t-\t%s\t%s\t%s\n", u.Action, event(u), origin(u.Origin))
	if err := tw.Flush(); err != nil {
		return err
	}
	params := "refused (400)"
	if c.PathParameters == target.SemicolonsStrip {
		params = "stripped before routing and forwarding"
	}
	host := "refused (400)"
	if c.DefaultHost != "" {
		host = "taken to be for " + c.DefaultHost
	}
	_, err := fmt.Fprintf(w, `
Routes match the normalised path, which is exactly what the origin receives:
dot-segments removed, "//" collapsed, unreserved escapes decoded; a segment's
trailing dots and encoded spaces are ignored when matching.
Refused with 400: fragments, control and non-ASCII bytes, backslashes, %%00,
%%2F and %%5C (unless a route allows encoded slashes), absolute-form for another
host. Path parameters (";"): %s; encoded ("%%3B"): refused (400).
HTTP/1.0 without Host: %s.
CONNECT: 405. TRACE: 405 unless a route allows it.
`, params, host)
	return err
}
