package proxy

import (
	"bytes"
	"fmt"
	"strings"
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
}

// matcher is a compiled route.
type matcher struct {
	prefix []byte
	glob   []string // pattern segments, without the leading "/"
}

func compileRoute(r Route) (matcher, error) {
	switch {
	case (r.Prefix == "") == (r.Glob == ""):
		return matcher{}, fmt.Errorf("proxy: a route needs exactly one of prefix and glob")
	case r.Prefix != "":
		if !strings.HasPrefix(r.Prefix, "/") {
			return matcher{}, fmt.Errorf("proxy: route prefix %q does not start with /", r.Prefix)
		}
		return matcher{prefix: []byte(r.Prefix)}, nil
	default:
		if !strings.HasPrefix(r.Glob, "/") {
			return matcher{}, fmt.Errorf("proxy: route glob %q does not start with /", r.Glob)
		}
		return matcher{glob: strings.Split(r.Glob[1:], "/")}, nil
	}
}

// match reports whether the (decoded, normalised) path matches.
func (m *matcher) match(path []byte) bool {
	if m.prefix != nil {
		return bytes.HasPrefix(path, m.prefix)
	}
	if len(path) == 0 || path[0] != '/' {
		return false
	}
	return globMatch(m.glob, path[1:])
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
