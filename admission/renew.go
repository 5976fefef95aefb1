package admission

import "time"

// Session renewal: an admitted visitor's pass slides forward while they
// are active at the origin, up to the event's MaxSession. Passes are
// stateless, so renewal is too: the proxy asks RenewAt once when it caches
// a pass, compares one time per request, and calls RenewPass on the rare
// request past it. A revoked or completed visitor is never renewed.

// RenewAt returns when a pass of event id becomes due for renewal: once
// less than half of SessionDuration is left of it. It returns the zero
// time when the pass will never be renewed: it has no AdmittedAt (minted
// before renewal existed), its expiry is already the end of its session,
// or the event is unknown. It does no I/O and takes no lock.
func (e *Engine) RenewAt(id string, p *Pass) time.Time {
	ev := e.lookup(id)
	if ev == nil || p.AdmittedAt.IsZero() {
		return time.Time{}
	}
	if !p.ExpiresAt.Before(sessionEnd(ev.conf(), p)) {
		return time.Time{}
	}
	return p.ExpiresAt.Add(-ev.conf().SessionDuration / 2)
}

// SessionEnd returns when the session of a pass of event id ends at the
// latest, renewals included: AdmittedAt plus MaxSession (or the pass's own
// expiry when that is later: a visitor who came late in their turn), or
// the pass's expiry for a pass without AdmittedAt (or of an unknown
// event).
func (e *Engine) SessionEnd(id string, p *Pass) time.Time {
	ev := e.lookup(id)
	if ev == nil || p.AdmittedAt.IsZero() {
		return p.ExpiresAt
	}
	if end := sessionEnd(ev.conf(), p); end.After(p.ExpiresAt) {
		return end
	}
	return p.ExpiresAt
}

// sessionEnd is AdmittedAt plus MaxSession, to the second as a token
// keeps times (a pass's expiry is whole seconds, so a fraction would leave
// it forever just short of the end).
func sessionEnd(cfg *EventConfig, p *Pass) time.Time {
	return p.AdmittedAt.Add(cfg.MaxSession).Truncate(time.Second)
}

// Renewable reports whether a (verified) pass of event id could still be
// renewed at now by activity: it carries AdmittedAt, its session has time
// left beyond its expiry, and its visitor is neither revoked nor done
// (whatever the bar's start: a visitor whose origin said complete keeps
// their pass for the grace but gets no longer one).
func (e *Engine) Renewable(id string, p *Pass, now time.Time) bool {
	ev := e.lookup(id)
	if ev == nil || p.AdmittedAt.IsZero() || !p.ExpiresAt.Before(sessionEnd(ev.conf(), p)) {
		return false
	}
	if _, barred := ev.barred(p.Visitor); barred {
		return false
	}
	if until, ok := (*ev.revoked.Load())[p.ID]; ok && now.Before(until) {
		return false
	}
	return true
}

// RenewPass returns p slid forward at now: the same id, visitor, lane,
// number, binding and AdmittedAt, issued now and expiring SessionDuration
// from now but not after the session's end (SessionEnd). ok is false, and
// nothing is to be issued, when the pass may not be renewed (Renewable)
// or the new expiry would not be later than p's. Times are whole seconds,
// as in a token.
func (e *Engine) RenewPass(id string, p *Pass, now time.Time) (Pass, bool) {
	if !e.Renewable(id, p, now) {
		return Pass{}, false
	}
	ev := e.lookup(id)
	if ev == nil {
		return Pass{}, false
	}
	cfg := ev.conf()
	now = now.Truncate(time.Second)
	exp := minTime(now.Add(cfg.SessionDuration), sessionEnd(cfg, p)).Truncate(time.Second)
	if !exp.After(p.ExpiresAt) || !exp.After(now) || now.Before(p.AdmittedAt) {
		return Pass{}, false
	}
	np := *p
	np.IssuedAt, np.ExpiresAt = now, exp
	return np, true
}
