package admission

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A join, decided here from end to end: the proxy verifies the bot
// defence's challenge and says whether its action puts the visitor in the
// shadow queue (JoinRequest.Shadow); the engine decides everything else
// (a returning visitor's place, a new place, no place yet or any more)
// and composes the status the visitor is shown, pass included. The
// proxy's part is to sign what the Arrival tells it to and write it out.

// JoinRequest is a visitor asking for a place.
type JoinRequest struct {
	// Lane is the lane asked for ("" is public).
	Lane string
	// Binding is the device-binding hash the proxy computed.
	Binding string
	// Credential admits to a non-public lane.
	Credential Credential
	// Existing is a ticket for this event the visitor presented, already
	// verified: joining again returns it, the same place.
	Existing *Ticket
	// Shadow places the visitor in the shadow queue: drawn and shown a
	// place like anyone, never admitted (needs Options.ShadowKey).
	Shadow bool
	// Account is the visitor's account as the origin vouched for it
	// (verified by the proxy; "" when unknown). An account has one
	// place per event: its first. Any later join of the account, from
	// any device and on any replica, gets that place back
	// (OutcomeDeduplicated), whatever else the join asks for.
	Account string
	// Once, when set, is a one-time value the join spends (a proof of
	// work's challenge id), so that one solution buys one place: a join
	// whose value was spent before is refused with ErrOnceUsed, or with
	// the error of Once.Spend.
	Once *Once
}

// Once is a one-time value a join spends. On a store that spends values
// itself (OnceStore) the engine spends it there: for a new place in the
// public queue, in the same write as the place (one round trip); for any
// other join, before the join does anything else. On other stores, and
// where the store cannot, Spend does it, before anything else.
type Once struct {
	// ID is the value; Until is when it may be forgotten (the
	// challenge's expiry).
	ID    []byte
	Until time.Time
	// Spend spends the value elsewhere (the challenge's replay guard);
	// its error is the join's.
	Spend func(ctx context.Context) error
}

// Credential proves membership of a presale lane: an invite code, or an
// account id with the origin's proof (and, if the lane has one, on the
// allowlist).
type Credential struct {
	Invite       string
	Account      string
	AccountProof string
}

// JoinOutcome is what became of a join. Its values are the proxy's
// metric labels, so they are a contract with dashboards.
type JoinOutcome string

// The outcomes of a join.
const (
	// OutcomeJoined is a new place in the queue.
	OutcomeJoined JoinOutcome = "joined"
	// OutcomeShadowed is a new place in the shadow queue: nothing in
	// the Arrival marks it, the outcome is for the operator's counts.
	OutcomeShadowed JoinOutcome = "shadowed"
	// OutcomeRejoined is the place of the ticket the visitor presented.
	OutcomeRejoined JoinOutcome = "rejoined"
	// OutcomeDeduplicated is the place the visitor's account was given
	// before, on another device or with another ticket: the join is
	// counted once, and the ticket is issued afresh for this device.
	OutcomeDeduplicated JoinOutcome = "deduplicated"
	// OutcomeScheduled: the queue is not open yet; no place is given.
	OutcomeScheduled JoinOutcome = "scheduled"
	// OutcomeClosed: the event is closed; no place is given.
	OutcomeClosed JoinOutcome = "closed"
	// OutcomeSoldOut: the event is sold out; no place is given.
	OutcomeSoldOut JoinOutcome = "sold_out"
	// OutcomePassed: let straight in (threshold mode with room and
	// nobody queued, or the passthrough state): admitted with a pass, no
	// place.
	OutcomePassed JoinOutcome = "passed"
)

// Arrival is the answer to a join: the status to show, and what to hand
// the visitor with it.
type Arrival struct {
	Outcome JoinOutcome
	// Status is what the visitor is shown; for a returning visitor whose
	// turn has come it is admitted, with Pass set.
	Status Status
	// Placed tells whether the visitor has a place: Ticket is theirs.
	// It is false for the scheduled, closed and sold-out outcomes.
	Placed bool
	// Ticket is the visitor's ticket (when Placed).
	Ticket Ticket
	// Issue is true when Ticket is new or differs from the one
	// presented: sign it and set it.
	Issue bool
	// Pass is set when the visitor is admitted: sign it and set it.
	Pass *Pass
}

// Arrive answers a join: a visitor presenting a ticket for the event
// (req.Existing) keeps their place and gets its status, pass included
// when their turn has come; anyone else gets a new place in the lane
// asked for (the shadow queue when req.Shadow), or, while the queue is not
// open or once the event is closed or sold out, a status without a place.
// A join with an account whose place is recorded gets that place
// (OutcomeDeduplicated, or OutcomeRejoined when it presented that
// place's ticket): a presale credential it brings is neither checked nor
// spent, and a shadowed account stays shadowed.
// Errors: ErrUnknownEvent, ErrUnknownLane, the credential errors of
// presale lanes (ErrNotAllowed, ErrInviteUsed), ErrStoreDown.
func (e *Engine) Arrive(ctx context.Context, id string, req JoinRequest) (Arrival, error) {
	ev, err := e.event(id)
	if err != nil {
		return Arrival{}, err
	}
	now := e.clock()
	// A new place in the public queue spends its one-time value in the
	// append; any other join spends it first, before it changes a thing.
	fused := req.Once != nil && e.onceStore != nil && req.Account == "" && req.Existing == nil &&
		req.Credential == (Credential{}) && (req.Lane == "" || req.Lane == PublicLane) && !ev.gate.MayPass()
	if req.Once != nil && !fused {
		if err := e.spendOnce(ctx, id, req.Once); err != nil {
			return Arrival{}, err
		}
	}
	var account string
	if req.Account != "" {
		account = AccountKey(req.Account)
		p, ok, err := e.opts.Store.AccountPlace(ctx, id, account)
		if err != nil {
			return Arrival{}, fmt.Errorf("%w: %v", ErrStoreDown, err)
		}
		if ok {
			return e.accountArrival(ctx, ev, p, &req, now)
		}
	}
	if req.Credential.Invite != "" {
		inv, ok := NormalizeInvite(req.Credential.Invite)
		if !ok {
			return Arrival{}, ErrNotAllowed
		}
		req.Credential.Invite = inv
		if req.Lane == "" {
			if req.Lane = ev.inviteLane(inv); req.Lane == "" {
				return Arrival{}, ErrNotAllowed
			}
		}
	}
	if old := req.Existing; old != nil && old.Event == id && !switchesLane(old, &req) {
		if account != "" {
			// A visitor who logs in while holding a place: that
			// place becomes the account's, unless another device
			// of the account was placed first.
			p, first, err := e.opts.Store.PlaceAccount(ctx, id, account, placeOf(*old), accountForget(*old))
			if err != nil {
				return Arrival{}, fmt.Errorf("%w: %v", ErrStoreDown, err)
			}
			if !first {
				return e.accountArrival(ctx, ev, p, &req, now)
			}
		}
		res, err := e.status(ctx, ev, *old, now)
		if err == nil {
			promise(&res, now)
		}
		a := Arrival{Outcome: OutcomeRejoined, Status: res.Status, Placed: err == nil, Ticket: res.Ticket,
			Issue: res.Ticket != *old, Pass: res.Pass}
		return a, err
	}
	state := ev.state(now)
	if fused && (state == StateScheduled || state == StateClosed || state == StateSoldOut) {
		if err := e.spendOnce(ctx, id, req.Once); err != nil { // no place to spend it with
			return Arrival{}, err
		}
	}
	switch state {
	case StateScheduled:
		return Arrival{Outcome: OutcomeScheduled, Status: ev.noPlace(StatusScheduled, "",
			min(DefaultRefresh, max(time.Second, ev.conf().QueueOpensAt.Sub(now))))}, nil
	case StateClosed:
		return Arrival{Outcome: OutcomeClosed, Status: ev.noPlace(StatusClosed, "closed", time.Minute)}, nil
	case StateSoldOut:
		return Arrival{Outcome: OutcomeSoldOut, Status: ev.noPlace(StatusSoldOut, "", time.Minute)}, nil
	}
	name := req.Lane
	if name == "" {
		name = PublicLane
	}
	l := ev.byName[name]
	if l == nil {
		return Arrival{}, fmt.Errorf("%w: %q", ErrUnknownLane, name)
	}
	if name != PublicLane {
		if err := ev.admitToLane(ctx, l, req.Credential, now); err != nil {
			return Arrival{}, err
		}
	}
	if req.Shadow && !e.CanShadow() {
		return Arrival{}, errors.New("admission: a shadow join needs a shadow key")
	}
	if name == PublicLane && !req.Shadow && !fused {
		// Threshold mode with room and nobody queued, or passthrough:
		// in at once, as at the gate (a visitor who saw the page while
		// the room had no slot gets in on joining once it has). A
		// fused join found the gate shut; should it open meanwhile,
		// the visitor is queued rather than let in unspent.
		ok, err := ev.mayEnter(ctx, now)
		if err != nil {
			return Arrival{}, err
		}
		if ok {
			v, err := ev.newVisitor(false)
			if err != nil {
				return Arrival{}, fmt.Errorf("admission: no randomness: %w", err)
			}
			st := ev.noPlace(StatusAdmitted, "", time.Second)
			st.Lane, st.Position, st.ETA = PublicLane, 0, ETA{}
			return Arrival{Outcome: OutcomePassed, Status: st, Pass: ev.straightPass(v, req.Binding, now)}, nil
		}
	}
	v, err := ev.newVisitor(req.Shadow)
	if err != nil {
		return Arrival{}, fmt.Errorf("admission: no randomness: %w", err)
	}
	t := NewTicket(ev.conf(), l.cfg.Name, v, req.Binding, now)
	if account != "" {
		// The account's place is recorded before the visitor joins
		// the tranche, so that of two devices joining at once only
		// one becomes a member. Should the append then fail, the
		// place is a member of no tranche: its first status finds it
		// missing from the draw and places it in the current
		// tranche (see rejoin).
		p, first, err := e.opts.Store.PlaceAccount(ctx, id, account, placeOf(t), accountForget(t))
		if err != nil {
			return Arrival{}, fmt.Errorf("%w: %v", ErrStoreDown, err)
		}
		if !first {
			return e.accountArrival(ctx, ev, p, &req, now)
		}
	}
	var once *Once
	if fused {
		once = req.Once
	}
	if err := ev.join(ctx, l, t, once); err != nil {
		return Arrival{}, err
	}
	ev.joined.Add(1)
	res, err := e.status(ctx, ev, t, now)
	if err == nil {
		promise(&res, now)
	}
	a := Arrival{Outcome: OutcomeJoined, Status: res.Status, Placed: err == nil, Ticket: res.Ticket,
		Issue: err == nil, Pass: res.Pass}
	if req.Shadow {
		a.Outcome = OutcomeShadowed
	}
	return a, err
}

// inviteLane is the lane whose invite secret verifies inv, or "": a
// visitor gives the code, not the lane it is for.
func (ev *event) inviteLane(inv string) string {
	for _, l := range ev.lanes {
		if s := l.cfg.Access.InviteSecret; s != nil {
			if _, _, err := ParseInvite(s, ev.conf().ID, inv); err == nil {
				return l.cfg.Name
			}
		}
	}
	return ""
}

// switchesLane reports whether a visitor holding old asks, with a
// credential, for a place in another lane: one waiting in the public
// queue who then enters an invite code moves to the presale. Without a
// credential, or for the lane they are in, they keep their place (and a
// code is not spent twice by the same visitor).
func switchesLane(old *Ticket, req *JoinRequest) bool {
	c := req.Credential
	if c.Invite == "" && c.Account == "" {
		return false
	}
	name := req.Lane
	if name == "" {
		name = PublicLane
	}
	return name != old.Lane
}

// noPlace is the status of a join that gives no place.
func (ev *event) noPlace(kind StatusKind, reason string, refresh time.Duration) Status {
	return Status{Event: ev.conf().ID, Kind: kind, Reason: reason, Position: -1,
		ETA: ETA{Seconds: -1, Low: -1, High: -1}, OnSaleAt: ev.conf().OnSaleAt, Refresh: refresh}
}

// Join gives a visitor a place in a lane, as Arrive does, and returns
// ErrNotOpen, ErrClosed or ErrSoldOut where Arrive gives no place. A
// visitor Arrive lets straight in (OutcomePassed) gets a zero Ticket and
// the admitted status (Arrive hands out their pass).
func (e *Engine) Join(ctx context.Context, id string, req JoinRequest) (Ticket, Status, error) {
	a, err := e.Arrive(ctx, id, req)
	switch {
	case err != nil:
		return a.Ticket, a.Status, err
	case a.Outcome == OutcomeScheduled:
		return Ticket{}, Status{}, ErrNotOpen
	case a.Outcome == OutcomeClosed:
		return Ticket{}, Status{}, ErrClosed
	case a.Outcome == OutcomeSoldOut:
		return Ticket{}, Status{}, ErrSoldOut
	}
	return a.Ticket, a.Status, nil
}

// place appends v to the lane's current tranche and returns its ticket.
func (ev *event) place(ctx context.Context, l *lane, v VisitorID, binding string, now time.Time) (Ticket, error) {
	t := NewTicket(ev.conf(), l.cfg.Name, v, binding, now)
	return t, ev.join(ctx, l, t, nil)
}

// join appends the visitor of ticket t, of lane l, to its tranche, and
// with once (not nil only on a OnceStore) spends that value in the same
// write.
func (ev *event) join(ctx context.Context, l *lane, t Ticket, once *Once) error {
	if ev.conf().openFromStart && int64(t.Tranche) > l.seeded.Load() {
		// The first join of a tranche of an event open from the start
		// seeds it (see seedAndDraw), before the member is in it.
		if _, err := ev.seed(ctx, l, t.Tranche); err != nil {
			return fmt.Errorf("%w: %v", ErrStoreDown, err)
		}
		l.seeded.Store(int64(t.Tranche))
	}
	if once != nil {
		ok, err := ev.e.onceStore.AppendMemberOnce(ctx, ev.conf().ID, l.cfg.Name, t.Tranche, t.Visitor, once.ID, once.Until)
		switch {
		case err != nil:
			return fmt.Errorf("%w: %v", ErrStoreDown, err)
		case !ok:
			return ErrOnceUsed
		}
		return nil
	}
	if err := ev.e.opts.Store.AppendMember(ctx, ev.conf().ID, l.cfg.Name, t.Tranche, t.Visitor); err != nil {
		return fmt.Errorf("%w: %v", ErrStoreDown, err)
	}
	return nil
}

// spendOnce spends a join's one-time value on its own: in the store when
// it spends values itself, else by o.Spend.
func (e *Engine) spendOnce(ctx context.Context, event string, o *Once) error {
	if e.onceStore == nil {
		if o.Spend == nil {
			return errors.New("admission: a one-time value without a way to spend it")
		}
		return o.Spend(ctx)
	}
	ok, err := e.onceStore.SpendOnce(ctx, event, o.ID, o.Until)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %v", ErrStoreDown, err)
	case !ok:
		return ErrOnceUsed
	}
	return nil
}

// NewTicket is the ticket of visitor v joining lane of cfg's event at now:
// the tranche of now, valid until the event closes and its last session
// ends (or for ticketLifetime). It places nobody in a queue; Join does.
func NewTicket(cfg *EventConfig, lane string, v VisitorID, binding string, now time.Time) Ticket {
	exp := now.Add(ticketLifetime)
	if !cfg.ClosesAt.IsZero() {
		exp = cfg.ClosesAt.Add(cfg.SessionDuration)
	}
	return Ticket{Event: cfg.ID, Visitor: v, Lane: lane, Tranche: trancheAt(cfg, now), Binding: binding,
		IssuedAt: now, ExpiresAt: exp}
}

// admitToLane checks a presale credential: an invite (used once) or an
// account with the origin's proof (and on the allowlist, if there is one).
func (ev *event) admitToLane(ctx context.Context, l *lane, c Credential, now time.Time) error {
	a := l.cfg.Access
	switch {
	case c.Invite != "" && a.InviteSecret != nil:
		code, account, err := ParseInvite(a.InviteSecret, ev.conf().ID, c.Invite)
		if err != nil {
			return ErrNotAllowed
		}
		if account != "" && (account != c.Account || a.AccountSecret == nil ||
			!CheckAccountProof(a.AccountSecret, ev.conf().ID, c.Account, c.AccountProof)) {
			return ErrNotAllowed
		}
		forget := now.Add(30 * 24 * time.Hour)
		if !ev.conf().ClosesAt.IsZero() {
			forget = ev.conf().ClosesAt.Add(24 * time.Hour)
		}
		first, err := ev.e.opts.Store.UseInvite(ctx, ev.conf().ID, l.cfg.Name+"/"+code, forget)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrStoreDown, err)
		}
		if !first {
			return ErrInviteUsed
		}
		return nil
	case c.Account != "" && a.AccountSecret != nil:
		if !CheckAccountProof(a.AccountSecret, ev.conf().ID, c.Account, c.AccountProof) {
			return ErrNotAllowed
		}
		if a.Allowlist != nil && !a.Allowlist.Contains(c.Account) {
			return ErrNotAllowed
		}
		return nil
	}
	return ErrNotAllowed
}

// promise notes in a ticket without one the latest time its join's
// status told the visitor their turn would come (now plus the ETA's
// high end, rounded up to the second), so that their admission can be
// checked against it (see Ticket.PromisedBy). A status without an ETA
// promises nothing.
func promise(res *StatusResult, now time.Time) {
	eta := res.Status.ETA
	if !res.Ticket.PromisedBy.IsZero() || eta.High < 0 || !eta.Known() || res.Status.Kind == StatusAdmitted {
		return
	}
	res.Ticket.PromisedBy = time.Unix(now.Add(time.Duration(eta.High)*time.Second+time.Second-1).Unix(), 0).UTC()
}
