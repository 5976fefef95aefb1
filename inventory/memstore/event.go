package memstore

import (
	"container/heap"
	"errors"
	"slices"

	"github.com/waitroom/waitroom/inventory"
)

// Seat states in a row's status bytes.
const (
	seatFree = inventory.SeatFree
	seatHeld = 'h'
	seatSold = 's'
)

type section struct {
	def     inventory.Section
	rows    []*row
	rowByID map[string]*row
	total   int
	held    int
	sold    int
}

type row struct {
	id string
	st []byte
}

type pool struct {
	def  inventory.Pool
	held int
	sold int
}

// hold is a hold's state; it is also its snapshot form.
type hold struct {
	ID      string               `json:"id"`
	User    string               `json:"user"`
	Seats   []string             `json:"seats,omitempty"`
	Pool    string               `json:"pool,omitempty"`
	Qty     int                  `json:"qty"`
	Price   int64                `json:"price"`
	Created int64                `json:"created"`
	Expires int64                `json:"exp"`
	Status  inventory.HoldStatus `json:"status"`
	Order   string               `json:"order,omitempty"`
	Ended   int64                `json:"ended,omitempty"`
}

// order is an order's state; it is also its snapshot form.
type order struct {
	ID        string                `json:"id"`
	Hold      string                `json:"hold"`
	User      string                `json:"user"`
	Seats     []string              `json:"seats,omitempty"`
	Pool      string                `json:"pool,omitempty"`
	Qty       int                   `json:"qty"`
	Price     int64                 `json:"price"`
	PayRef    string                `json:"pay,omitempty"`
	Status    inventory.OrderStatus `json:"status"`
	Confirmed int64                 `json:"confirmed"`
	Cancelled int64                 `json:"cancelled,omitempty"`
}

// Holds and orders are copy-on-write: apply replaces a changed one with
// a fresh copy and never alters one that is in the maps. A snapshot can
// therefore take the pointers under the lock and encode them later.
func (h *hold) changed() *hold {
	if h == nil {
		return nil
	}
	c := *h
	return &c
}

func (o *order) changed() *order {
	c := *o
	return &c
}

// idemRec is a remembered outcome of an idempotent request.
type idemRec struct {
	Key string      `json:"key"`
	FP  string      `json:"fp"`
	At  int64       `json:"at"`
	Res *idemResult `json:"res"`
}

// event is one event's whole state. Every field is guarded by Store's
// per-event lock (eventSlot.mu).
type event struct {
	id       string
	def      inventory.EventDef
	sections []*section
	secByID  map[string]*section
	tiers    map[string][]*section
	pools    []*pool
	poolByID map[string]*pool

	holds    map[string]*hold
	orders   map[string]*order
	users    map[string]int // held + sold seats per user
	expiries expiryHeap     // live holds by expiry (stale entries skipped)
	finished queue[*hold]   // released and expired holds, in order of ending
	idem     map[string]*idemRec
	idemFIFO queue[*idemRec]
}

func newEvent(id string) *event {
	return &event{
		id:     id,
		holds:  map[string]*hold{},
		orders: map[string]*order{},
		users:  map[string]int{},
		idem:   map[string]*idemRec{},
	}
}

// define installs a (new or changed) definition, keeping the state of
// every seat that still exists. Callers check conflicts first.
func (e *event) define(def inventory.EventDef) {
	old := e.secByID
	oldPools := e.poolByID
	e.def = def
	e.sections = make([]*section, len(def.Sections))
	e.secByID = make(map[string]*section, len(def.Sections))
	e.tiers = map[string][]*section{}
	for i, sd := range def.Sections {
		s := &section{def: sd, rows: make([]*row, len(sd.Rows)), rowByID: make(map[string]*row, len(sd.Rows))}
		for j, rd := range sd.Rows {
			r := &row{id: rd.ID, st: make([]byte, rd.Seats)}
			for k := range r.st {
				r.st[k] = seatFree
			}
			if prev := old[sd.ID]; prev != nil {
				if pr := prev.rowByID[rd.ID]; pr != nil {
					copy(r.st, pr.st)
				}
			}
			s.rows[j] = r
			s.rowByID[rd.ID] = r
		}
		s.recount()
		e.sections[i] = s
		e.secByID[sd.ID] = s
		if sd.Tier != "" {
			e.tiers[sd.Tier] = append(e.tiers[sd.Tier], s)
		}
	}
	e.pools = make([]*pool, len(def.GA))
	e.poolByID = make(map[string]*pool, len(def.GA))
	for i, pd := range def.GA {
		p := &pool{def: pd}
		if op := oldPools[pd.ID]; op != nil {
			p.held, p.sold = op.held, op.sold
		}
		e.pools[i] = p
		e.poolByID[pd.ID] = p
	}
}

func (s *section) recount() {
	s.total, s.held, s.sold = 0, 0, 0
	for _, r := range s.rows {
		s.total += len(r.st)
		for _, c := range r.st {
			switch c {
			case seatHeld:
				s.held++
			case seatSold:
				s.sold++
			}
		}
	}
}

// conflicts lists the held or sold seats and GA pools that def would drop.
func (e *event) conflicts(def *inventory.EventDef) (seats, pools []string) {
	next := map[string]map[string]int{}
	for _, s := range def.Sections {
		rows := map[string]int{}
		for _, r := range s.Rows {
			rows[r.ID] = r.Seats
		}
		next[s.ID] = rows
	}
	for _, s := range e.sections {
		for _, r := range s.rows {
			size := next[s.def.ID][r.id] // 0 when the section or row goes
			for k := size; k < len(r.st); k++ {
				if r.st[k] != seatFree {
					seats = append(seats, inventory.SeatID(s.def.ID, r.id, k+1))
				}
			}
		}
	}
	capacity := map[string]int{}
	for _, p := range def.GA {
		capacity[p.ID] = p.Capacity
	}
	for _, p := range e.pools {
		if p.held+p.sold > capacity[p.def.ID] {
			pools = append(pools, p.def.ID)
		}
	}
	return seats, pools
}

// seat finds a seat by id.
func (e *event) seat(id string) (*section, *row, int, bool) {
	sec, rw, n, ok := inventory.ParseSeatID(id)
	if !ok {
		return nil, nil, 0, false
	}
	s := e.secByID[sec]
	if s == nil {
		return nil, nil, 0, false
	}
	r := s.rowByID[rw]
	if r == nil || n > len(r.st) {
		return nil, nil, 0, false
	}
	return s, r, n - 1, true
}

// setSeats moves seats from one state to another and keeps the counts.
func (e *event) setSeats(seats []string, to byte) {
	for _, id := range seats {
		s, r, k, ok := e.seat(id)
		if !ok {
			continue
		}
		switch r.st[k] {
		case seatHeld:
			s.held--
		case seatSold:
			s.sold--
		}
		switch to {
		case seatHeld:
			s.held++
		case seatSold:
			s.sold++
		}
		r.st[k] = to
	}
}

func (e *event) addUser(user string, n int) {
	if v := e.users[user] + n; v > 0 {
		e.users[user] = v
	} else {
		delete(e.users, user)
	}
}

// apply carries out one record's effect. It is the only code that changes
// an event, live or during recovery.
func (e *event) apply(r *record) {
	switch r.Op {
	case opDefine:
		e.define(*r.Def)
	case opHold:
		h := &hold{ID: r.Hold, User: r.User, Seats: r.Seats, Pool: r.Pool, Qty: r.Qty, Price: r.Price,
			Created: r.At, Expires: r.Expires, Status: inventory.HoldHeld}
		if h.Pool != "" {
			if p := e.poolByID[h.Pool]; p != nil {
				p.held += h.Qty
			}
		} else {
			e.setSeats(h.Seats, seatHeld)
		}
		e.addUser(h.User, h.Qty)
		e.holds[h.ID] = h
		heap.Push(&e.expiries, expiry{at: h.Expires, hold: h})
	case opConfirm:
		h := e.holds[r.Hold].changed()
		if h == nil {
			return
		}
		e.holds[h.ID] = h
		h.Status, h.Order = inventory.HoldConfirmed, r.Order
		if h.Pool != "" {
			if p := e.poolByID[h.Pool]; p != nil {
				p.held -= h.Qty
				p.sold += h.Qty
			}
		} else {
			e.setSeats(h.Seats, seatSold)
		}
		e.orders[r.Order] = &order{ID: r.Order, Hold: h.ID, User: h.User, Seats: h.Seats, Pool: h.Pool,
			Qty: h.Qty, Price: h.Price, PayRef: r.PayRef, Status: inventory.OrderConfirmed, Confirmed: r.At}
	case opRelease, opExpire:
		h := e.holds[r.Hold]
		if h == nil || h.Status != inventory.HoldHeld {
			return
		}
		h = h.changed()
		e.holds[h.ID] = h
		h.Status, h.Ended = inventory.HoldReleased, r.At
		if r.Op == opExpire {
			h.Status = inventory.HoldExpired
		}
		e.freeHold(h.Pool, h.Seats, h.Qty, false)
		e.addUser(h.User, -h.Qty)
		e.finished.push(h)
	case opExtend:
		h := e.holds[r.Hold]
		if h == nil || h.Status != inventory.HoldHeld || r.Expires <= h.Expires {
			return
		}
		h = h.changed() // the heap entry of the old copy is stale now
		e.holds[h.ID] = h
		h.Expires = r.Expires
		heap.Push(&e.expiries, expiry{at: h.Expires, hold: h})
	case opCancel:
		o := e.orders[r.Order]
		if o == nil || o.Status != inventory.OrderConfirmed {
			return
		}
		o = o.changed()
		e.orders[o.ID] = o
		o.Status, o.Cancelled = inventory.OrderCancelled, r.At
		e.freeHold(o.Pool, o.Seats, o.Qty, true)
		e.addUser(o.User, -o.Qty)
	}
	if r.Key != "" {
		rec := &idemRec{Key: r.Key, FP: r.FP, At: r.At, Res: r.Res}
		e.idem[r.Key] = rec
		e.idemFIFO.push(rec)
	}
}

// freeHold returns seats or GA places to sale.
func (e *event) freeHold(poolID string, seats []string, qty int, sold bool) {
	if poolID == "" {
		e.setSeats(seats, seatFree)
		return
	}
	if p := e.poolByID[poolID]; p != nil {
		if sold {
			p.sold -= qty
		} else {
			p.held -= qty
		}
	}
}

// due pops up to max holds whose expiry is at or before now (max < 0: all)
// and returns expire records for them, not yet applied.
func (e *event) due(now int64, max int) []*record {
	var recs []*record
	for e.expiries.Len() > 0 && (max < 0 || len(recs) < max) {
		top := e.expiries[0]
		if top.hold.Status != inventory.HoldHeld || e.holds[top.hold.ID] != top.hold {
			heap.Pop(&e.expiries) // confirmed or released: stale entry
			continue
		}
		if top.at > now {
			break
		}
		heap.Pop(&e.expiries)
		h := top.hold
		recs = append(recs, &record{Op: opExpire, At: h.Expires, Actor: "system", Hold: h.ID, User: h.User,
			Seats: h.Seats, Pool: h.Pool, Qty: h.Qty})
	}
	return recs
}

// prune forgets finished holds and idempotency records past retention.
// It is derived from time alone, so it is not journaled.
func (e *event) prune(now, holdRetention, idemTTL int64) {
	for h, ok := e.finished.peek(); ok && h.Ended+holdRetention <= now; h, ok = e.finished.peek() {
		e.finished.pop()
		if cur := e.holds[h.ID]; cur == h && h.Status != inventory.HoldHeld && h.Status != inventory.HoldConfirmed {
			delete(e.holds, h.ID)
		}
	}
	for r, ok := e.idemFIFO.peek(); ok && r.At+idemTTL <= now; r, ok = e.idemFIFO.peek() {
		e.idemFIFO.pop()
		if e.idem[r.Key] == r {
			delete(e.idem, r.Key)
		}
	}
}

func (e *event) holdView(h *hold) inventory.Hold {
	seats := h.Seats
	if seats == nil {
		seats = []string{}
	}
	return inventory.Hold{ID: h.ID, Event: e.id, User: h.User, Seats: seats, Pool: h.Pool, Quantity: h.Qty,
		PriceCents: h.Price, CreatedAt: inventory.UnixMilli(h.Created), ExpiresAt: inventory.UnixMilli(h.Expires),
		Status: h.Status, OrderID: h.Order}
}

func (e *event) orderView(o *order) inventory.Order {
	seats := o.Seats
	if seats == nil {
		seats = []string{}
	}
	v := inventory.Order{ID: o.ID, HoldID: o.Hold, Event: e.id, User: o.User, Seats: seats, Pool: o.Pool,
		Quantity: o.Qty, PriceCents: o.Price, PaymentRef: o.PayRef, Status: o.Status,
		ConfirmedAt: inventory.UnixMilli(o.Confirmed)}
	if o.Cancelled != 0 {
		t := inventory.UnixMilli(o.Cancelled)
		v.CancelledAt = &t
	}
	return v
}

func (e *event) eventView() inventory.Event {
	seats, ga := e.def.Totals()
	return inventory.Event{ID: e.id, EventDef: e.def, Seats: seats, GACapacity: ga}
}

func (e *event) availability() inventory.Availability {
	a := inventory.Availability{Event: e.id, Sections: make(map[string]inventory.Counts, len(e.sections)),
		GA: make(map[string]inventory.PoolCounts, len(e.pools))}
	for _, s := range e.sections {
		c := inventory.Counts{Available: s.total - s.held - s.sold, Held: s.held, Sold: s.sold}
		a.Sections[s.def.ID] = c
		a.Available += c.Available
		a.Held += c.Held
		a.Sold += c.Sold
	}
	for _, p := range e.pools {
		c := inventory.Counts{Available: p.def.Capacity - p.held - p.sold, Held: p.held, Sold: p.sold}
		a.GA[p.def.ID] = inventory.PoolCounts{Capacity: p.def.Capacity, Counts: c}
		a.Available += c.Available
		a.Held += c.Held
		a.Sold += c.Sold
	}
	return a
}

// recordable reports whether an error outcome is remembered under an
// idempotency key: outcomes of the inventory's state, not of bad input.
func recordable(err error) bool {
	for _, k := range []error{inventory.ErrSeatUnavailable, inventory.ErrSoldOut, inventory.ErrNotEnoughSeats,
		inventory.ErrUserLimit, inventory.ErrHoldExpired, inventory.ErrHoldReleased, inventory.ErrHoldConfirmed,
		inventory.ErrOrderCancelled} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// expiry is an entry of the expiry index.
type expiry struct {
	at   int64
	hold *hold
}

type expiryHeap []expiry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// queue is a FIFO that reuses its backing array.
type queue[T any] struct {
	items []T
	head  int
}

func (q *queue[T]) push(x T) { q.items = append(q.items, x) }

func (q *queue[T]) peek() (T, bool) {
	var zero T
	if q.head >= len(q.items) {
		return zero, false
	}
	return q.items[q.head], true
}

func (q *queue[T]) pop() {
	var zero T
	q.items[q.head] = zero
	q.head++
	if q.head > 1024 && q.head*2 > len(q.items) {
		q.items = slices.Clone(q.items[q.head:])
		q.head = 0
	}
}
