// Holds and orders: Hold, Confirm, Release, Cancel, their lookups, and
// Reap, which expires due holds.

package redisstore

import (
	"context"

	"github.com/waitroom/waitroom/inventory"
)

// ttlMillis is the hold's TTL for the script; 0 means the event's default.
func ttlMillis(req *inventory.HoldRequest) int64 {
	switch {
	case req.TTL > 0:
		return req.TTL.Milliseconds()
	case req.TTLSeconds > 0:
		return int64(req.TTLSeconds) * 1000
	}
	return 0
}

// Hold implements inventory.Store.
func (s *Store) Hold(ctx context.Context, id string, req inventory.HoldRequest) (inventory.Hold, error) {
	if err := req.Validate(); err != nil {
		return inventory.Hold{}, err
	}
	if err := badEvent(id); err != nil {
		return inventory.Hold{}, err
	}
	var kind, target string
	qty := 0
	switch {
	case req.Seats != nil:
		kind, target, qty = "seats", inventory.JoinSeats(req.Seats), len(req.Seats)
	case req.Best != nil && req.Best.Section != "":
		kind, target, qty = "section", req.Best.Section, req.Best.Quantity
	case req.Best != nil:
		kind, target, qty = "tier", req.Best.Tier, req.Best.Quantity
	default:
		kind, target, qty = "ga", req.GA.Pool, req.GA.Quantity
	}
	fp := ""
	if req.IdempotencyKey != "" {
		fp = req.Fingerprint()
	}
	r, err := s.write(ctx, scriptHold, id, inventory.NewID(inventory.HoldIDPrefix), req.User, kind, target, qty,
		ttlMillis(&req), req.IdempotencyKey, fp, req.Actor)
	if err != nil {
		return inventory.Hold{}, err
	}
	return holdFrom(id, r), nil
}

func holdFrom(event string, r reply) inventory.Hold {
	return inventory.Hold{ID: r.get("id"), Event: event, User: r.get("u"), Seats: inventory.SplitSeats(r.get("seats")),
		Pool: r.get("pool"), Quantity: int(r.int("q")), PriceCents: r.int("price"),
		CreatedAt: inventory.UnixMilli(r.int("c")), ExpiresAt: inventory.UnixMilli(r.int("e")),
		Status: inventory.HoldStatus(r.get("st")), OrderID: r.get("o"), Replayed: r.replayed}
}

func orderFrom(event string, r reply) inventory.Order {
	o := inventory.Order{ID: r.get("id"), HoldID: r.get("h"), Event: event, User: r.get("u"),
		Seats: inventory.SplitSeats(r.get("seats")), Pool: r.get("pool"), Quantity: int(r.int("q")),
		PriceCents: r.int("price"), PaymentRef: r.get("pay"), Status: inventory.OrderStatus(r.get("st")),
		ConfirmedAt: inventory.UnixMilli(r.int("c")), Replayed: r.replayed}
	if x := r.int("x"); x != 0 {
		t := inventory.UnixMilli(x)
		o.CancelledAt = &t
	}
	return o
}

// GetHold implements inventory.Store.
func (s *Store) GetHold(ctx context.Context, id, hold string) (inventory.Hold, error) {
	if err := badEvent(id); err != nil {
		return inventory.Hold{}, err
	}
	if !inventory.ValidRecordID(hold) {
		return inventory.Hold{}, inventory.Errorf(inventory.ErrHoldNotFound, "hold %q does not exist", hold)
	}
	r, err := s.run(ctx, scriptRead, id, "hold", hold)
	if err != nil {
		return inventory.Hold{}, err
	}
	return holdFrom(id, r), nil
}

// Confirm implements inventory.Store.
func (s *Store) Confirm(ctx context.Context, id, hold string, req inventory.ConfirmRequest) (inventory.Order, error) {
	if err := req.Validate(); err != nil {
		return inventory.Order{}, err
	}
	if err := badEvent(id); err != nil {
		return inventory.Order{}, err
	}
	if !inventory.ValidRecordID(hold) {
		return inventory.Order{}, inventory.Errorf(inventory.ErrHoldNotFound, "hold %q does not exist", hold)
	}
	r, err := s.write(ctx, scriptConfirm, id, hold, inventory.NewID(inventory.OrderIDPrefix), req.PaymentRef,
		req.IdempotencyKey, req.Fingerprint(hold), req.Actor)
	if err != nil {
		return inventory.Order{}, err
	}
	return orderFrom(id, r), nil
}

// Release implements inventory.Store.
func (s *Store) Release(ctx context.Context, id, hold string, req inventory.ReleaseRequest) (inventory.Release, error) {
	if err := req.Validate(); err != nil {
		return inventory.Release{}, err
	}
	if err := badEvent(id); err != nil {
		return inventory.Release{}, err
	}
	if !inventory.ValidRecordID(hold) {
		return inventory.Release{}, inventory.Errorf(inventory.ErrHoldNotFound, "hold %q does not exist", hold)
	}
	r, err := s.write(ctx, scriptRelease, id, hold, req.IdempotencyKey, req.Fingerprint(hold), req.Actor)
	if err != nil {
		return inventory.Release{}, err
	}
	return inventory.Release{HoldID: r.get("id"), Event: id, Status: "released",
		HoldStatus: inventory.HoldStatus(r.get("st")), Replayed: r.replayed}, nil
}

// Extend implements inventory.Store.
func (s *Store) Extend(ctx context.Context, id, hold string, req inventory.ExtendRequest) (inventory.Hold, error) {
	if err := req.Validate(); err != nil {
		return inventory.Hold{}, err
	}
	if err := badEvent(id); err != nil {
		return inventory.Hold{}, err
	}
	if !inventory.ValidRecordID(hold) {
		return inventory.Hold{}, inventory.Errorf(inventory.ErrHoldNotFound, "hold %q does not exist", hold)
	}
	r, err := s.write(ctx, scriptExtend, id, hold, req.TTLMillis(), req.IdempotencyKey, req.Fingerprint(hold), req.Actor,
		inventory.DefaultMaxHoldFactor, inventory.MaxHoldTTL.Milliseconds())
	if err != nil {
		return inventory.Hold{}, err
	}
	return holdFrom(id, r), nil
}

// Cancel implements inventory.Store.
func (s *Store) Cancel(ctx context.Context, id, order string, req inventory.CancelRequest) (inventory.Order, error) {
	if err := req.Validate(); err != nil {
		return inventory.Order{}, err
	}
	if err := badEvent(id); err != nil {
		return inventory.Order{}, err
	}
	if !inventory.ValidRecordID(order) {
		return inventory.Order{}, inventory.Errorf(inventory.ErrOrderNotFound, "order %q does not exist", order)
	}
	r, err := s.write(ctx, scriptCancel, id, order, req.Reason, req.Actor)
	if err != nil {
		return inventory.Order{}, err
	}
	return orderFrom(id, r), nil
}

// GetOrder implements inventory.Store.
func (s *Store) GetOrder(ctx context.Context, id, order string) (inventory.Order, error) {
	if err := badEvent(id); err != nil {
		return inventory.Order{}, err
	}
	if !inventory.ValidRecordID(order) {
		return inventory.Order{}, inventory.Errorf(inventory.ErrOrderNotFound, "order %q does not exist", order)
	}
	r, err := s.run(ctx, scriptRead, id, "order", order)
	if err != nil {
		return inventory.Order{}, err
	}
	return orderFrom(id, r), nil
}

// Reap implements inventory.Store.
func (s *Store) Reap(ctx context.Context, id string, max int) (int, error) {
	if err := badEvent(id); err != nil {
		return 0, err
	}
	if max <= 0 {
		max = inventory.DefaultReapBatch
	}
	r, err := s.run(ctx, scriptRead, id, "reap", max)
	if err != nil {
		return 0, err
	}
	return int(r.int("n")), nil
}
