package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/waitroom/waitroom/admission/sim/figures"
	"github.com/waitroom/waitroom/internal/ctxsleep"
)

// crowdConfig is the shoppers' behaviour.
type crowdConfig struct {
	Base      string // http://host:port of the waitroom
	T0        time.Time
	Shoppers  int
	Arrive    time.Duration // arrivals spread evenly (with jitter) over this
	Pages     int           // gated pages before the checkout
	Think     time.Duration // between two pages
	NoShow    float64       // share who take the pass and never come
	LateShare float64       // share of no-shows who come back after Late
	Late      time.Duration
	PollConns int // status polls in flight at once, at most
}

// crowd is the shoppers' side of one run. Its counters are safe for
// concurrent use.
type crowd struct {
	cfg    crowdConfig
	client *http.Transport
	polls  chan struct{}

	mu       sync.Mutex
	admitted []int // per second after T0: shoppers told "admitted"
	finished []int // per second: checkouts answered by the origin
	first    time.Time
	last     time.Time

	active, noShows, late, bounced, retries503, errors, joined atomic.Int64
	done                                                       atomic.Int64
	firstErr                                                   atomic.Pointer[string] // the first error, for the report
	refresh                                                    []int                  // refresh_seconds told while waiting, per refreshBuckets; under mu
	rtt                                                        [numRTT][]float64      // client-side round trips, ms, per kind; under mu
}

// Kinds of client-side round trips the crowd times, for the report and
// for calibrating the simulator (admission/sim): what a shopper's HTTP
// calls take through the waitroom, as the shopper sees them.
const (
	rttJoin     = iota // POST /_wr/api/join
	rttStatus          // GET /_wr/api/status
	rttPage            // a gated page answered 200 by the origin
	rttFirstGap        // from the "admitted" status to the first gated page sent
	rtt503             // a gated page answered 503 (the origin's line was full)
	numRTT
)

var rttNames = [numRTT]string{"join", "status", "gated page", "admitted → first page", "503"}

// noteRTT records a client-side round trip of kind k.
func (c *crowd) noteRTT(k int, d time.Duration) {
	c.mu.Lock()
	c.rtt[k] = append(c.rtt[k], float64(d)/float64(time.Millisecond))
	c.mu.Unlock()
}

// roundTrips reports the client-side round trips: count, p50, p95, mean.
func (c *crowd) roundTrips() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts []string
	for k, v := range c.rtt {
		if len(v) == 0 {
			continue
		}
		sum := 0.0
		for _, x := range v {
			sum += x
		}
		parts = append(parts, fmt.Sprintf("%s ×%d p50 %.1fms p95 %.1fms mean %.1fms", rttNames[k], len(v),
			figures.Quantile(v, 0.5), figures.Quantile(v, 0.95), sum/float64(len(v))))
	}
	return strings.Join(parts, "; ")
}

// refreshBuckets are the upper bounds (seconds) refresh_seconds are
// counted in; the last catches the rest.
var refreshBuckets = []float64{1, 2, 5, 30, math.Inf(1)}

// noteRefresh counts a refresh_seconds a waiting shopper was told.
func (c *crowd) noteRefresh(s float64) {
	i, _ := slices.BinarySearch(refreshBuckets, s)
	c.mu.Lock()
	c.refresh[min(i, len(refreshBuckets)-1)]++
	c.mu.Unlock()
}

// refreshTold lists the refresh_seconds told while waiting, with counts.
func (c *crowd) refreshTold() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var parts []string
	for i, n := range c.refresh {
		switch {
		case n == 0:
		case i == 0:
			parts = append(parts, fmt.Sprintf("≤ 1s ×%d", n))
		case math.IsInf(refreshBuckets[i], 1):
			parts = append(parts, fmt.Sprintf("> %gs ×%d", refreshBuckets[i-1], n))
		default:
			parts = append(parts, fmt.Sprintf("%g–%gs ×%d", refreshBuckets[i-1], refreshBuckets[i], n))
		}
	}
	return strings.Join(parts, ", ")
}

// fail counts an error and keeps the first.
func (c *crowd) fail(err error) {
	c.errors.Add(1)
	msg := err.Error()
	c.firstErr.CompareAndSwap(nil, &msg)
}

func newCrowd(cfg crowdConfig) *crowd {
	return &crowd{cfg: cfg, refresh: make([]int, len(refreshBuckets)), polls: make(chan struct{}, max(cfg.PollConns, 1)),
		client: &http.Transport{MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, IdleConnTimeout: time.Minute}}
}

// run starts every shopper at their arrival time and returns when all
// are done or ctx ends.
func (c *crowd) run(ctx context.Context) {
	var wg sync.WaitGroup
	rng := rand.New(rand.NewPCG(uint64(c.cfg.T0.UnixNano()), 15))
	n := c.cfg.Shoppers
	for i := range n {
		at := c.cfg.T0.Add(time.Duration((float64(i) + rng.Float64()) / float64(n) * float64(c.cfg.Arrive)))
		noShow := rng.Float64() < c.cfg.NoShow
		late := noShow && rng.Float64() < c.cfg.LateShare
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !sleepUntil(ctx, at) {
				return
			}
			c.shop(ctx, i, noShow, late)
		}()
	}
	wg.Wait()
	c.client.CloseIdleConnections()
}

func sleepUntil(ctx context.Context, t time.Time) bool {
	return ctxsleep.Sleep(ctx, time.Until(t))
}

// status is the part of the status JSON a shopper reads.
type status struct {
	Status   string  `json:"status"`
	Refresh  float64 `json:"refresh_seconds"`
	Redirect *string `json:"redirect"`
}

// shop is one shopper: the gated page, the join, polls until admitted,
// then the pages and the checkout.
func (c *crowd) shop(ctx context.Context, id int, noShow, late bool) {
	jar, _ := cookiejar.New(nil)
	cl := &http.Client{Transport: c.client, Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if _, _, err := c.get(ctx, cl, "/gated/p1"); err != nil {
		return
	}
	body, _ := json.Marshal(map[string]string{"event": eventID, "return": "/gated/p1"})
	sent := time.Now()
	st, err := c.api(ctx, cl, "POST", "/_wr/api/join", body)
	if err != nil {
		return
	}
	c.noteRTT(rttJoin, time.Since(sent))
	c.joined.Add(1)
	for st.Status != "admitted" {
		c.noteRefresh(st.Refresh)
		wait := time.Duration(st.Refresh * float64(time.Second))
		if wait <= 0 {
			wait = 2 * time.Second
		}
		// As the room's page does (static/web/room.js, jitter): ±20 %,
		// so that visitors do not poll in step.
		wait = time.Duration(float64(wait) * (0.8 + 0.4*rand.Float64()))
		if !ctxsleep.Sleep(ctx, wait) {
			return
		}
		sent := time.Now()
		if st, err = c.api(ctx, cl, "GET", "/_wr/api/status?event="+eventID, nil); err != nil {
			return
		}
		c.noteRTT(rttStatus, time.Since(sent))
	}
	admittedAt := time.Now()
	c.note(&c.admitted, admittedAt)
	if noShow {
		c.noShows.Add(1)
		if !late || !ctxsleep.Sleep(ctx, c.cfg.Late) {
			return
		}
		c.late.Add(1)
	}
	c.active.Add(1)
	defer c.active.Add(-1)
	for p := 1; p <= c.cfg.Pages+1; p++ {
		if p > 1 && !ctxsleep.Sleep(ctx, c.cfg.Think) {
			return
		}
		path := "/gated/p" + strconv.Itoa(p)
		if p > c.cfg.Pages {
			path = checkoutPath
		}
		for try := 0; ; try++ {
			sent := time.Now()
			if p == 1 && try == 0 && !noShow {
				c.noteRTT(rttFirstGap, sent.Sub(admittedAt))
			}
			code, h, err := c.get(ctx, cl, path)
			if err != nil {
				return
			}
			if code == http.StatusServiceUnavailable {
				c.noteRTT(rtt503, time.Since(sent))
				c.retries503.Add(1)
				ra, _ := strconv.Atoi(h.Get("Retry-After"))
				if !ctxsleep.Sleep(ctx, time.Duration(max(ra, 1))*time.Second) {
					return
				}
				continue
			}
			if code != http.StatusOK || h.Get(originMarker) == "" {
				c.bounced.Add(1) // sent back to the room, or refused: gives up
				return
			}
			c.noteRTT(rttPage, time.Since(sent))
			break
		}
	}
	c.done.Add(1)
	c.note(&c.finished, time.Now())
}

// note counts an event in its second after T0 and keeps the first and
// last admission.
func (c *crowd) note(series *[]int, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if series == &c.admitted {
		if c.first.IsZero() {
			c.first = t
		}
		c.last = t
	}
	i := int(t.Sub(c.cfg.T0) / time.Second)
	if i < 0 {
		return
	}
	for len(*series) <= i {
		*series = append(*series, 0)
	}
	(*series)[i]++
}

// get fetches a page and drains it.
func (c *crowd) get(ctx context.Context, cl *http.Client, path string) (int, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", c.cfg.Base+path, nil)
	if err != nil {
		return 0, nil, err
	}
	resp, err := cl.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			c.fail(err)
		}
		return 0, nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header, nil
}

// api calls the waiting room's API (a poll at most PollConns at once),
// retrying a 503 or 429 after its Retry-After.
func (c *crowd) api(ctx context.Context, cl *http.Client, method, path string, body []byte) (status, error) {
	for {
		select {
		case c.polls <- struct{}{}:
		case <-ctx.Done():
			return status{}, ctx.Err()
		}
		code, h, b, err := c.call(ctx, cl, method, path, body)
		<-c.polls
		if err != nil {
			return status{}, err
		}
		if code == http.StatusServiceUnavailable || code == http.StatusTooManyRequests {
			ra, _ := strconv.Atoi(h.Get("Retry-After"))
			if !ctxsleep.Sleep(ctx, time.Duration(max(ra, 1))*time.Second) {
				return status{}, ctx.Err()
			}
			continue
		}
		var st status
		if code != http.StatusOK || json.Unmarshal(b, &st) != nil {
			err := fmt.Errorf("%s %s: %d %.200s", method, path, code, b)
			c.fail(err)
			return status{}, err
		}
		return st, nil
	}
}

func (c *crowd) call(ctx context.Context, cl *http.Client, method, path string, body []byte) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.cfg.Base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := cl.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			c.fail(err)
		}
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, resp.Header, b, err
}

// admittedTotal is how many shoppers were told "admitted".
func (c *crowd) admittedTotal() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.admitted {
		n += v
	}
	return n
}
