// Holds and orders: Hold (and the decision it journals), Confirm, Release,
// Cancel, their lookups, and Reap, which expires due holds.

package memstore

import (
	"context"
	"fmt"
	"time"

	"github.com/waitroom/waitroom/inventory"
)

// Hold implements inventory.Store.
func (s *Store) Hold(ctx context.Context, id string, req inventory.HoldRequest) (inventory.Hold, error) {
	if err := req.Validate(); err != nil {
		return inventory.Hold{}, err
	}
	var out inventory.Hold
	err := s.tx(ctx, id, func(t *txn) error {
		var fp string
		if req.IdempotencyKey != "" {
			fp = req.Fingerprint()
			if res, err := t.replay(req.IdempotencyKey, fp); err != nil || res != nil {
				if res != nil && res.Hold != nil {
					out = *res.Hold
					out.Replayed = true
				}
				return err
			}
		}
		r, err := t.decideHold(&req)
		if err != nil {
			if recordable(err) {
				t.remember(req.IdempotencyKey, fp, &idemResult{Err: storedError(err)})
			}
			return err
		}
		h := inventory.Hold{ID: r.Hold, Event: id, User: r.User, Seats: r.Seats, Pool: r.Pool, Quantity: r.Qty,
			PriceCents: r.Price, CreatedAt: inventory.UnixMilli(r.At), ExpiresAt: inventory.UnixMilli(r.Expires),
			Status: inventory.HoldHeld}
		if h.Seats == nil {
			h.Seats = []string{}
		}
		if req.IdempotencyKey != "" {
			r.Key, r.FP, r.Res = req.IdempotencyKey, fp, &idemResult{Hold: &h}
		}
		t.commit(r)
		out = h
		return nil
	})
	return out, err
}

func defined(e *event) error {
	if e.secByID == nil {
		return inventory.Errorf(inventory.ErrEventNotFound, "event %q is not defined", e.id)
	}
	return nil
}

// decideHold works out what a hold request gets, or why it gets nothing.
// The order of checks is part of the contract that the Redis scripts
// share: unknown targets, then the user limit, then availability.
func (t *txn) decideHold(req *inventory.HoldRequest) (*record, error) {
	e := t.e
	var (
		seats []string
		qty   int
		price int64
		secs  []*section
		p     *pool
	)
	switch {
	case req.Seats != nil:
		var unknown []string
		for _, sid := range req.Seats {
			s, _, _, ok := e.seat(sid)
			if !ok {
				unknown = append(unknown, sid)
				continue
			}
			price += s.def.PriceCents
		}
		if len(unknown) > 0 {
			return nil, &inventory.Error{Kind: inventory.ErrSeatNotFound, Seats: unknown, Message: "no such seat"}
		}
		qty = len(req.Seats)
	case req.Best != nil:
		if req.Best.Section != "" {
			s := e.secByID[req.Best.Section]
			if s == nil {
				return nil, inventory.Errorf(inventory.ErrSectionNotFound, "section %q is not defined", req.Best.Section)
			}
			secs = []*section{s}
		} else {
			secs = e.tiers[req.Best.Tier]
			if len(secs) == 0 {
				return nil, inventory.Errorf(inventory.ErrTierNotFound, "no section has tier %q", req.Best.Tier)
			}
		}
		qty = req.Best.Quantity
	default:
		p = e.poolByID[req.GA.Pool]
		if p == nil {
			return nil, inventory.Errorf(inventory.ErrPoolNotFound, "GA pool %q is not defined", req.GA.Pool)
		}
		qty = req.GA.Quantity
	}

	if limit := e.def.Limits.PerUser; limit > 0 && e.users[req.User]+qty > limit {
		return nil, &inventory.Error{Kind: inventory.ErrUserLimit, Limit: limit, Current: e.users[req.User],
			Message: fmt.Sprintf("user may have at most %d seats in this event", limit)}
	}

	switch {
	case req.Seats != nil:
		var taken []string
		for _, sid := range req.Seats {
			_, r, k, _ := e.seat(sid)
			if r.st[k] != seatFree {
				taken = append(taken, sid)
			}
		}
		if len(taken) > 0 {
			return nil, &inventory.Error{Kind: inventory.ErrSeatUnavailable, Seats: taken, Message: "seats are held or sold"}
		}
		seats = req.Seats
	case secs != nil:
		rows := make([][][]byte, len(secs))
		free := 0
		for i, s := range secs {
			rows[i] = make([][]byte, len(s.rows))
			for j, r := range s.rows {
				rows[i][j] = r.st
			}
			free += s.total - s.held - s.sold
		}
		b, ok := inventory.BestBlock(rows, qty)
		if !ok {
			return nil, notEnough(free, qty)
		}
		s := secs[b.Section]
		r := s.rows[b.Row]
		seats = make([]string, qty)
		for i := range qty {
			seats[i] = inventory.SeatID(s.def.ID, r.id, b.Start+i+1)
		}
		price = s.def.PriceCents * int64(qty)
	default:
		free := p.def.Capacity - p.held - p.sold
		if free < qty {
			return nil, notEnough(free, qty)
		}
		price = p.def.PriceCents * int64(qty)
	}
	r := &record{Op: opHold, At: t.now, Actor: req.Actor, Hold: inventory.NewID(inventory.HoldIDPrefix),
		User: req.User, Seats: seats, Qty: qty, Price: price,
		Expires: t.now + req.TTLFor(&e.def).Milliseconds()}
	if p != nil {
		r.Pool = p.def.ID
	}
	return r, nil
}

func notEnough(free, qty int) error {
	if free == 0 {
		return inventory.Errorf(inventory.ErrSoldOut, "nothing is available")
	}
	return &inventory.Error{Kind: inventory.ErrNotEnoughSeats, Available: free,
		Message: fmt.Sprintf("%d together are not available", qty)}
}

// GetHold implements inventory.Store.
func (s *Store) GetHold(ctx context.Context, id, holdID string) (inventory.Hold, error) {
	var out inventory.Hold
	err := s.tx(ctx, id, func(t *txn) error {
		h, err := t.hold(holdID)
		if err != nil {
			return err
		}
		out = t.e.holdView(h)
		return nil
	})
	return out, err
}

// Confirm implements inventory.Store.
func (s *Store) Confirm(ctx context.Context, id, holdID string, req inventory.ConfirmRequest) (inventory.Order, error) {
	if err := req.Validate(); err != nil {
		return inventory.Order{}, err
	}
	var out inventory.Order
	err := s.tx(ctx, id, func(t *txn) error {
		fp := req.Fingerprint(holdID)
		if res, err := t.replay(req.IdempotencyKey, fp); err != nil || res != nil {
			if res != nil && res.Order != nil {
				out = *res.Order
				out.Replayed = true
			}
			return err
		}
		h, err := t.hold(holdID)
		if err != nil {
			return err
		}
		switch h.Status {
		case inventory.HoldConfirmed:
			o := t.e.orders[h.Order]
			if o.Status == inventory.OrderCancelled {
				err = inventory.Errorf(inventory.ErrOrderCancelled, "the order of this hold was cancelled")
				break
			}
			out = t.e.orderView(o)
			t.remember(req.IdempotencyKey, fp, &idemResult{Order: &out})
			return nil
		case inventory.HoldReleased, inventory.HoldExpired:
			err = ended(h)
		}
		if err != nil {
			t.remember(req.IdempotencyKey, fp, &idemResult{Err: storedError(err)})
			return err
		}
		r := &record{Op: opConfirm, At: t.now, Actor: req.Actor, Hold: h.ID, Order: inventory.NewID(inventory.OrderIDPrefix),
			User: h.User, Seats: h.Seats, Pool: h.Pool, Qty: h.Qty, Price: h.Price, PayRef: req.PaymentRef}
		o := inventory.Order{ID: r.Order, HoldID: h.ID, Event: id, User: h.User, Seats: t.e.holdView(h).Seats,
			Pool: h.Pool, Quantity: h.Qty, PriceCents: h.Price, PaymentRef: req.PaymentRef,
			Status: inventory.OrderConfirmed, ConfirmedAt: inventory.UnixMilli(t.now)}
		if req.IdempotencyKey != "" {
			r.Key, r.FP, r.Res = req.IdempotencyKey, fp, &idemResult{Order: &o}
		}
		t.commit(r)
		out = o
		return nil
	})
	return out, err
}

// Release implements inventory.Store.
func (s *Store) Release(ctx context.Context, id, holdID string, req inventory.ReleaseRequest) (inventory.Release, error) {
	if err := req.Validate(); err != nil {
		return inventory.Release{}, err
	}
	var out inventory.Release
	err := s.tx(ctx, id, func(t *txn) error {
		fp := req.Fingerprint(holdID)
		if res, err := t.replay(req.IdempotencyKey, fp); err != nil || res != nil {
			if res != nil && res.Release != nil {
				out = *res.Release
				out.Replayed = true
			}
			return err
		}
		h, err := t.hold(holdID)
		if err != nil {
			return err
		}
		switch h.Status {
		case inventory.HoldConfirmed:
			err := inventory.Errorf(inventory.ErrHoldConfirmed, "the hold is confirmed; cancel its order instead")
			t.remember(req.IdempotencyKey, fp, &idemResult{Err: storedError(err)})
			return err
		case inventory.HoldReleased, inventory.HoldExpired:
			out = inventory.Release{HoldID: h.ID, Event: id, Status: "released", HoldStatus: h.Status}
			t.remember(req.IdempotencyKey, fp, &idemResult{Release: &out})
			return nil
		}
		out = inventory.Release{HoldID: h.ID, Event: id, Status: "released", HoldStatus: inventory.HoldReleased}
		r := &record{Op: opRelease, At: t.now, Actor: req.Actor, Hold: h.ID, User: h.User, Seats: h.Seats,
			Pool: h.Pool, Qty: h.Qty}
		if req.IdempotencyKey != "" {
			r.Key, r.FP, r.Res = req.IdempotencyKey, fp, &idemResult{Release: &out}
		}
		t.commit(r)
		return nil
	})
	return out, err
}

// ended is the error for a hold that was released or has expired, which
// can be neither confirmed nor extended.
func ended(h *hold) error {
	if h.Status == inventory.HoldReleased {
		return inventory.Errorf(inventory.ErrHoldReleased, "the hold was released")
	}
	return inventory.Errorf(inventory.ErrHoldExpired, "the hold expired at %s", inventory.UnixMilli(h.Expires).Format(time.RFC3339))
}

// Extend implements inventory.Store.
func (s *Store) Extend(ctx context.Context, id, holdID string, req inventory.ExtendRequest) (inventory.Hold, error) {
	if err := req.Validate(); err != nil {
		return inventory.Hold{}, err
	}
	var out inventory.Hold
	err := s.tx(ctx, id, func(t *txn) error {
		fp := req.Fingerprint(holdID)
		if res, err := t.replay(req.IdempotencyKey, fp); err != nil || res != nil {
			if res != nil && res.Hold != nil {
				out = *res.Hold
				out.Replayed = true
			}
			return err
		}
		h, err := t.hold(holdID)
		if err != nil {
			return err
		}
		switch h.Status {
		case inventory.HoldConfirmed:
			err = inventory.Errorf(inventory.ErrHoldConfirmed, "the hold is confirmed")
		case inventory.HoldReleased, inventory.HoldExpired:
			err = ended(h)
		}
		if err != nil {
			t.remember(req.IdempotencyKey, fp, &idemResult{Err: storedError(err)})
			return err
		}
		exp := req.ExtendedExpiry(&t.e.def, h.Created, h.Expires, t.now)
		if exp == h.Expires {
			// At its bound already: nothing changes.
			out = t.e.holdView(h)
			t.remember(req.IdempotencyKey, fp, &idemResult{Hold: &out})
			return nil
		}
		out = t.e.holdView(h)
		out.ExpiresAt = inventory.UnixMilli(exp)
		r := &record{Op: opExtend, At: t.now, Actor: req.Actor, Hold: h.ID, User: h.User, Seats: h.Seats,
			Pool: h.Pool, Qty: h.Qty, Expires: exp}
		if req.IdempotencyKey != "" {
			r.Key, r.FP, r.Res = req.IdempotencyKey, fp, &idemResult{Hold: &out}
		}
		t.commit(r)
		return nil
	})
	return out, err
}

// Cancel implements inventory.Store.
func (s *Store) Cancel(ctx context.Context, id, orderID string, req inventory.CancelRequest) (inventory.Order, error) {
	if err := req.Validate(); err != nil {
		return inventory.Order{}, err
	}
	var out inventory.Order
	err := s.tx(ctx, id, func(t *txn) error {
		o, err := t.order(orderID)
		if err != nil {
			return err
		}
		if o.Status == inventory.OrderConfirmed {
			t.commit(&record{Op: opCancel, At: t.now, Actor: req.Actor, Hold: o.Hold, Order: o.ID, User: o.User,
				Seats: o.Seats, Pool: o.Pool, Qty: o.Qty, Reason: req.Reason})
		}
		out = t.e.orderView(t.e.orders[orderID]) // commit replaced the order (copy-on-write)
		return nil
	})
	return out, err
}

// GetOrder implements inventory.Store.
func (s *Store) GetOrder(ctx context.Context, id, orderID string) (inventory.Order, error) {
	var out inventory.Order
	err := s.tx(ctx, id, func(t *txn) error {
		o, err := t.order(orderID)
		if err != nil {
			return err
		}
		out = t.e.orderView(o)
		return nil
	})
	return out, err
}

// Reap implements inventory.Store.
func (s *Store) Reap(ctx context.Context, id string, max int) (int, error) {
	if max <= 0 {
		max = inventory.DefaultReapBatch
	}
	n := 0
	err := s.run(ctx, id, max, func(t *txn) error {
		n = t.expired
		return defined(t.e)
	})
	return n, err
}
