package ledger

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/waitroom/waitroom/inventory"
)

// Mismatch is a seat sold in one ledger and not the other, with the
// order that has it.
type Mismatch struct {
	Seat  string `json:"seat"`
	Order string `json:"order"`
}

// Result is a reconciliation of the sidecar's sold seats with the
// origin's orders.
type Result struct {
	// SidecarSeats and SidecarOrders count the seats sold in the
	// sidecar and its confirmed orders; OriginSeats and OriginOrders the
	// orders file's.
	SidecarSeats, SidecarOrders int
	OriginSeats, OriginOrders   int
	// OnlySidecar are seats sold in the sidecar (with its order id) that
	// no order of the file has; OnlyOrigin seats of the file's orders
	// (with the file's order id) that the sidecar has not sold. Sorted
	// by seat.
	OnlySidecar, OnlyOrigin []Mismatch
	// Position is the audit position the sidecar's orders were read up
	// to.
	Position Position
}

// Agree reports whether both ledgers sold the same seats.
func (r *Result) Agree() bool { return len(r.OnlySidecar) == 0 && len(r.OnlyOrigin) == 0 }

// Reconcile compares the numbered seats the sidecar sold for event (the
// seats of its confirmed orders, which are the seats its seat map shows
// sold) with the origin's orders. GA places have no seat ids and are
// not compared.
func Reconcile(ctx context.Context, s inventory.Store, event string, origin *Orders) (*Result, error) {
	res := &Result{OriginSeats: len(origin.Seats), OriginOrders: origin.Orders}
	if _, err := s.Event(ctx, event); err != nil {
		return nil, err
	}
	sold := map[string]string{}
	pos, err := walk(ctx, s, event, func(e inventory.AuditEntry) error {
		if e.Action != inventory.ActionConfirm || e.OrderID == "" {
			return nil
		}
		o, err := s.GetOrder(ctx, event, e.OrderID)
		if err != nil {
			return err
		}
		if o.Status != inventory.OrderConfirmed {
			return nil
		}
		res.SidecarOrders++
		for _, seat := range o.Seats {
			sold[seat] = o.ID
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Position, res.SidecarSeats = pos, len(sold)
	for _, seat := range slices.Sorted(maps.Keys(sold)) {
		if _, ok := origin.Seats[seat]; !ok {
			res.OnlySidecar = append(res.OnlySidecar, Mismatch{Seat: seat, Order: sold[seat]})
		}
	}
	for _, seat := range slices.Sorted(maps.Keys(origin.Seats)) {
		if _, ok := sold[seat]; !ok {
			res.OnlyOrigin = append(res.OnlyOrigin, Mismatch{Seat: seat, Order: origin.Seats[seat]})
		}
	}
	return res, nil
}

// WriteText writes the result for a person: the counts, then each
// mismatch on its own line.
func (r *Result) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "sidecar: %d seats sold in %d orders (audit read to %q, %d entries)\norigin:  %d seats in %d orders\n",
		r.SidecarSeats, r.SidecarOrders, r.Position.Last, r.Position.Entries, r.OriginSeats, r.OriginOrders)
	if err != nil {
		return err
	}
	for _, m := range r.OnlySidecar {
		if _, err := fmt.Fprintf(w, "sold in the sidecar, in no order of the file: %s (sidecar order %s)\n", m.Seat, m.Order); err != nil {
			return err
		}
	}
	for _, m := range r.OnlyOrigin {
		if _, err := fmt.Fprintf(w, "in the file's orders, not sold in the sidecar: %s (order %s)\n", m.Seat, m.Order); err != nil {
			return err
		}
	}
	verdict := "the sidecar and the orders agree"
	if !r.Agree() {
		verdict = fmt.Sprintf("they disagree: %d seats only in the sidecar, %d only in the orders", len(r.OnlySidecar), len(r.OnlyOrigin))
	}
	_, err = fmt.Fprintln(w, verdict)
	return err
}
