package demoshop

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/waitroom/waitroom/inventory"
)

// healthTimeout is how quickly the sidecar must answer /healthz's Ping.
const healthTimeout = 2 * time.Second

// healthz answers 200 "ok" while the sidecar answers Ping; the proxy
// health-checks the origin with it.
func (s *Shop) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
	defer cancel()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := s.inv.Ping(ctx); err != nil {
		s.log.Warn("demoshop: health check: the sidecar does not answer", "err", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte("sidecar unavailable\n"))
		return
	}
	w.Write([]byte("ok\n"))
}

// homePage is the event's front page.
type homePage struct {
	base
	// Known is false when the sidecar did not answer; the page then
	// leaves the figures out.
	Known       bool
	Left, Total int
	From        string // the lowest price
}

func (s *Shop) home(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := callCtx(r)
	defer cancel()
	p := homePage{base: s.base("Tickets")}
	ev, err := s.eventDef(ctx)
	if err == nil {
		var a inventory.Availability
		if a, err = s.inv.Availability(ctx, s.event); err == nil {
			p.Known, p.Left, p.Total = true, a.Available, a.Available+a.Held+a.Sold
			p.From = money(lowestPrice(ev))
		}
	}
	if err != nil {
		// The home page is a pass route, seen by everyone in the queue:
		// it stays up without the figures.
		s.log.Warn("demoshop: home page without availability", "err", err)
	}
	s.render(w, r, http.StatusOK, "home", p)
}

func lowestPrice(ev *inventory.Event) int64 {
	lowest := int64(-1)
	for _, sec := range ev.Sections {
		if lowest < 0 || sec.PriceCents < lowest {
			lowest = sec.PriceCents
		}
	}
	for _, p := range ev.GA {
		if lowest < 0 || p.PriceCents < lowest {
			lowest = p.PriceCents
		}
	}
	return max(lowest, 0)
}

// eventPage is availability, the ways to ask for tickets and a seat map.
type eventPage struct {
	base
	Notice     string
	Problem    *problem
	CSRF       string
	FormKey    string
	HoldURL    string
	Left       int
	Sections   []sectionRow
	Pools      []poolRow
	Quantities []int
	Map        *seatMap
	MyHolds    []holdSummary
}

type sectionRow struct {
	ID, Name, Price  string
	Available, Total int
	URL              string
	Selected         bool
}

type poolRow struct {
	ID, Name, Price  string
	Available, Total int
}

// seatMap is one section's seats, row by row.
type seatMap struct {
	Section, Name, Price string
	Rows                 []seatRow
}

type seatRow struct {
	ID    string
	Seats []seatCell
}

// seatCell is one seat: Status is available, held, sold or mine (held by
// this visitor); Label is what a screen reader says.
type seatCell struct {
	ID      string
	Number  int
	Status  string
	Label   string
	Checked bool
}

// holdSummary offers a way back to a live hold.
type holdSummary struct {
	URL   string
	Items []string
	Left  string
}

// notices are the fixed texts a redirect may ask a page to show.
var notices = map[string]string{
	"released":  "Your seats were released and are back on sale.",
	"cancelled": "Your order was cancelled and the payment refunded. The seats are back on sale.",
}

func (s *Shop) eventPage(w http.ResponseWriter, r *http.Request, visitor string) {
	q := r.URL.Query()
	s.renderEvent(w, r, http.StatusOK, visitor, q.Get("section"), notices[q.Get("notice")], nil, nil)
}

// renderEvent renders the event page with the seat map of section (the
// first section when it is not one), a notice or a problem, and the
// seats in keep ticked again.
func (s *Shop) renderEvent(w http.ResponseWriter, r *http.Request, status int, visitor, section, notice string,
	prob *problem, keep map[string]bool) {
	ctx, cancel := callCtx(r)
	defer cancel()
	ev, err := s.eventDef(ctx)
	if err != nil {
		s.unavailable(w, r, "event", err)
		return
	}
	a, err := s.inv.Availability(ctx, s.event)
	if err != nil {
		s.unavailable(w, r, "availability", err)
		return
	}
	p := eventPage{base: s.base("Choose your tickets"), Notice: notice, Problem: prob, CSRF: s.csrfToken(visitor),
		FormKey: newFormKey(), HoldURL: s.eventURL() + "/hold", Left: a.Available}

	limit := ev.Limits.PerUser
	if limit <= 0 || limit > 10 {
		limit = 10
	}
	for n := 1; n <= limit; n++ {
		p.Quantities = append(p.Quantities, n)
	}

	var selected *inventory.Section
	for i := range ev.Sections {
		if ev.Sections[i].ID == section {
			selected = &ev.Sections[i]
		}
	}
	if selected == nil && len(ev.Sections) > 0 {
		selected = &ev.Sections[0]
	}
	for _, sec := range ev.Sections {
		c := a.Sections[sec.ID]
		p.Sections = append(p.Sections, sectionRow{ID: sec.ID, Name: areaName(sec.ID), Price: money(sec.PriceCents),
			Available: c.Available, Total: c.Available + c.Held + c.Sold, URL: s.sectionURL(sec.ID),
			Selected: sec.ID == selected.ID})
	}
	for _, pool := range ev.GA {
		c := a.GA[pool.ID]
		p.Pools = append(p.Pools, poolRow{ID: pool.ID, Name: areaName(pool.ID), Price: money(pool.PriceCents),
			Available: c.Available, Total: c.Capacity})
	}

	// The visitor's recent holds that are still live, with their seats
	// marked on the map as theirs.
	mine := map[string]bool{}
	if ids, ok := s.recent.Get(visitor); ok {
		var live []string
		for _, id := range ids {
			h, err := s.inv.GetHold(ctx, s.event, id)
			if err != nil {
				s.log.Debug("demoshop: reading a recent hold", "hold", id, "err", err)
				continue
			}
			if h.User != visitor || h.Status != inventory.HoldHeld {
				continue
			}
			live = append(live, id)
			sum := holdSummary{URL: checkoutURL(h.ID), Left: clock(h.ExpiresAt.Sub(s.now()))}
			for _, it := range lineItems(ev, h.Seats, h.Pool, h.Quantity, h.PriceCents) {
				sum.Items = append(sum.Items, it.Text)
			}
			p.MyHolds = append(p.MyHolds, sum)
			for _, id := range h.Seats {
				mine[id] = true
			}
		}
		if len(live) < len(ids) {
			s.recent.Add(visitor, live) // forget the holds that ended
		}
	}

	if selected != nil {
		m, err := s.inv.SeatMap(ctx, s.event, selected.ID)
		if err != nil {
			s.unavailable(w, r, "seat map", err)
			return
		}
		p.Map = buildSeatMap(selected, m, mine, keep)
	}
	s.render(w, r, status, "event", p)
}

// buildSeatMap lays a section's seat states out in its rows.
func buildSeatMap(sec *inventory.Section, m inventory.SeatMap, mine, keep map[string]bool) *seatMap {
	states := make(map[string]inventory.SeatStatus, len(m.Seats))
	for _, st := range m.Seats {
		states[st.ID] = st.Status
	}
	sm := &seatMap{Section: sec.ID, Name: areaName(sec.ID), Price: money(sec.PriceCents)}
	for _, row := range sec.Rows {
		sr := seatRow{ID: row.ID, Seats: make([]seatCell, row.Seats)}
		for n := 1; n <= row.Seats; n++ {
			id := inventory.SeatID(sec.ID, row.ID, n)
			status, ok := states[id]
			if !ok {
				status = inventory.SeatHeld // not in the map: not for sale now
			}
			c := seatCell{ID: id, Number: n, Status: string(status)}
			switch {
			case status == inventory.SeatAvailable:
				c.Label = fmt.Sprintf("Row %s, seat %d, available", row.ID, n)
				c.Checked = keep[id]
			case status == inventory.SeatHeld && mine[id]:
				c.Status = "mine"
				c.Label = fmt.Sprintf("Row %s, seat %d, held for you", row.ID, n)
			case status == inventory.SeatHeld:
				c.Label = fmt.Sprintf("Row %s, seat %d, held by someone else", row.ID, n)
			default:
				c.Label = fmt.Sprintf("Row %s, seat %d, sold", row.ID, n)
			}
			sr.Seats[n-1] = c
		}
		sm.Rows = append(sm.Rows, sr)
	}
	return sm
}
