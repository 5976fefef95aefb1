package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/internal/ctxsleep"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/client"
)

// crowdConfig is what the crowd does.
type crowdConfig struct {
	Event    string
	Gate     string // the gated path visitors want (the join's return path)
	Complete string // the origin path whose answer says the visitor is done ("": none)
	Visitors int
	Arrive   time.Duration // arrivals spread evenly over this
	Think    time.Duration // at the origin, before buying
	MaxPoll  time.Duration // longest wait between two polls (0: as told)
	Pages    int           // gated pages an admitted visitor asks for (at least 1)
	// For measuring one operation at a time (the capacity model): a
	// visitor stops after the join (JoinOnly) or after Polls polls.
	JoinOnly bool
	Polls    int

	Inventory      *client.Client // nil: no purchase
	InventoryEvent string
	Section        string // best available in this section
	Tier           string // or in this tier
}

// crowd runs the visitors and counts what happened. Its counters are safe
// for concurrent use.
type crowd struct {
	cfg  crowdConfig
	t    *targets
	errs firstErrors

	challenges, solved, joinTries, joins, joinRefused, polls, pollErrors atomic.Int64
	retried503, retried429, admitted, originOK, bounced, holds           atomic.Int64
	soldOut, confirms, buyErrors, completes, completeAcked, gaveUp       atomic.Int64

	mu      sync.Mutex
	joinAt  []time.Time
	pollAt  []time.Time
	visits  []*visit // every visitor who got a 2xx join
	orders  []inventory.Order
	started time.Time
}

// visit is what one visitor saw: the numbers the checks need.
type visit struct {
	id         int
	joinedAt   time.Time
	admittedAt time.Time // zero: never admitted
	etaHigh    int       // seconds, shown at the join (or first shown); -1: none
	etaFrom    time.Time // when that ETA was shown
	visitor    string    // hex visitor id from the status ("": admitted at once, no place)
	lane       string
	tranche    int
}

// status is the part of the status JSON the crowd reads.
type status struct {
	Status   string   `json:"status"`
	Position *int64   `json:"position"`
	ETAHigh  int      `json:"eta_high"`
	ETASecs  int      `json:"eta_seconds"`
	Refresh  float64  `json:"refresh_seconds"`
	Redirect *string  `json:"redirect"`
	Lane     string   `json:"lane"`
	Tranche  *int     `json:"tranche"`
	Visitor  string   `json:"visitor"`
	Reason   string   `json:"reason"`
	Error    string   `json:"error"`
	Message  string   `json:"message"`
	_        struct{} // the rest is ignored
}

// hasETA reports whether the status shows an ETA to hold the room to:
// the visitor has a number (a position) and a range.
func (s status) hasETA() bool {
	return s.Position != nil && *s.Position >= 0 && s.ETAHigh > 0
}

// challengeAnswer is the part of GET {prefix}/api/challenge the crowd reads.
type challengeAnswer struct {
	Action string `json:"action"`
	PoW    struct {
		Token   string `json:"token"`
		Seed    string `json:"seed"`
		Bits    uint8  `json:"bits"`
		Puzzles uint8  `json:"puzzles"`
	} `json:"pow"`
}

// errGiveUp ends a visitor: refused for good, or out of time.
var errGiveUp = errors.New("gave up")

func newCrowd(cfg crowdConfig, t *targets) *crowd { return &crowd{cfg: cfg, t: t} }

// run starts every visitor at their arrival time and returns when all
// are done or ctx ends.
func (c *crowd) run(ctx context.Context) {
	c.started = time.Now()
	var wg sync.WaitGroup
	n := c.cfg.Visitors
	for i := range n {
		at := c.started.Add(time.Duration((float64(i) + rand.Float64()) / float64(n) * float64(c.cfg.Arrive)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !ctxsleep.Sleep(ctx, time.Until(at)) {
				return
			}
			c.visit(ctx, i)
		}()
	}
	wg.Wait()
	c.t.client.CloseIdleConnections()
}

// visit is one visitor's flow: challenge and join, polls until admitted,
// the origin, the purchase, done.
func (c *crowd) visit(ctx context.Context, id int) {
	v := &visit{id: id, etaHigh: -1}
	home := id % len(c.t.bases)
	j := jar{}
	st, err := c.join(ctx, &home, j, v)
	if err != nil {
		c.gaveUp.Add(1)
		return
	}
	if c.cfg.JoinOnly {
		return
	}
	for polls := 0; st.Status != "admitted"; polls++ {
		if c.cfg.Polls > 0 && polls == c.cfg.Polls {
			return
		}
		switch st.Status {
		case "sold_out", "closed":
			c.gaveUp.Add(1)
			return
		}
		wait := time.Duration(st.Refresh * float64(time.Second))
		if wait <= 0 {
			wait = 2 * time.Second
		}
		if c.cfg.MaxPoll > 0 {
			wait = min(wait, c.cfg.MaxPoll)
		}
		// As the room's page does: ±20 %, so that visitors do not poll in step.
		wait = time.Duration(float64(wait) * (0.8 + 0.4*rand.Float64()))
		if !ctxsleep.Sleep(ctx, wait) {
			return
		}
		next, err := c.poll(ctx, &home, j)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			continue // polled again after the wait
		}
		st = next
		if v.etaHigh < 0 && st.hasETA() {
			v.etaHigh, v.etaFrom = st.ETAHigh, time.Now()
		}
	}
	c.mu.Lock()
	v.admittedAt = time.Now()
	c.mu.Unlock()
	c.admitted.Add(1)
	c.shop(ctx, &home, j, v, st)
}

// join fetches and solves a challenge and joins, until a join is
// acknowledged (2xx) or refused for good.
func (c *crowd) join(ctx context.Context, home *int, j jar, v *visit) (status, error) {
	body := map[string]any{"event": c.cfg.Event, "return": c.cfg.Gate}
	for {
		a, err := c.t.do(ctx, home, j, "GET", "/_wr/api/challenge?event="+url.QueryEscape(c.cfg.Event), nil)
		if err != nil {
			if ctx.Err() != nil {
				return status{}, err
			}
			c.errs.note("challenge: " + err.Error())
			if !ctxsleep.Sleep(ctx, time.Second) {
				return status{}, ctx.Err()
			}
			continue
		}
		if c.retryable(ctx, a) {
			continue
		}
		c.challenges.Add(1)
		var ch challengeAnswer
		if a.code != http.StatusOK || json.Unmarshal(a.body, &ch) != nil {
			c.errs.note(fmt.Sprintf("challenge: %d %s", a.code, a.body))
			return status{}, errGiveUp
		}
		delete(body, "pow")
		switch ch.Action {
		case "none":
		case "pow":
			seed, err := hex.DecodeString(ch.PoW.Seed)
			if err != nil || len(seed) != 16 {
				c.errs.note("challenge: seed " + ch.PoW.Seed)
				return status{}, errGiveUp
			}
			nonces := challenge.Solve([16]byte(seed), ch.PoW.Bits, ch.PoW.Puzzles)
			c.solved.Add(1)
			body["pow"] = map[string]any{"token": ch.PoW.Token, "nonces": nonces}
		default:
			c.errs.note("challenge: action " + ch.Action + " (the crowd solves proof of work only)")
			return status{}, errGiveUp
		}
		raw, _ := json.Marshal(body)
		c.joinTries.Add(1)
		a, err = c.t.do(ctx, home, j, "POST", "/_wr/api/join", raw)
		if err != nil {
			if ctx.Err() != nil {
				return status{}, err
			}
			c.errs.note("join: " + err.Error())
			continue // with a new challenge: this one may be spent
		}
		if c.retryable(ctx, a) {
			continue
		}
		var st status
		if a.code/100 != 2 || json.Unmarshal(a.body, &st) != nil {
			if a.code == http.StatusConflict || a.code == http.StatusForbidden && strings.Contains(string(a.body), "challenge_expired") {
				continue // challenge_used (a retry of a join that went through) or expired: a new one
			}
			c.joinRefused.Add(1)
			c.errs.note(fmt.Sprintf("join: %d %s", a.code, a.body))
			return status{}, errGiveUp
		}
		now := time.Now()
		c.joins.Add(1)
		v.joinedAt = now
		v.visitor, v.lane = st.Visitor, st.Lane
		if st.Tranche != nil {
			v.tranche = *st.Tranche
		}
		if st.hasETA() {
			v.etaHigh, v.etaFrom = st.ETAHigh, now
		}
		c.mu.Lock()
		c.joinAt = append(c.joinAt, now)
		c.visits = append(c.visits, v) // whatever follows: the checks need every acknowledged join
		c.mu.Unlock()
		return st, nil
	}
}

// retryable waits out a 503 or 429 (the store briefly unavailable, a
// replica shedding, a rate limit) and reports whether it did.
func (c *crowd) retryable(ctx context.Context, a answer) bool {
	switch a.code {
	case http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		c.retried503.Add(1)
	case http.StatusTooManyRequests:
		c.retried429.Add(1)
	default:
		return false
	}
	ctxsleep.Sleep(ctx, a.retryAfter())
	return true
}

// poll asks for the visitor's status once.
func (c *crowd) poll(ctx context.Context, home *int, j jar) (status, error) {
	a, err := c.t.do(ctx, home, j, "GET", "/_wr/api/status?event="+url.QueryEscape(c.cfg.Event), nil)
	if err != nil {
		c.pollErrors.Add(1)
		if ctx.Err() == nil {
			c.errs.note("status: " + err.Error())
		}
		return status{}, err
	}
	c.polls.Add(1)
	c.mu.Lock()
	c.pollAt = append(c.pollAt, time.Now())
	c.mu.Unlock()
	var st status
	if a.code != http.StatusOK || json.Unmarshal(a.body, &st) != nil {
		c.pollErrors.Add(1)
		if a.code != http.StatusServiceUnavailable {
			c.errs.note(fmt.Sprintf("status: %d %s", a.code, a.body))
		}
		return status{}, fmt.Errorf("status %d", a.code)
	}
	return st, nil
}

// shop is an admitted visitor: the gated page at the origin, a seat held
// and confirmed through the sidecar, then the origin's "done" page.
func (c *crowd) shop(ctx context.Context, home *int, j jar, v *visit, st status) {
	page := c.cfg.Gate
	if st.Redirect != nil && strings.HasPrefix(*st.Redirect, "/") {
		page = *st.Redirect
	}
	who := strconv.Itoa(v.id)
	for p := 0; p < max(c.cfg.Pages, 1); {
		a, err := c.t.do(ctx, home, j, "GET", page, nil, "X-Load-Visitor", who)
		if err != nil {
			c.errs.note("origin: " + err.Error())
			c.gaveUp.Add(1)
			return
		}
		if c.retryable(ctx, a) {
			continue
		}
		if a.code != http.StatusOK || strings.Contains(string(a.body), `id="wr-config"`) {
			c.bounced.Add(1)
			c.errs.note(fmt.Sprintf("origin: %d %.120s", a.code, a.body))
			return
		}
		c.originOK.Add(1)
		p++
	}
	ctxsleep.Sleep(ctx, c.cfg.Think)
	if c.cfg.Inventory != nil {
		c.buy(ctx, v)
	}
	if c.cfg.Complete == "" {
		return
	}
	for {
		a, err := c.t.do(ctx, home, j, "GET", c.cfg.Complete, nil, "X-Load-Visitor", who)
		if err != nil {
			c.errs.note("complete: " + err.Error())
			return
		}
		if c.retryable(ctx, a) {
			continue
		}
		if a.code == http.StatusOK {
			c.completes.Add(1)
			if a.header.Get("X-Waitroom-Complete") != "" {
				c.completeAcked.Add(1) // the origin said so; the proxy strips it or not
			}
		} else {
			c.errs.note(fmt.Sprintf("complete: %d %.120s", a.code, a.body))
		}
		return
	}
}

// buy holds one seat (best available) and confirms it, each step retried
// with its idempotency key until it is answered, so a retry never buys
// twice.
func (c *crowd) buy(ctx context.Context, v *visit) {
	user := "load-" + strconv.Itoa(v.id)
	req := inventory.HoldRequest{User: user, IdempotencyKey: user + "-hold", Actor: "waitroom-load"}
	if c.cfg.Tier != "" {
		req.Best = &inventory.BestRequest{Tier: c.cfg.Tier, Quantity: 1}
	} else {
		req.Best = &inventory.BestRequest{Section: c.cfg.Section, Quantity: 1}
	}
	var h inventory.Hold
	err := c.retry(ctx, func() (err error) {
		h, err = c.cfg.Inventory.Hold(ctx, c.cfg.InventoryEvent, req)
		return err
	})
	switch {
	case errors.Is(err, inventory.ErrSoldOut), errors.Is(err, inventory.ErrNotEnoughSeats):
		c.soldOut.Add(1)
		return
	case err != nil:
		c.buyErrors.Add(1)
		c.errs.note("hold: " + err.Error())
		return
	}
	c.holds.Add(1)
	var o inventory.Order
	err = c.retry(ctx, func() (err error) {
		o, err = c.cfg.Inventory.Confirm(ctx, c.cfg.InventoryEvent, h.ID,
			inventory.ConfirmRequest{PaymentRef: "load-" + h.ID, IdempotencyKey: user + "-confirm", Actor: "waitroom-load"})
		return err
	})
	if err != nil {
		c.buyErrors.Add(1)
		c.errs.note("confirm: " + err.Error())
		return
	}
	c.confirms.Add(1)
	c.mu.Lock()
	c.orders = append(c.orders, o)
	c.mu.Unlock()
}

// retry calls f until it succeeds, fails with an answer of the sidecar's
// (an *inventory.Error other than unavailable), or 30 s pass.
func (c *crowd) retry(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := f()
		var ie *inventory.Error
		if err == nil || errors.As(err, &ie) && !errors.Is(err, inventory.ErrUnavailable) || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		if !ctxsleep.Sleep(ctx, 200*time.Millisecond) {
			return err
		}
	}
}
