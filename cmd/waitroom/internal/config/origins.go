package config

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"
)

// Origin is one site waitroom forwards to: one or more addresses balanced
// by least load, each with its own keep-alive pool and health check.
type Origin struct {
	// Name routes refer to; 1 to 64 characters from [a-z0-9_-], unique.
	Name string `yaml:"name"`
	// Addresses of the origin's servers, host:port each, at least one.
	Addresses []string `yaml:"addresses"`
	// Connect to the origin over TLS (its certificate is verified).
	TLS bool `yaml:"tls"`
	// Server name sent and verified with TLS; empty uses the address's
	// host.
	TLSServerName string `yaml:"tls_server_name"`
	// PEM file with the CA certificates that verify the origin's
	// certificate; empty uses the system's roots.
	TLSCAFile string `yaml:"tls_ca_file"`
	// Host header sent to the origin; empty keeps the client's.
	Host string `yaml:"host"`
	// Most connections per address.
	MaxConns int `yaml:"max_conns"`
	// Most requests in flight to this origin at once; beyond it admitted
	// visitors get 503 with Retry-After (load shedding), never a hang.
	// serve.reserved.admitted of it is kept for admitted visitors. 0
	// means max_conns times the number of addresses.
	MaxInFlight int `yaml:"max_in_flight"`
	// Longest time to connect to an address.
	DialTimeout Duration `yaml:"dial_timeout"`
	// Longest time to wait for the origin's response (headers and body).
	ReadTimeout Duration `yaml:"read_timeout"`
	// Longest time to send a request to the origin.
	WriteTimeout Duration `yaml:"write_timeout"`
	// Longest time a request waits for a free connection before it is
	// shed; 0 sheds at once when every connection is busy.
	MaxConnWait Duration `yaml:"max_conn_wait"`
	// How long an idle connection to the origin is kept. Keep it shorter
	// than the origin's own keep-alive timeout, or requests race the
	// origin closing the connection.
	MaxIdleConnDuration Duration `yaml:"max_idle_conn_duration"`
	// Read buffer per connection, in bytes; it bounds the origin's
	// response header block (4 KiB to 1 MiB).
	ReadBufferBytes int `yaml:"read_buffer_bytes"`
	// Largest response body, in bytes; bodies stream to the client. 0
	// means no limit.
	MaxResponseBodyBytes int64 `yaml:"max_response_body_bytes"`
	// Retries on another connection or address after a connection
	// failure, for idempotent requests (GET, HEAD, OPTIONS, PUT, DELETE)
	// only; 0 to 10.
	Retries int `yaml:"retries"`
	// Active health checks of every address; an unhealthy address gets no
	// requests until it recovers.
	HealthCheck HealthCheck `yaml:"health_check"`
}

// HealthCheck configures an origin's active health checks.
type HealthCheck struct {
	// Path requested with GET on every address; any answer below 500
	// within timeout is healthy (a site without a health endpoint answers
	// 404 there and is up; a 5xx, a timeout or a refused connection is
	// down). Empty (the default) checks with a plain TCP connect instead.
	Path string `yaml:"path"`
	// Turn health checks off: every address is always taken as healthy,
	// and a request to one that is down fails (502) when it gets there.
	Disabled bool `yaml:"disabled"`
	// Time between checks of one address.
	Interval Duration `yaml:"interval"`
	// Longest time a check may take; less than interval.
	Timeout Duration `yaml:"timeout"`
	// Failed checks in a row that make an address unhealthy.
	UnhealthyAfter int `yaml:"unhealthy_after"`
	// Passed checks in a row that make an unhealthy address healthy again.
	HealthyAfter int `yaml:"healthy_after"`
}

// Route maps paths to an event and an origin.
type Route struct {
	// Paths starting with this text match, such as /events/summer (which
	// also matches /events/summer-vip: end it with / to match a directory
	// only). Set this or glob.
	Prefix string `yaml:"prefix"`
	// Paths matching this pattern match: path.Match syntax, where "*"
	// does not cross "/" and "**" does, such as /events/*/checkout or
	// /static/**. Set this or prefix.
	Glob string `yaml:"glob"`
	// The event whose pass the paths need; empty for action pass.
	Event string `yaml:"event"`
	// Name of the origin that serves the paths; empty is the first origin.
	Origin string `yaml:"origin"`
	// queue (without a valid pass: the waiting room), block (without a
	// valid pass: 403) or pass (always forwarded, no event). Empty is
	// queue when event is set, else pass.
	Action RouteAction `yaml:"action"`
	// Match the path's ASCII case exactly. Leave it false unless every
	// origin behind the route is known to be case-sensitive: IIS,
	// ASP.NET, case-insensitive file systems and many routers serve
	// /EVENTS/x as /events/x.
	CaseSensitive bool `yaml:"case_sensitive"`
	// Let paths with an encoded slash or backslash (%2F, %5C) through this
	// route, still encoded; they are refused with 400 everywhere else,
	// since origins disagree on whether %2F separates segments.
	EncodedSlashes bool `yaml:"encoded_slashes"`
	// Let TRACE requests through this route; they get 405 everywhere else.
	// CONNECT is always refused.
	AllowTrace bool `yaml:"allow_trace"`
}

// Unmatched is what happens to a path no route matches.
type Unmatched struct {
	// pass (forwarded without a queue), queue or block (need event's
	// pass, as a route with that action would). Empty is pass.
	Action RouteAction `yaml:"action"`
	// The event whose pass unmatched paths need with queue or block.
	Event string `yaml:"event"`
	// Name of the origin unmatched paths go to; empty is the first origin.
	Origin string `yaml:"origin"`
}

// EffectiveAction is the action with the default applied: pass.
func (u *Unmatched) EffectiveAction() RouteAction {
	if u.Action == "" {
		return ActionPass
	}
	return u.Action
}

// RouteAction is a value of routes[].action.
type RouteAction string

// Values of routes[].action.
const (
	ActionQueue RouteAction = "queue"
	ActionPass  RouteAction = "pass"
	ActionBlock RouteAction = "block"
)

// Defaults of origins[].
const (
	DefaultOriginMaxConns       = 512
	DefaultDialTimeout          = 3 * time.Second
	DefaultOriginReadTimeout    = 30 * time.Second
	DefaultOriginWriteTimeout   = 30 * time.Second
	DefaultMaxConnWait          = 50 * time.Millisecond
	DefaultMaxIdleConnDuration  = 30 * time.Second
	DefaultReadBufferBytes      = 32 << 10
	DefaultRetries              = 1
	DefaultHealthCheckPath      = "" // a TCP connect
	DefaultHealthCheckInterval  = 5 * time.Second
	DefaultHealthCheckTimeout   = 2 * time.Second
	DefaultHealthUnhealthyAfter = 3
	DefaultHealthHealthyAfter   = 2
)

// Limits of origins[] that Validate enforces.
const (
	MaxNameLength      = 64
	MinReadBufferBytes = 4 << 10
	MaxReadBufferBytes = 1 << 20
	MaxRetries         = 10
)

// DefaultOrigin is the value every element of origins starts from before
// the file's keys are applied.
func DefaultOrigin() Origin {
	return Origin{
		Addresses:           []string{},
		MaxConns:            DefaultOriginMaxConns,
		DialTimeout:         Duration(DefaultDialTimeout),
		ReadTimeout:         Duration(DefaultOriginReadTimeout),
		WriteTimeout:        Duration(DefaultOriginWriteTimeout),
		MaxConnWait:         Duration(DefaultMaxConnWait),
		MaxIdleConnDuration: Duration(DefaultMaxIdleConnDuration),
		ReadBufferBytes:     DefaultReadBufferBytes,
		Retries:             DefaultRetries,
		HealthCheck: HealthCheck{
			Path:           DefaultHealthCheckPath,
			Interval:       Duration(DefaultHealthCheckInterval),
			Timeout:        Duration(DefaultHealthCheckTimeout),
			UnhealthyAfter: DefaultHealthUnhealthyAfter,
			HealthyAfter:   DefaultHealthHealthyAfter,
		},
	}
}

// UnmarshalYAML decodes an origin, starting from DefaultOrigin.
func (o *Origin) UnmarshalYAML(n *yaml.Node) error {
	*o = DefaultOrigin()
	type plain Origin
	return decodeMapping(n, "Origin", (*plain)(o))
}

// MaxInFlightLimit is the origin's shedding limit: max_in_flight, or
// max_conns times the number of addresses when that is 0.
func (o *Origin) MaxInFlightLimit() int {
	if o.MaxInFlight > 0 {
		return o.MaxInFlight
	}
	return o.MaxConns * len(o.Addresses)
}

// EffectiveAction is the route's action with the default applied: queue
// when an event is set, else pass.
func (r *Route) EffectiveAction() RouteAction {
	switch {
	case r.Action != "":
		return r.Action
	case r.Event != "":
		return ActionQueue
	}
	return ActionPass
}

// decodeMapping decodes the mapping n into out, a pointer to a method-less
// copy of the struct called name, for an UnmarshalYAML that has filled in
// defaults first. Anything but a mapping is reported as yaml.v3 would.
func decodeMapping(n *yaml.Node, name string, out any) error {
	if n.Kind != yaml.MappingNode {
		value := ""
		if n.Kind == yaml.ScalarNode {
			value = n.Value
			if len(value) > 10 {
				value = value[:7] + "..."
			}
			value = " `" + value + "`"
		}
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: cannot unmarshal %s%s into config.%s", n.Line, n.ShortTag(), value, name)}}
	}
	return n.Decode(out)
}
