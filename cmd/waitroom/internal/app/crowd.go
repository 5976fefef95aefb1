package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/waitroom/waitroom/internal/ctxsleep"
)

// crowd is the demo's simulated visitors: each one is a browser-like HTTP
// client (its own cookies) that arrives during the pre-queue, joins
// through the waiting-room API, polls its status, and once admitted
// looks at the seat map, holds seats and pays in the demo shop, all
// through the proxy. They make the queue a person sees move, and seats
// sell around them. They all come from 127.0.0.1, so demo.yaml's rate
// limits allow for them.
type crowd struct {
	base  string // http://host:port/
	event string
	size  int
	log   *slog.Logger
}

// Pacing of a simulated visitor.
const (
	crowdArrivals = 20 * time.Second // arrivals spread over the pre-queue
	crowdThinkMin = 4 * time.Second  // looking at the seat map, typing a card
	crowdThinkMax = 12 * time.Second
)

func (c *crowd) run(ctx context.Context) {
	var wg sync.WaitGroup
	for i := range c.size {
		wg.Go(func() {
			if err := c.visit(ctx, i); err != nil && ctx.Err() == nil {
				c.log.Debug("demo crowd: a visitor gave up", "visitor", i, "err", err)
			}
		})
	}
	wg.Wait()
}

// status is the part of the status JSON a simulated visitor reads.
type crowdStatus struct {
	Status   string  `json:"status"`
	Refresh  float64 `json:"refresh_seconds"`
	Redirect *string `json:"redirect"`
}

var (
	reCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	reKey  = regexp.MustCompile(`name="key" value="([^"]+)"`)
)

func (c *crowd) visit(ctx context.Context, i int) error {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return err
	}
	hc := &http.Client{Jar: jar, Timeout: 15 * time.Second}
	ua := fmt.Sprintf("Mozilla/5.0 (waitroom demo crowd; visitor %d)", i)
	if !ctxsleep.Sleep(ctx, rand.N(crowdArrivals)) {
		return ctx.Err()
	}
	landing := "/events/" + c.event
	body, _ := json.Marshal(map[string]string{"event": c.event, "return": landing})
	st, err := c.statusCall(ctx, hc, ua, http.MethodPost, c.base+"_wr/api/join", body)
	if err != nil {
		return err
	}
	for st.Status != "admitted" {
		switch st.Status {
		case "sold_out", "closed":
			return nil
		}
		if !ctxsleep.Sleep(ctx, time.Duration(max(st.Refresh, 0.5)*float64(time.Second))) {
			return ctx.Err()
		}
		if st, err = c.statusCall(ctx, hc, ua, http.MethodGet,
			c.base+"_wr/api/status?event="+url.QueryEscape(c.event)+"&return="+url.QueryEscape(landing), nil); err != nil {
			return err
		}
	}
	page, err := c.get(ctx, hc, ua, c.base+strings.TrimPrefix(landing, "/"))
	if err != nil {
		return err
	}
	if !ctxsleep.Sleep(ctx, think()) {
		return ctx.Err()
	}
	section := []string{"lower", "upper"}[rand.N(2)]
	form := url.Values{"mode": {"best"}, "quantity": {strconv.Itoa(1 + rand.N(3))}, "section": {section}}
	checkout, err := c.post(ctx, hc, ua, c.base+strings.TrimPrefix(landing, "/")+"/hold", page, form)
	if err != nil {
		return err
	}
	if !ctxsleep.Sleep(ctx, think()) {
		return ctx.Err()
	}
	form = url.Values{"card_name": {"Demo Crowd"}, "card_number": {"4242 4242 4242 4242"},
		"card_expiry": {"12/34"}, "card_cvc": {"123"}}
	payURL := strings.TrimSuffix(checkout.url, "/") + "/pay"
	_, err = c.post(ctx, hc, ua, payURL, checkout, form)
	return err
}

// fetched is a page and where it was finally served from.
type fetched struct {
	url  string
	body []byte
}

func (c *crowd) statusCall(ctx context.Context, hc *http.Client, ua, method, u string, body []byte) (crowdStatus, error) {
	for {
		req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
		if err != nil {
			return crowdStatus{}, err
		}
		req.Header.Set("User-Agent", ua)
		req.Header.Set("Accept", "application/json")
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := hc.Do(req)
		if err != nil {
			return crowdStatus{}, err
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			if !ctxsleep.Sleep(ctx, 2*time.Second) {
				return crowdStatus{}, ctx.Err()
			}
			continue
		}
		if resp.StatusCode != http.StatusOK {
			return crowdStatus{}, fmt.Errorf("%s %s: %d", method, u, resp.StatusCode)
		}
		var st crowdStatus
		return st, json.Unmarshal(b, &st)
	}
}

func (c *crowd) get(ctx context.Context, hc *http.Client, ua, u string) (fetched, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fetched{}, err
	}
	return c.do(hc, req, ua)
}

// post submits a form of page (its CSRF token and idempotency key added).
func (c *crowd) post(ctx context.Context, hc *http.Client, ua, u string, page fetched, form url.Values) (fetched, error) {
	csrf, key := reCSRF.FindSubmatch(page.body), reKey.FindSubmatch(page.body)
	if csrf == nil || key == nil {
		return fetched{}, fmt.Errorf("no form on %s", page.url)
	}
	form.Set("csrf", string(csrf[1]))
	form.Set("key", string(key[1]))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		return fetched{}, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(hc, req, ua)
}

func (c *crowd) do(hc *http.Client, req *http.Request, ua string) (fetched, error) {
	req.Header.Set("User-Agent", ua)
	req.Header.Set("Accept", "text/html")
	resp, err := hc.Do(req)
	if err != nil {
		return fetched{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fetched{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return fetched{}, fmt.Errorf("%s %s: %d", req.Method, req.URL, resp.StatusCode)
	}
	return fetched{url: resp.Request.URL.String(), body: b}, nil
}

func think() time.Duration {
	return crowdThinkMin + rand.N(crowdThinkMax-crowdThinkMin)
}
