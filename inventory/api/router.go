package api

import (
	"bytes"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/internal/ascii"
	"github.com/waitroom/waitroom/inventory"
)

// handlerFunc serves one method of one route. p holds the route's path
// parameters, already decoded and validated.
type handlerFunc func(s *Server, ctx *fasthttp.RequestCtx, p params)

// params are a request's path parameters. They are copies: nothing in
// them points into the RequestCtx.
type params struct {
	route string // the route's pattern, for metrics and logs
	event string
	id    string // {hold} or {order}
}

// endpoint is one method of a route.
type endpoint struct {
	method string
	// query lists the query parameters the endpoint accepts; any other is
	// a 400.
	query []string
	// body is true for methods that read a JSON body.
	body bool
	// bodyRequired is false when an empty body means "no options".
	bodyRequired bool
	h            handlerFunc
}

// route is a path template and what its methods do.
type route struct {
	// pattern is the template as the OpenAPI document spells it; it is also
	// the route's metric label.
	pattern string
	// open routes need no token.
	open      bool
	segs      []string // literal segments; "" marks a parameter
	params    []string // parameter names in order
	endpoints []endpoint
	allow     string // the Allow header of a 405
}

// maxSegments bounds the path segments the router looks at; a longer path
// matches nothing.
const maxSegments = 8

// unmatched is the metric label of requests that matched no route.
const unmatched = "unmatched"

// newRoutes builds the route table. Every route the API serves is here,
// and the OpenAPI document is checked against this table.
func newRoutes() []*route {
	rs := []*route{
		{pattern: "/healthz", open: true, endpoints: []endpoint{{method: "GET", h: (*Server).healthz}}},
		{pattern: "/readyz", open: true, endpoints: []endpoint{{method: "GET", h: (*Server).readyz}}},
		{pattern: "/metrics", endpoints: []endpoint{{method: "GET", h: (*Server).metricsPage}}},
		{pattern: "/v1/openapi.yaml", open: true, endpoints: []endpoint{{method: "GET", h: (*Server).openAPI}}},
		{pattern: "/v1/events", endpoints: []endpoint{{method: "GET", h: (*Server).listEvents}}},
		{pattern: "/v1/events/{event}", endpoints: []endpoint{
			{method: "GET", h: (*Server).getEvent},
			{method: "PUT", body: true, bodyRequired: true, h: (*Server).putEvent},
		}},
		{pattern: "/v1/events/{event}/availability", endpoints: []endpoint{{method: "GET", h: (*Server).availability}}},
		{pattern: "/v1/events/{event}/seats", endpoints: []endpoint{{method: "GET", query: []string{"section"}, h: (*Server).seatMap}}},
		{pattern: "/v1/events/{event}/holds", endpoints: []endpoint{{method: "POST", body: true, bodyRequired: true, h: (*Server).hold}}},
		{pattern: "/v1/events/{event}/holds/{hold}", endpoints: []endpoint{
			{method: "GET", h: (*Server).getHold},
			{method: "DELETE", h: (*Server).release},
		}},
		{pattern: "/v1/events/{event}/holds/{hold}/confirm", endpoints: []endpoint{{method: "POST", body: true, h: (*Server).confirm}}},
		{pattern: "/v1/events/{event}/holds/{hold}/extend", endpoints: []endpoint{{method: "POST", body: true, h: (*Server).extend}}},
		{pattern: "/v1/events/{event}/orders/{order}", endpoints: []endpoint{{method: "GET", h: (*Server).getOrder}}},
		{pattern: "/v1/events/{event}/orders/{order}/cancel", endpoints: []endpoint{{method: "POST", body: true, h: (*Server).cancel}}},
		{pattern: "/v1/events/{event}/audit", endpoints: []endpoint{{method: "GET", query: []string{"after", "limit"}, h: (*Server).audit}}},
	}
	for _, r := range rs {
		for _, seg := range strings.Split(r.pattern[1:], "/") {
			if strings.HasPrefix(seg, "{") {
				r.segs = append(r.segs, "")
				r.params = append(r.params, seg[1:len(seg)-1])
			} else {
				r.segs = append(r.segs, seg)
			}
		}
		methods := make([]string, len(r.endpoints))
		for i, e := range r.endpoints {
			methods[i] = e.method
		}
		r.allow = strings.Join(methods, ", ")
	}
	return rs
}

// splitPath splits a raw (still percent-encoded) path into its segments,
// without the leading slash. n is -1 when the path does not start with a
// slash or has more than maxSegments segments. The segments point into
// path.
func splitPath(path []byte, segs *[maxSegments][]byte) (n int) {
	if len(path) == 0 || path[0] != '/' {
		return -1
	}
	path = path[1:]
	for {
		if n == maxSegments {
			return -1
		}
		i := bytes.IndexByte(path, '/')
		if i < 0 {
			segs[n] = path
			return n + 1
		}
		segs[n] = path[:i]
		path = path[i+1:]
		n++
	}
}

// match returns the index of the route of a split path, or -1; it
// compares literal segments only.
func match(routes []*route, segs *[maxSegments][]byte, n int) int {
	for i, r := range routes {
		if len(r.segs) != n {
			continue
		}
		ok := true
		for i, lit := range r.segs {
			if lit != "" && string(segs[i]) != lit {
				ok = false
				break
			}
		}
		if ok {
			return i
		}
	}
	return -1
}

// endpointOf returns the route's endpoint for a method, or nil.
func (r *route) endpointOf(method []byte) *endpoint {
	for i := range r.endpoints {
		if string(method) == r.endpoints[i].method {
			return &r.endpoints[i]
		}
	}
	return nil
}

// pathParams decodes and validates a matched route's parameters. The
// strings it returns are fresh copies.
func (r *route) pathParams(segs *[maxSegments][]byte) (params, *apiError) {
	var p params
	k := 0
	for i, lit := range r.segs {
		if lit != "" {
			continue
		}
		name := r.params[k]
		k++
		v, ok := unescapeSegment(segs[i])
		if !ok {
			e := invalid("path: " + name + " is not validly percent-encoded")
			return p, &e
		}
		switch name {
		case "event":
			if !inventory.ValidEventID(v) {
				e := invalid("path: event must be 1-64 characters from [A-Za-z0-9_.-], starting with a letter or digit")
				return p, &e
			}
			p.event = v
		default: // hold, order
			if !inventory.ValidRecordID(v) {
				e := invalid("path: " + name + " must be 1-64 characters from [A-Za-z0-9_-]")
				return p, &e
			}
			p.id = v
		}
	}
	return p, nil
}

// unescapeSegment percent-decodes one path segment into a new string. A
// '%' not followed by two hex digits is an error; '+' stays '+'.
func unescapeSegment(b []byte) (string, bool) {
	if bytes.IndexByte(b, '%') < 0 {
		return string(b), true
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '%' {
			out = append(out, b[i])
			continue
		}
		if i+2 >= len(b) {
			return "", false
		}
		hi, ok1 := ascii.Unhex(b[i+1])
		lo, ok2 := ascii.Unhex(b[i+2])
		if !ok1 || !ok2 {
			return "", false
		}
		out = append(out, hi<<4|lo)
		i += 2
	}
	return string(out), true
}
