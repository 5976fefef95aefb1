package admission

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"time"
)

// One place per account: when the origin tells who is logged in, the
// engine records each account's first place in an event (Store.PlaceAccount)
// and gives it back to every later join of the account.

// accountDomain separates the hash of an account's store key from any
// other hash of an account id.
const accountKeyDomain = "wr-account-place\x00"

// AccountKey is the store key of an account: base64url (no padding) of
// SHA-256("wr-account-place\x00" account). Stores never see the account
// id itself, and any account id, whatever its bytes, makes a key of 43
// URL-safe characters.
func AccountKey(account string) string {
	h := sha256.New()
	h.Write([]byte(accountKeyDomain))
	h.Write([]byte(account))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// placeOf is the account's place that ticket t gives.
func placeOf(t Ticket) AccountPlace {
	return AccountPlace{Visitor: t.Visitor, Lane: t.Lane, Tranche: t.Tranche,
		IssuedAt: t.IssuedAt.Truncate(time.Second), ExpiresAt: t.ExpiresAt.Truncate(time.Second)}
}

// accountForget is when an account's place of ticket t may be forgotten:
// when the ticket expires, which is when the event's last session ends
// (NewTicket). No ticket of the place is valid after it.
func accountForget(t Ticket) time.Time { return t.ExpiresAt }

// accountArrival answers a join by an account that has place p: that
// place, its ticket bound to the joining device. A visitor presenting
// that place's ticket already is a plain rejoin.
func (e *Engine) accountArrival(ctx context.Context, ev *event, p AccountPlace, req *JoinRequest, now time.Time) (Arrival, error) {
	if old := req.Existing; old != nil && old.Event == ev.conf().ID && old.Visitor == p.Visitor {
		res, err := e.status(ctx, ev, *old, now)
		return Arrival{Outcome: OutcomeRejoined, Status: res.Status, Placed: err == nil, Ticket: res.Ticket,
			Issue: res.Ticket != *old, Pass: res.Pass}, err
	}
	t := Ticket{Event: ev.conf().ID, Visitor: p.Visitor, Lane: p.Lane, Tranche: p.Tranche, Binding: req.Binding,
		IssuedAt: p.IssuedAt, ExpiresAt: p.ExpiresAt}
	res, err := e.status(ctx, ev, t, now)
	return Arrival{Outcome: OutcomeDeduplicated, Status: res.Status, Placed: err == nil, Ticket: res.Ticket,
		Issue: err == nil, Pass: res.Pass}, err
}
