package upstream

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Defaults New applies to the zero fields of a Config.
const (
	DefaultMaxConns            = 512
	DefaultDialTimeout         = 3 * time.Second
	DefaultReadTimeout         = 30 * time.Second
	DefaultWriteTimeout        = 30 * time.Second
	DefaultMaxIdleConnDuration = 30 * time.Second
	DefaultReadBufferSize      = 32 << 10
	DefaultBufferBodySize      = 64 << 10

	DefaultHealthInterval       = 5 * time.Second
	DefaultHealthTimeout        = 2 * time.Second
	DefaultHealthUnhealthyAfter = 3
	DefaultHealthHealthyAfter   = 2
)

// Limits New enforces.
const (
	MinReadBufferSize = 4 << 10
	MaxReadBufferSize = 1 << 20
	MaxRetries        = 10
)

// Config describes one origin: a pool of addresses serving the same site.
// New reads it once; later changes have no effect.
type Config struct {
	// Name identifies the origin in logs and metrics; required.
	Name string
	// Addrs are the origin's servers, host:port each, at least one.
	// Requests go to the healthy address with the fewest requests in
	// flight.
	Addrs []string
	// TLS makes every connection to the origin HTTPS, its certificate
	// verified against RootCAs.
	TLS bool
	// TLSServerName is the name sent (SNI) and verified; empty uses the
	// host of each address.
	TLSServerName string
	// RootCAs verify the origin's certificate; nil uses the system's.
	RootCAs *x509.CertPool
	// Host is the Host header sent to the origin; empty keeps the
	// client's.
	Host string
	// MaxConns bounds the connections per address; DefaultMaxConns when 0.
	MaxConns int
	// MaxInFlight bounds the requests in flight to the origin (counted
	// until the response body has been relayed, or the WebSocket closed);
	// beyond it Forward returns ErrShed at once. 0 means MaxConns times
	// the number of addresses.
	MaxInFlight int
	// ReservedAdmitted is the share of MaxInFlight (rounded up) that only
	// admitted requests (Forward.Admitted) may use: the others are shed
	// (ErrShed wrapping ErrReserved) once they hold the rest. 0 to less
	// than 1.
	ReservedAdmitted float64
	// DialTimeout bounds connecting to an address, TLS handshake
	// included; DefaultDialTimeout when 0.
	DialTimeout time.Duration
	// ReadTimeout bounds the wait for the origin's response headers after
	// the request was sent, and every wait for more response body (an
	// idle limit, so long downloads and event streams live on as long as
	// bytes flow); DefaultReadTimeout when 0.
	ReadTimeout time.Duration
	// WriteTimeout bounds every write of the request to the origin (an
	// idle limit while a request body streams); DefaultWriteTimeout when 0.
	WriteTimeout time.Duration
	// MaxConnWaitTimeout is how long a request waits for a free
	// connection when an address has MaxConns busy ones; 0 sheds it at
	// once (ErrShed).
	MaxConnWaitTimeout time.Duration
	// MaxIdleConnDuration closes keep-alive connections idle that long;
	// DefaultMaxIdleConnDuration when 0. Keep it below the origin's own
	// keep-alive timeout. (A connection idle for more than a second is
	// probed before it is used.)
	MaxIdleConnDuration time.Duration
	// ReadBufferSize is the read buffer per connection, which bounds the
	// origin's response header block; DefaultReadBufferSize when 0, else
	// MinReadBufferSize to MaxReadBufferSize.
	ReadBufferSize int
	// BufferBodySize: a response whose Content-Length is at most this is
	// read whole before Forward returns, which frees the origin connection
	// before a slow client has read it; larger, chunked or close-delimited
	// bodies stream. DefaultBufferBodySize when 0; negative streams every
	// body.
	BufferBodySize int
	// MaxRequestBodySize bounds a request body: a larger Content-Length is
	// refused before the origin is contacted, a chunked body is cut off
	// (the origin sees an unfinished request) when it grows beyond it.
	// ErrTooLarge either way. 0 means no limit. (fasthttp's
	// Server.MaxRequestBodySize does not apply to streamed request
	// bodies.)
	MaxRequestBodySize int64
	// MaxResponseBodySize bounds a response body; a larger declared length
	// is ErrUpstream, and a stream that grows beyond it is cut off (the
	// client's connection is closed). 0 means no limit.
	MaxResponseBodySize int64
	// Retries is how many more attempts (on another connection, preferably
	// another address) a request gets after a connection failure before
	// any response byte, for idempotent requests without a body only (GET,
	// HEAD, OPTIONS, TRACE, PUT, DELETE); 0 to MaxRetries. A failure to
	// connect is retried on the other addresses whatever the request,
	// since nothing reached the origin.
	Retries int
	// Health configures active health checks.
	Health HealthCheck
	// Dial, when set, opens connections instead of TCP to the address
	// (unix sockets, tests); TLS is still added when TLS is set.
	Dial func(addr string) (net.Conn, error)
}

// HealthCheck configures the active health checks of an origin's
// addresses.
type HealthCheck struct {
	// Path is requested with GET on every address; any answer below 500
	// within Timeout passes (a site without a health endpoint answers 404
	// and is up; a 5xx, a timeout or a refused connection is down). Empty
	// makes a check a plain TCP connect when TCP is set, and disables
	// health checks otherwise: every address is always healthy.
	Path string
	// TCP, with Path empty, checks an address by opening a TCP connection
	// to it within Timeout (and closing it at once).
	TCP bool
	// Interval between two checks of one address; DefaultHealthInterval
	// when 0.
	Interval time.Duration
	// Timeout of one check, less than Interval; DefaultHealthTimeout when
	// 0 (or Interval/2 when that is shorter).
	Timeout time.Duration
	// UnhealthyAfter failed checks in a row take an address out of
	// rotation; DefaultHealthUnhealthyAfter when 0.
	UnhealthyAfter int
	// HealthyAfter passed checks in a row put it back;
	// DefaultHealthHealthyAfter when 0.
	HealthyAfter int
}

// withDefaults returns cfg with the zero fields set to their defaults, or
// every problem found.
func (cfg Config) withDefaults() (Config, error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("upstream: %s: "+format, append([]any{field}, args...)...))
	}
	if cfg.Name == "" {
		bad("name", "is required")
	}
	if len(cfg.Addrs) == 0 {
		bad("addrs", "at least one address is required")
	}
	for i, a := range cfg.Addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil || host == "" {
			bad(fmt.Sprintf("addrs[%d]", i), "%q is not host:port", a)
			continue
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			bad(fmt.Sprintf("addrs[%d]", i), "%q has no valid port", a)
		}
	}
	if strings.ContainsAny(cfg.Host, " \t\r\n/") {
		bad("host", "%q is not a host", cfg.Host)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"max_conns", cfg.MaxConns}, {"max_in_flight", cfg.MaxInFlight}, {"retries", cfg.Retries},
		{"health.unhealthy_after", cfg.Health.UnhealthyAfter}, {"health.healthy_after", cfg.Health.HealthyAfter}} {
		if f.v < 0 {
			bad(f.name, "must not be negative")
		}
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"dial_timeout", cfg.DialTimeout}, {"read_timeout", cfg.ReadTimeout}, {"write_timeout", cfg.WriteTimeout},
		{"max_conn_wait_timeout", cfg.MaxConnWaitTimeout}, {"max_idle_conn_duration", cfg.MaxIdleConnDuration},
		{"health.interval", cfg.Health.Interval}, {"health.timeout", cfg.Health.Timeout}} {
		if f.v < 0 {
			bad(f.name, "must not be negative")
		}
	}
	if cfg.MaxResponseBodySize < 0 {
		bad("max_response_body_size", "must not be negative")
	}
	if cfg.MaxRequestBodySize < 0 {
		bad("max_request_body_size", "must not be negative")
	}
	if !(cfg.ReservedAdmitted >= 0 && cfg.ReservedAdmitted < 1) {
		bad("reserved_admitted", "must be 0 to less than 1")
	}
	if cfg.Retries > MaxRetries {
		bad("retries", "must be at most %d", MaxRetries)
	}
	if cfg.ReadBufferSize != 0 && (cfg.ReadBufferSize < MinReadBufferSize || cfg.ReadBufferSize > MaxReadBufferSize) {
		bad("read_buffer_size", "must be %d to %d bytes", MinReadBufferSize, MaxReadBufferSize)
	}
	if p := cfg.Health.Path; p != "" && (p[0] != '/' || strings.ContainsAny(p, " \t\r\n#")) {
		bad("health.path", "%q is not an absolute path", p)
	}
	if len(errs) > 0 {
		return cfg, errors.Join(errs...)
	}

	setDefault(&cfg.MaxConns, DefaultMaxConns)
	if cfg.MaxInFlight == 0 {
		cfg.MaxInFlight = cfg.MaxConns * len(cfg.Addrs)
	}
	setDefault(&cfg.DialTimeout, DefaultDialTimeout)
	setDefault(&cfg.ReadTimeout, DefaultReadTimeout)
	setDefault(&cfg.WriteTimeout, DefaultWriteTimeout)
	setDefault(&cfg.MaxIdleConnDuration, DefaultMaxIdleConnDuration)
	setDefault(&cfg.ReadBufferSize, DefaultReadBufferSize)
	setDefault(&cfg.BufferBodySize, DefaultBufferBodySize)
	h := &cfg.Health
	setDefault(&h.Interval, DefaultHealthInterval)
	if h.Timeout == 0 {
		h.Timeout = min(DefaultHealthTimeout, h.Interval/2)
	}
	if h.Timeout >= h.Interval {
		return cfg, fmt.Errorf("upstream: health.timeout: %v must be less than health.interval %v", h.Timeout, h.Interval)
	}
	setDefault(&h.UnhealthyAfter, DefaultHealthUnhealthyAfter)
	setDefault(&h.HealthyAfter, DefaultHealthHealthyAfter)
	return cfg, nil
}

func setDefault[T int | time.Duration](v *T, def T) {
	if *v == 0 {
		*v = def
	}
}

// idempotent reports whether a request method may be repeated without
// changing the outcome (RFC 9110 §9.2.2).
func idempotent(method []byte) bool {
	switch string(method) {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}
