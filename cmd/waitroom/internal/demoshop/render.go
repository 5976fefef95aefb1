package demoshop

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/waitroom/waitroom/inventory"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// pages are the parsed templates, one set per page, each with the layout.
type pages map[string]*template.Template

// pageNames are the templates in templates/, besides layout.html.
var pageNames = []string{"home", "event", "checkout", "ticket", "order", "message"}

func parsePages() (pages, error) {
	layout, err := template.ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("demoshop: parsing the layout: %w", err)
	}
	p := make(pages, len(pageNames))
	for _, name := range pageNames {
		t, err := template.Must(layout.Clone()).ParseFS(templateFS, "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("demoshop: parsing page %s: %w", name, err)
		}
		p[name] = t
	}
	return p, nil
}

// base is what every page shows: the event in the header.
type base struct {
	Title    string
	Name     string
	Venue    string
	When     string
	EventURL string
	// Countdown includes the checkout's countdown script.
	Countdown bool
	// SessionScript is waitroom's session banner script ("": none).
	SessionScript string
}

func (s *Shop) base(title string) base {
	return base{Title: title, Name: s.name, Venue: s.venue, When: s.date.Format("Monday 2 January 2006, 15:04 MST"),
		EventURL: s.eventURL(), SessionScript: s.sessionScript}
}

// link is a link or button on a page; Href is a path of this shop.
type link struct {
	Href, Text string
	Primary    bool
}

// problem is a kind explanation of why something did not work.
type problem struct {
	Title string
	Text  string
	// Seats names the seats concerned, readably.
	Seats []string
}

// messagePage is a page that explains something: errors, outcomes.
type messagePage struct {
	base
	Heading string
	Text    []string
	Links   []link
}

// render executes a page into a buffer first, so that a template failure
// never sends half a page, and answers with it.
func (s *Shop) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "layout", data); err != nil {
		s.log.Error("demoshop: rendering a page", "page", name, "err", err)
		s.failed(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// message renders a messagePage; its Title is its Heading.
func (s *Shop) message(w http.ResponseWriter, r *http.Request, status int, p messagePage) {
	p.base = s.base(p.Heading)
	s.render(w, r, status, "message", p)
}

// failed answers 500 with a fixed page, for when rendering itself fails.
func (s *Shop) failed(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusInternalServerError)
	w.Write([]byte(`<!doctype html><html lang="en"><meta charset="utf-8"><title>Something went wrong</title>` +
		`<h1>Something went wrong</h1><p>Please go back and try again.</p></html>`))
}

func (s *Shop) notFound(w http.ResponseWriter, r *http.Request) {
	s.message(w, r, http.StatusNotFound, messagePage{
		Heading: "Page not found",
		Text:    []string{"There is nothing at this address. If you followed a link to a hold or an order, it may belong to someone else, or it may have ended."},
		Links:   []link{{Href: "/", Text: "Back to the event", Primary: true}},
	})
}

// unavailable answers when the sidecar could not do what was asked. The
// error is logged; the page says only that the ticket system is busy.
func (s *Shop) unavailable(w http.ResponseWriter, r *http.Request, call string, err error) {
	s.log.Warn("demoshop: the sidecar call failed", "call", call, "path", r.URL.Path, "err", err)
	s.message(w, r, http.StatusServiceUnavailable, messagePage{
		Heading: "The ticket system is busy",
		Text:    []string{"We could not reach it just now. Please try again in a moment."},
		Links:   []link{{Href: s.eventURL(), Text: "Back to the seat map", Primary: true}},
	})
}

// static serves the embedded stylesheet and script.
func (s *Shop) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if strings.Contains(name, "/") {
		s.notFound(w, r)
		return
	}
	b, err := fs.ReadFile(assetFS, "assets/"+name)
	if err != nil {
		s.notFound(w, r)
		return
	}
	var ctype string
	switch path.Ext(name) {
	case ".css":
		ctype = "text/css; charset=utf-8"
	case ".js":
		ctype = "text/javascript; charset=utf-8"
	default:
		ctype = "application/octet-stream"
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Cache-Control", "public, max-age=3600")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

// money formats cents as dollars: 123456 → "$1,234.56".
func money(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	whole := strconv.FormatInt(cents/100, 10)
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return fmt.Sprintf("%s$%s.%02d", sign, b.String(), cents%100)
}

// seatName reads a seat id: "lower-A-7" → "Lower bowl, row A, seat 7".
func seatName(id string) string {
	sec, row, n, ok := inventory.ParseSeatID(id)
	if !ok {
		return id
	}
	return fmt.Sprintf("%s, row %s, seat %d", areaName(sec), row, n)
}

func seatNames(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = seatName(id)
	}
	return out
}

// lineItem is one line of a checkout or an order.
type lineItem struct {
	Text  string
	Price string // empty when not known
}

// lineItems lists what a hold or order is for: each seat with its
// section's price, or the GA tickets.
func lineItems(ev *inventory.Event, seats []string, pool string, qty int, total int64) []lineItem {
	if pool != "" {
		return []lineItem{{Text: fmt.Sprintf("%d × %s", qty, areaName(pool)), Price: money(total)}}
	}
	prices := map[string]int64{}
	if ev != nil {
		for _, sec := range ev.Sections {
			prices[sec.ID] = sec.PriceCents
		}
	}
	items := make([]lineItem, len(seats))
	for i, id := range seats {
		items[i].Text = seatName(id)
		if sec, _, _, ok := inventory.ParseSeatID(id); ok {
			if p, ok := prices[sec]; ok {
				items[i].Price = money(p)
			}
		}
	}
	return items
}

// clock formats a duration as m:ss, rounding up to the second.
func clock(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	secs := int((d + time.Second - 1) / time.Second)
	return fmt.Sprintf("%d:%02d", secs/60, secs%60)
}

// plural picks one or many by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
