package httpc

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ErrTooLarge is returned by ReadAll for a body over its limit.
var ErrTooLarge = errors.New("httpc: response body too large")

// NewClient returns an HTTP client for calls to one configured endpoint:
// it keeps up to idlePerHost idle connections to it, never follows a
// redirect (a 3xx is returned as is, so the caller sees the status and a
// signed or secret-bearing request is never re-sent elsewhere), and has
// no overall timeout of its own: callers bound each call with a context.
// The client is safe for concurrent use.
func NewClient(idlePerHost int) *http.Client {
	if idlePerHost < 1 {
		idlePerHost = 1
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = idlePerHost
	t.MaxIdleConnsPerHost = idlePerHost
	// Shorter than the common 60-120 s server keep-alive, so an idle
	// connection is dropped here before the server drops it mid-request.
	t.IdleConnTimeout = 50 * time.Second
	return &http.Client{
		Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// ReadAll reads r to its end but at most limit bytes; a longer body is
// ErrTooLarge.
func ReadAll(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: over %d bytes", ErrTooLarge, limit)
	}
	return b, nil
}

// Discard reads and drops up to limit bytes of body and closes it, so
// that the connection can be reused when the rest is short.
func Discard(body io.ReadCloser, limit int64) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, limit))
	_ = body.Close()
}

// CheckURL reports what is wrong with raw as the URL of an endpoint, or
// "" when nothing is: it must be absolute, http or https, with a host and
// without user info or a fragment. With httpsUnlessLoopback, plain http
// is accepted only for a loopback host (a local test or sidecar), for
// endpoints that are sent a secret.
func CheckURL(raw string, httpsUnlessLoopback bool) string {
	if raw == "" {
		return "required"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "not a URL"
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "must be an http or https URL"
	case u.Host == "" || u.Hostname() == "":
		return "must name a host"
	case u.User != nil:
		return "must not carry a user name or password"
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "must not have a #fragment"
	case httpsUnlessLoopback && u.Scheme == "http" && !IsLoopback(u.Hostname()):
		return "must be https (plain http only to a loopback address)"
	}
	return ""
}

// IsLoopback reports whether host (without a port) is localhost or a
// loopback IP address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
