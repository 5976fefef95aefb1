// Availability, seat maps and the audit stream: the reads that change nothing.

package memstore

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/waitroom/waitroom/inventory"
)

// Availability implements inventory.Store.
func (s *Store) Availability(ctx context.Context, id string) (inventory.Availability, error) {
	var out inventory.Availability
	err := s.tx(ctx, id, func(t *txn) error {
		out = t.e.availability()
		return nil
	})
	return out, err
}

// SeatMap implements inventory.Store.
func (s *Store) SeatMap(ctx context.Context, id, sectionID string) (inventory.SeatMap, error) {
	var out inventory.SeatMap
	err := s.tx(ctx, id, func(t *txn) error {
		sec := t.e.secByID[sectionID]
		if sec == nil {
			return inventory.Errorf(inventory.ErrSectionNotFound, "section %q is not defined", sectionID)
		}
		out = inventory.SeatMap{Event: id, Section: sectionID, Seats: make([]inventory.SeatState, 0, sec.total)}
		for _, r := range sec.rows {
			for k, c := range r.st {
				st := inventory.SeatAvailable
				switch c {
				case seatHeld:
					st = inventory.SeatHeld
				case seatSold:
					st = inventory.SeatSold
				}
				out.Seats = append(out.Seats, inventory.SeatState{ID: inventory.SeatID(sectionID, r.id, k+1), Status: st})
			}
		}
		return nil
	})
	return out, err
}

// Audit implements inventory.Store. Cursors are journal offsets.
func (s *Store) Audit(ctx context.Context, id, after string, limit int) (inventory.AuditPage, error) {
	if limit <= 0 {
		limit = inventory.DefaultAuditPage
	}
	limit = min(limit, inventory.MaxAuditPage)
	var off int64
	if after != "" {
		v, err := strconv.ParseInt(after, 10, 64)
		if err != nil || v < 0 {
			return inventory.AuditPage{}, inventory.Errorf(inventory.ErrInvalid, "after: not a cursor of this event's audit stream")
		}
		off = v
	}
	sl, err := s.slot(id)
	if err != nil {
		return inventory.AuditPage{}, err
	}
	// Wait until what exists now is durable, then read the durable prefix.
	if err := s.tx(ctx, id, func(*txn) error { return nil }); err != nil {
		return inventory.AuditPage{}, err
	}
	page := inventory.AuditPage{Event: id, Entries: []inventory.AuditEntry{}, Next: strconv.FormatInt(off, 10)}
	var decodeErr error
	err = sl.j.ReadFrom(off, func(end int64, payload []byte) bool {
		var r record
		if decodeErr = json.Unmarshal(payload, &r); decodeErr != nil {
			return false
		}
		page.Next = strconv.FormatInt(end, 10)
		if ent, ok := r.auditEntry(); ok {
			ent.ID = page.Next
			page.Entries = append(page.Entries, ent)
		}
		return len(page.Entries) < limit
	})
	if errors.Is(err, errBadCursor) {
		return inventory.AuditPage{}, inventory.Errorf(inventory.ErrInvalid, "after: not a cursor of this event's audit stream")
	}
	if err == nil {
		err = decodeErr
	}
	if err != nil {
		return inventory.AuditPage{}, s.unavailable(err)
	}
	return page, nil
}
