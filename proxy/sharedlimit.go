package proxy

import (
	"context"
	"net/netip"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"
)

// SharedLimiter is a rate-limit budget every replica shares (package
// redislimit implements it over Redis). Allow takes a token from addr's
// buckets when they have one; Wait tells how long until they would,
// taking nothing. An error says nothing about the budget.
type SharedLimiter interface {
	Allow(ctx context.Context, addr netip.Addr) (ok bool, retryAfter time.Duration, err error)
	Wait(ctx context.Context, addr netip.Addr) (time.Duration, error)
}

// SharedLimitTimeout bounds a shared budget's answer; past it the
// replica's own buckets decide alone.
const SharedLimitTimeout = 100 * time.Millisecond

// rateAllowed takes a token for a request from ip at now from the API's
// buckets: the replica's own, then, for what passed them, the shared
// budget. It reports whether the request may pass, and when it may not,
// how long until it would.
func (p *Proxy) rateAllowed(ip netip.Addr, now time.Time) (bool, time.Duration) {
	l := p.opts.Limiter
	if l == nil {
		return true, 0
	}
	var ok bool
	var wait time.Duration
	if p.realClock {
		ok, wait = l.AllowAt(ip, now) // the limiter's clock is the real one
	} else {
		ok, wait = l.Allow(ip)
	}
	if !ok || p.opts.SharedLimiter == nil {
		return ok, wait
	}
	ctx, cancel := context.WithTimeout(context.Background(), SharedLimitTimeout)
	defer cancel()
	ok, wait, err := p.opts.SharedLimiter.Allow(ctx, ip)
	if err != nil {
		p.sharedFailed(err)
		return true, 0
	}
	return ok, wait
}

// sharedWrongCodesWait is how long ip must wait before trying an invite
// code by the shared wrong-invite budget (0 without one, or when it
// cannot answer in time).
func (p *Proxy) sharedWrongCodesWait(ip netip.Addr) time.Duration {
	if p.opts.SharedWrongInvites == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), SharedLimitTimeout)
	defer cancel()
	wait, err := p.opts.SharedWrongInvites.Wait(ctx, ip)
	if err != nil {
		p.sharedFailed(err)
		return 0
	}
	return wait
}

// chargeWrongCode takes a wrong code from ip's budgets: the replica's
// and the shared one.
func (p *Proxy) chargeWrongCode(ip netip.Addr, now time.Time) {
	p.wrongCodes.AllowAt(ip, now)
	if p.opts.SharedWrongInvites == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), SharedLimitTimeout)
	defer cancel()
	if _, _, err := p.opts.SharedWrongInvites.Allow(ctx, ip); err != nil {
		p.sharedFailed(err)
	}
}

// sharedFailed counts a shared budget that did not answer, and says so
// at most once a minute (a Redis failover would say it at every request).
func (p *Proxy) sharedFailed(err error) {
	p.m.sharedLimitErrors.Inc()
	now := time.Now().UnixNano()
	last := p.sharedWarned.Load()
	if now-last >= int64(time.Minute) && p.sharedWarned.CompareAndSwap(last, now) {
		p.log.Warn("proxy: the shared rate-limit budget did not answer; each replica's own buckets decide meanwhile", "err", err)
	}
}

// retryAfter sets Retry-After to wait in whole seconds, at least 1.
func retryAfter(ctx *fasthttp.RequestCtx, wait time.Duration) {
	ctx.Response.Header.Set("Retry-After", strconv.Itoa(max(1, int((wait+time.Second-1)/time.Second))))
}
