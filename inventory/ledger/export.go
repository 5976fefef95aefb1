package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/waitroom/waitroom/inventory"
)

// Line types of an export, in the order they are written.
const (
	TypeEvent = "event" // the definition (once, first)
	TypeSeat  = "seat"  // a numbered seat and its state
	TypePool  = "pool"  // a GA pool's capacity and counts
	TypeHold  = "hold"  // a live hold (status held)
	TypeOrder = "order" // an order, confirmed or cancelled
	TypeAudit = "audit" // the audit position the holds and orders were read up to (once, last)
)

// Line is one line of an export: Type says which of the other fields is
// set.
type Line struct {
	Type  string           `json:"type"`
	Event *inventory.Event `json:"event,omitempty"`
	Seat  *Seat            `json:"seat,omitempty"`
	Pool  *Pool            `json:"pool,omitempty"`
	Hold  *inventory.Hold  `json:"hold,omitempty"`
	Order *inventory.Order `json:"order,omitempty"`
	Audit *Position        `json:"audit,omitempty"`
}

// Seat is a numbered seat's state.
type Seat struct {
	ID      string               `json:"id"`
	Section string               `json:"section"`
	Status  inventory.SeatStatus `json:"status"`
}

// Pool is a GA pool's counts.
type Pool struct {
	ID string `json:"id"`
	inventory.PoolCounts
}

// Position is where in the audit stream an export stopped: the last
// entry's id (the cursor to read on from), how many entries it read, and
// when it finished. Holds and orders are as of that entry; seats and
// pools as of the start of the export (they agree when nothing changed
// while it ran).
type Position struct {
	Last       string    `json:"last"`
	Entries    int       `json:"entries"`
	ExportedAt time.Time `json:"exported_at"`
}

// Summary counts what an export wrote.
type Summary struct {
	Seats, Pools, Holds, Orders int
	Position                    Position
}

// Export writes event's state in s to w as JSON Lines (see Line): the
// definition, every seat of every section in plan order, the GA pools,
// then the live holds and every order in the order the audit stream
// names them (the holds still held, each once; each order once, in its
// state now), and last the audit position.
func Export(ctx context.Context, s inventory.Store, event string, w io.Writer) (Summary, error) {
	var sum Summary
	enc := json.NewEncoder(w)
	ev, err := s.Event(ctx, event)
	if err != nil {
		return sum, err
	}
	if err := enc.Encode(Line{Type: TypeEvent, Event: &ev}); err != nil {
		return sum, err
	}
	for _, sec := range ev.Sections {
		m, err := s.SeatMap(ctx, event, sec.ID)
		if err != nil {
			return sum, err
		}
		for _, st := range m.Seats {
			if err := enc.Encode(Line{Type: TypeSeat, Seat: &Seat{ID: st.ID, Section: sec.ID, Status: st.Status}}); err != nil {
				return sum, err
			}
			sum.Seats++
		}
	}
	if len(ev.GA) > 0 {
		av, err := s.Availability(ctx, event)
		if err != nil {
			return sum, err
		}
		for _, p := range ev.GA {
			if err := enc.Encode(Line{Type: TypePool, Pool: &Pool{ID: p.ID, PoolCounts: av.GA[p.ID]}}); err != nil {
				return sum, err
			}
			sum.Pools++
		}
	}
	pos, err := walk(ctx, s, event, func(e inventory.AuditEntry) error {
		switch e.Action {
		case inventory.ActionHold:
			h, err := s.GetHold(ctx, event, e.HoldID)
			if errors.Is(err, inventory.ErrHoldNotFound) {
				return nil // released or expired, and past the store's retention: not held
			}
			if err != nil {
				return err
			}
			if h.Status != inventory.HoldHeld {
				return nil
			}
			sum.Holds++
			return enc.Encode(Line{Type: TypeHold, Hold: &h})
		case inventory.ActionConfirm:
			if e.OrderID == "" {
				return nil
			}
			o, err := s.GetOrder(ctx, event, e.OrderID)
			if err != nil {
				return err
			}
			sum.Orders++
			return enc.Encode(Line{Type: TypeOrder, Order: &o})
		}
		return nil
	})
	if err != nil {
		return sum, err
	}
	sum.Position = pos
	return sum, enc.Encode(Line{Type: TypeAudit, Audit: &pos})
}

// walk calls fn with every entry of the event's audit stream, a page at
// a time, and returns the position it stopped at. A hold is confirmed
// once, so its confirm entry names one order once.
func walk(ctx context.Context, s inventory.Store, event string, fn func(inventory.AuditEntry) error) (Position, error) {
	var pos Position
	after := ""
	for {
		page, err := s.Audit(ctx, event, after, inventory.MaxAuditPage)
		if err != nil {
			return pos, fmt.Errorf("reading the audit stream after %q: %w", after, err)
		}
		for _, e := range page.Entries {
			if err := fn(e); err != nil {
				return pos, err
			}
			pos.Last = e.ID
			pos.Entries++
		}
		if len(page.Entries) == 0 || page.Next == after {
			break
		}
		after = page.Next
	}
	pos.ExportedAt = time.Now().UTC()
	return pos, nil
}
