package proxy

import (
	"errors"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/proxy/ratelimit"
)

// Invite codes at the join: a wrong or used code costs the client a
// token of its wrong-code budget (per address and per prefix); once the
// budget is spent, every join with a code is refused with 429 and
// Retry-After before the code is even looked at, so a bot cannot try
// codes faster than the budget refills, and a right code found after
// the budget is spent tells it nothing. Right codes cost nothing: many
// fans behind one carrier NAT redeem their own codes freely.

// DefaultWrongInvites is the wrong-code budget of Options.WrongInvites
// left at its zero value: 10 wrong codes from one address at once, then
// one every 50 s; 100 from one prefix (an IPv4 /24, an IPv6 /48), then
// one every 5 s.
var DefaultWrongInvites = ratelimit.Config{
	PerIP:     ratelimit.Bucket{Rate: 0.02, Burst: 10},
	PerPrefix: ratelimit.Bucket{Rate: 0.2, Burst: 100},
	TableSize: 1 << 15,
}

var errTooManyCodes = newAPIError("too_many_codes", "too many wrong invite codes from this network; wait before trying another")

// inviteCounts counts joins with an invite code by event, lane and
// result. Joins with a code are rare next to status polls: the series is
// looked up per join.
type inviteCounts struct {
	vec *prometheus.CounterVec
}

// The results of a join with a code.
const (
	inviteRedeemed = "redeemed"
	inviteWrong    = "wrong"
	inviteUsed     = "used"
	inviteLimited  = "limited"
)

func (c *inviteCounts) add(event, lane, result string) {
	c.vec.WithLabelValues(event, lane, result).Inc()
}

func newInviteCounts(reg prometheus.Registerer) (*inviteCounts, error) {
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_invite_codes_total",
		Help: "Joins with an invite code, by event, lane (the code's, when it is redeemed; empty otherwise) and result: redeemed (a place in the code's lane, or the visitor's own place again), wrong (no lane's secret signs it), used (redeemed before by another visitor), limited (refused unread: the client's wrong-code budget is spent)."},
		[]string{"event", "lane", "result"})
	c := &inviteCounts{vec: vec}
	if reg != nil {
		if err := reg.Register(vec); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// newInviteLimiter builds the wrong-code limiter of opts.
func newInviteLimiter(opts *Options) (*ratelimit.Limiter, error) {
	cfg := opts.WrongInvites
	if cfg.PerIP == (ratelimit.Bucket{}) && cfg.PerPrefix == (ratelimit.Bucket{}) {
		cfg = DefaultWrongInvites
	}
	cfg.Clock = opts.Clock
	return ratelimit.New(cfg)
}

// inviteAllowed reports whether ip may try an invite code now, answering
// 429 with Retry-After itself when it may not.
func (p *Proxy) inviteAllowed(ctx *fasthttp.RequestCtx, ev *event, ip netip.Addr, now time.Time) bool {
	wait := p.wrongCodes.WaitAt(ip, now)
	if wait == 0 {
		wait = p.sharedWrongCodesWait(ip)
	}
	if wait == 0 {
		return true
	}
	p.invites.add(ev.ID, "", inviteLimited)
	retryAfter(ctx, wait)
	writeError(ctx, fasthttp.StatusTooManyRequests, errTooManyCodes)
	return false
}

// inviteRefused answers a join whose invite code the engine refused, and
// charges the client's wrong-code budget; it reports false for an error
// that is not about the code.
func (p *Proxy) inviteRefused(ctx *fasthttp.RequestCtx, ev *event, ip netip.Addr, now time.Time, err error) bool {
	switch {
	case errors.Is(err, admission.ErrInviteUsed):
		p.invites.add(ev.ID, "", inviteUsed)
		p.chargeWrongCode(ip, now)
		writeError(ctx, fasthttp.StatusConflict, errInviteUsed)
	case errors.Is(err, admission.ErrNotAllowed), errors.Is(err, admission.ErrBadCredential):
		p.invites.add(ev.ID, "", inviteWrong)
		p.chargeWrongCode(ip, now)
		writeError(ctx, fasthttp.StatusForbidden, errNotAllowed)
	default:
		return false
	}
	return true
}
