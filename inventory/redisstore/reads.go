// Availability, seat maps and the audit stream: the reads that change nothing.

package redisstore

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/waitroom/waitroom/inventory"
)

// counts parses "total|held|sold".
func counts(v string) (total int, c inventory.Counts) {
	parts := strings.Split(v, "|")
	if len(parts) != 3 {
		return 0, c
	}
	total, _ = strconv.Atoi(parts[0])
	c.Held, _ = strconv.Atoi(parts[1])
	c.Sold, _ = strconv.Atoi(parts[2])
	c.Available = total - c.Held - c.Sold
	return total, c
}

// Availability implements inventory.Store.
func (s *Store) Availability(ctx context.Context, id string) (inventory.Availability, error) {
	if err := badEvent(id); err != nil {
		return inventory.Availability{}, err
	}
	r, err := s.run(ctx, scriptRead, id, "availability", "")
	if err != nil {
		return inventory.Availability{}, err
	}
	a := inventory.Availability{Event: id, Sections: map[string]inventory.Counts{}, GA: map[string]inventory.PoolCounts{}}
	for i := 2; i+1 < len(r.kv); i += 2 {
		name, v := r.kv[i], r.kv[i+1]
		total, c := counts(v)
		switch {
		case strings.HasPrefix(name, "s:"):
			a.Sections[name[2:]] = c
		case strings.HasPrefix(name, "p:"):
			a.GA[name[2:]] = inventory.PoolCounts{Capacity: total, Counts: c}
		default:
			continue
		}
		a.Available += c.Available
		a.Held += c.Held
		a.Sold += c.Sold
	}
	return a, nil
}

// SeatMap implements inventory.Store.
func (s *Store) SeatMap(ctx context.Context, id, section string) (inventory.SeatMap, error) {
	if err := badEvent(id); err != nil {
		return inventory.SeatMap{}, err
	}
	r, err := s.run(ctx, scriptRead, id, "seats", section)
	if err != nil {
		return inventory.SeatMap{}, err
	}
	m := inventory.SeatMap{Event: id, Section: section, Seats: []inventory.SeatState{}}
	for i := 2; i+1 < len(r.kv); i += 2 {
		row, st := r.kv[i], r.kv[i+1]
		for k := 0; k < len(st); k++ {
			status := inventory.SeatAvailable
			switch st[k] {
			case 'h':
				status = inventory.SeatHeld
			case 's':
				status = inventory.SeatSold
			}
			m.Seats = append(m.Seats, inventory.SeatState{ID: inventory.SeatID(section, row, k+1), Status: status})
		}
	}
	return m, nil
}

var streamID = regexp.MustCompile(`^[0-9]{1,20}-[0-9]{1,20}$`)

// Audit implements inventory.Store. Cursors are stream entry ids.
func (s *Store) Audit(ctx context.Context, id, after string, limit int) (inventory.AuditPage, error) {
	if err := badEvent(id); err != nil {
		return inventory.AuditPage{}, err
	}
	if after != "" && !streamID.MatchString(after) {
		return inventory.AuditPage{}, inventory.Errorf(inventory.ErrInvalid, "after: not a cursor of this event's audit stream")
	}
	if limit <= 0 {
		limit = inventory.DefaultAuditPage
	}
	limit = min(limit, inventory.MaxAuditPage)
	// Expire what is due first, so that expiries show up in the stream.
	if _, err := s.run(ctx, scriptRead, id, "sync", ""); err != nil {
		return inventory.AuditPage{}, err
	}
	start := "-"
	if after != "" {
		start = "(" + after
	}
	msgs, err := s.c.XRangeN(ctx, s.key(id, "audit"), start, "+", int64(limit)).Result()
	if err != nil {
		return inventory.AuditPage{}, s.unavailable(err)
	}
	page := inventory.AuditPage{Event: id, Entries: make([]inventory.AuditEntry, 0, len(msgs)), Next: after}
	for _, m := range msgs {
		page.Entries = append(page.Entries, auditEntry(m))
		page.Next = m.ID
	}
	return page, nil
}

// auditEntry decodes a stream entry: one field "e" holding action, time,
// actor, user, hold, order, seats, pool and quantity (lua/prelude.lua).
func auditEntry(m redis.XMessage) inventory.AuditEntry {
	raw, _ := m.Values["e"].(string)
	var f [9]string
	for i, part := range strings.SplitN(raw, "\x1f", len(f)) {
		f[i] = part
	}
	at, _ := strconv.ParseInt(f[1], 10, 64)
	q, _ := strconv.Atoi(f[8])
	var seats []string
	if f[6] != "" {
		seats = strings.Split(f[6], ",")
	}
	return inventory.AuditEntry{ID: m.ID, At: inventory.UnixMilli(at), Action: f[0], Actor: f[2], User: f[3],
		HoldID: f[4], OrderID: f[5], Seats: seats, Pool: f[7], Quantity: q}
}
