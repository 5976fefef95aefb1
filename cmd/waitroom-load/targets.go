package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// targets are the waitroom replicas the crowd is spread over, as a load
// balancer in front of them would spread it: sticky (a visitor stays on
// one replica while it answers) or random (every request picks one). A
// replica that refuses connections is left out for downFor, and the
// request goes to another, as a balancer's health check would do it.
// Safe for concurrent use.
type targets struct {
	bases  []string // http://host:port, no trailing slash
	sticky bool
	down   []atomic.Int64 // unix nanoseconds until which a replica is left out
	client *http.Client
}

// downFor is how long a replica that refused a connection is left out.
const downFor = time.Second

func newTargets(bases []string, sticky bool, conns int, timeout time.Duration) *targets {
	tr := &http.Transport{
		MaxIdleConns:        conns * len(bases),
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &targets{bases: bases, sticky: sticky, down: make([]atomic.Int64, len(bases)),
		client: &http.Client{Transport: tr, Timeout: timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// pick returns the replica for a visitor's next request: its home when
// sticky (moving home when the home is down), any up replica at random
// otherwise.
func (t *targets) pick(home *int) int {
	n := len(t.bases)
	now := time.Now().UnixNano()
	start := *home
	if !t.sticky {
		start = rand.IntN(n)
	}
	for k := range n {
		i := (start + k) % n
		if t.down[i].Load() <= now {
			if t.sticky {
				*home = i
			}
			return i
		}
	}
	return start // all down: try anyway
}

// markDown leaves replica i out for downFor.
func (t *targets) markDown(i int) {
	t.down[i].Store(time.Now().Add(downFor).UnixNano())
}

// jar is one visitor's cookies, sent to every replica: replicas behind
// one load balancer share a host name, while here they may differ in the
// port (which RFC 6265 cookies ignore) or the host. Not safe for
// concurrent use: a visitor makes one request at a time.
type jar map[string]string

// take keeps the cookies a response sets (and drops those it expires).
func (j jar) take(resp *http.Response) {
	for _, c := range resp.Cookies() {
		if c.MaxAge < 0 || c.Value == "" {
			delete(j, c.Name)
		} else {
			j[c.Name] = c.Value
		}
	}
}

func (j jar) header() string {
	var b strings.Builder
	for k, v := range j {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(k + "=" + v)
	}
	return b.String()
}

// answer is a response read whole.
type answer struct {
	code   int
	header http.Header
	body   []byte
	target int // the replica that answered
}

// retryAfter is the answer's Retry-After (at least 1 s, at most 10 s).
func (a answer) retryAfter() time.Duration {
	s, _ := strconv.Atoi(a.header.Get("Retry-After"))
	return time.Duration(min(max(s, 1), 10)) * time.Second
}

// errDown is a request that reached no replica.
var errDown = errors.New("no replica answered")

// userAgent is what the crowd sends; challenges are bound to it.
const userAgent = "waitroom-load/1 (+https://github.com/waitroom/waitroom)"

// do sends one request for a visitor, moving to another replica when the
// one picked refuses the connection or drops it (at most once per
// replica). Extra headers come in pairs.
func (t *targets) do(ctx context.Context, home *int, j jar, method, path string, body []byte, extra ...string) (answer, error) {
	var last error
	for range len(t.bases) {
		i := t.pick(home)
		req, err := http.NewRequestWithContext(ctx, method, t.bases[i]+path, bytes.NewReader(body))
		if err != nil {
			return answer{}, err
		}
		req.Header.Set("User-Agent", userAgent)
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		if len(j) > 0 {
			req.Header.Set("Cookie", j.header())
		}
		for k := 0; k+1 < len(extra); k += 2 {
			req.Header.Set(extra[k], extra[k+1])
		}
		resp, err := t.client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return answer{}, ctx.Err()
			}
			last = err
			t.markDown(i)
			continue
		}
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if err != nil {
			last = err
			t.markDown(i)
			continue
		}
		j.take(resp)
		return answer{code: resp.StatusCode, header: resp.Header, body: b, target: i}, nil
	}
	return answer{}, fmt.Errorf("%w: %v", errDown, last)
}

// firstErrors keeps the first few distinct error texts, for the report.
type firstErrors struct {
	mu   sync.Mutex
	seen map[string]int
	keep []string
}

func (f *firstErrors) note(msg string) {
	if len(msg) > 200 {
		msg = msg[:200]
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen == nil {
		f.seen = map[string]int{}
	}
	if _, ok := f.seen[msg]; !ok && len(f.keep) < 8 {
		f.keep = append(f.keep, msg)
	}
	f.seen[msg]++
}

func (f *firstErrors) list() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, 0, len(f.keep))
	for _, m := range f.keep {
		out = append(out, fmt.Sprintf("%s (×%d)", m, f.seen[m]))
	}
	return out
}
