package report_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/admission/memstore"
	"github.com/waitroom/waitroom/admission/report"
	"github.com/waitroom/waitroom/internal/testkit/fakeclock"
)

var (
	ctx = context.Background()
	t0  = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
)

type meter struct{}

func (meter) Measure(string, time.Time) admission.Measurements {
	return admission.Measurements{RequestRate: 5, LatencyP50: 40 * time.Millisecond, LatencyP95: 90 * time.Millisecond}
}

type seats struct {
	mu   sync.Mutex
	left int
}

func (s *seats) Remaining(string) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.left, true
}

// sale runs a small sale in simulated time over a memstore: 20 visitors
// join in the pre-queue, every one comes back and buys a seat. It
// returns the store with the minute records written.
func sale(t *testing.T) admission.Store {
	t.Helper()
	clk := fakeclock.New(t0)
	s, err := memstore.Open(memstore.Options{Dir: t.TempDir(), Clock: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	inv := &seats{left: 50}
	cfg := admission.EventConfig{ID: "show", QueueOpensAt: t0, OnSaleAt: t0.Add(time.Minute), InventoryEvent: "show",
		Controller: admission.ControllerConfig{InitialActive: 5, MinActive: 5}}
	e, err := admission.New(admission.Options{Store: s, Clock: clk.Now, Meter: meter{}, Inventory: inv,
		Rand: rand.NewChaCha8([32]byte{7}), Replica: "test"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tick := func() {
		t.Helper()
		clk.Add(time.Second)
		if err := e.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	tick()
	var tickets []admission.Ticket
	for range 20 {
		tk, _, err := e.Join(ctx, "show", admission.JoinRequest{})
		if err != nil {
			t.Fatal(err)
		}
		tickets = append(tickets, tk)
	}
	e.NoteDefence("show", "light_pow")
	e.NoteDefence("show", "captcha")
	done := map[int]bool{}
	for clk.Now().Before(t0.Add(4*time.Minute)) || len(done) < len(tickets) {
		if clk.Now().After(t0.Add(time.Hour)) {
			t.Fatalf("%d of %d admitted after an hour", len(done), len(tickets))
		}
		tick()
		for i := range tickets {
			if done[i] {
				continue
			}
			res, err := e.Status(ctx, "show", tickets[i])
			if err != nil {
				t.Fatal(err)
			}
			tickets[i] = res.Ticket
			if res.Status.Kind == admission.StatusAdmitted {
				done[i] = true
				e.NoteUse("show", res.Pass)
				inv.mu.Lock()
				inv.left--
				inv.mu.Unlock()
			}
		}
	}
	if err := e.FlushMinutes(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

func build(t *testing.T, s admission.Store) *report.Report {
	t.Helper()
	r, err := report.Build(ctx, s, report.Event{ID: "show", Lanes: []string{admission.PublicLane}, Prefix: "/_wr"}, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReportOfASale: the report of a simulated sale has a row per
// minute from its first tick to its last, and totals that are what
// happened: 20 joins, 20 admitted, 20 seats sold of 50, nobody a
// no-show, every promise kept, the two defence actions, and the draw
// with its audit links.
func TestReportOfASale(t *testing.T) {
	r := build(t, sale(t))
	if len(r.Minutes) < 4 || !r.From.Equal(t0) || !r.To.Equal(r.Minutes[len(r.Minutes)-1].At.Add(time.Minute)) {
		t.Fatalf("%d minutes from %v to %v; want at least 4 from %v", len(r.Minutes), r.From, r.To, t0)
	}
	for i, m := range r.Minutes {
		if !m.At.Equal(t0.Add(time.Duration(i) * time.Minute)) {
			t.Fatalf("minute %d is %v", i, m.At)
		}
	}
	tot := r.Totals
	if tot.Arrivals != 20 || tot.Admitted != 20 || tot.SeatsSold != 20 || tot.SeatsLeft != 30 ||
		tot.NoShows != 0 || tot.ETAHonesty != 1 || tot.ETAKept != 20 ||
		tot.Defence != (admission.DefenceCounts{LightPoW: 1, Captcha: 1}) {
		t.Fatalf("totals = %+v", tot)
	}
	if r.Minutes[0].Arrivals != 20 || r.Minutes[0].Admitted != 0 || r.Minutes[0].Target != 0 {
		t.Fatalf("pre-queue minute = %+v: want the 20 joins, nobody admitted, no controller", r.Minutes[0])
	}
	if m := r.Minutes[1]; m.Admitted == 0 || m.Target == 0 || m.Reason == "" || m.LatencyP50Ms != 40 || m.OriginRequests != 5*60 {
		t.Fatalf("first selling minute = %+v", m)
	}
	want := []report.Draw{{Lane: "public", Tranche: 0, First: 1, Last: 20, Count: 20, At: r.Draws[0].At,
		Audit: "/_wr/api/draws/show/0", Page: "/_wr/draw/show/0"}}
	if !reflect.DeepEqual(r.Draws, want) || !r.Draws[0].At.Equal(t0.Add(61*time.Second)) {
		t.Fatalf("draws = %+v, want %+v at %v", r.Draws, want, t0.Add(61*time.Second))
	}
}

// TestReportFormats: the CSV has the header and a row per minute whose
// figures add up to the totals; the JSON reads back as the report; the
// HTML is one well-formed page with its charts inline and nothing to
// fetch or run.
func TestReportFormats(t *testing.T) {
	r := build(t, sale(t))

	var b bytes.Buffer
	if err := r.Write(&b, report.CSV); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rows[0], report.Columns) || len(rows) != len(r.Minutes)+1 {
		t.Fatalf("CSV header %q and %d rows; want %q and %d", rows[0], len(rows)-1, report.Columns, len(r.Minutes))
	}
	var arrivals, sold uint64
	for _, row := range rows[1:] {
		if _, err := time.Parse(time.RFC3339, row[0]); err != nil {
			t.Fatalf("minute cell %q: %v", row[0], err)
		}
		for i, cell := range row {
			if report.Columns[i] == "minute" || report.Columns[i] == "reason" {
				continue
			}
			if _, err := strconv.ParseFloat(cell, 64); err != nil {
				t.Fatalf("%s cell %q is not a number", report.Columns[i], cell)
			}
		}
		a, _ := strconv.ParseUint(row[1], 10, 64)
		s, _ := strconv.ParseUint(row[11], 10, 64)
		arrivals, sold = arrivals+a, sold+s
	}
	if arrivals != r.Totals.Arrivals || int(sold) != r.Totals.SeatsSold {
		t.Fatalf("CSV sums: %d arrivals, %d sold; totals say %d, %d", arrivals, sold, r.Totals.Arrivals, r.Totals.SeatsSold)
	}

	b.Reset()
	if err := r.Write(&b, report.JSON); err != nil {
		t.Fatal(err)
	}
	var back report.Report
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if !sameJSON(t, &back, r) {
		t.Fatal("the JSON does not read back as the report")
	}

	b.Reset()
	if err := r.Write(&b, report.HTML); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict, d.AutoClose, d.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	elems := map[string]int{}
	var refs []string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("HTML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			elems[strings.ToLower(se.Name.Local)]++
			for _, a := range se.Attr {
				if a.Name.Local == "href" || a.Name.Local == "src" {
					refs = append(refs, a.Value)
				}
			}
		}
	}
	if elems["svg"] != 7 || elems["script"] != 0 || elems["link"] != 0 || elems["img"] != 0 || elems["style"] != 1 {
		t.Fatalf("HTML elements %v: want 7 inline charts, one style, no script, link or img", elems)
	}
	if elems["tr"] != len(r.Minutes)+1+len(r.Draws)+1 {
		t.Fatalf("%d table rows, want %d minutes and %d draws with their headers", elems["tr"], len(r.Minutes), len(r.Draws))
	}
	for _, ref := range refs {
		if !strings.HasPrefix(ref, "/_wr/") {
			t.Fatalf("the page links to %q: only the draw audits", ref)
		}
	}
	if !strings.Contains(page, `href="/_wr/api/draws/show/0"`) || !strings.Contains(page, `href="/_wr/draw/show/0"`) {
		t.Fatal("the page lacks the draw audit links")
	}
}

// sameJSON reports whether two reports encode alike.
func sameJSON(t *testing.T, a, b *report.Report) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(x, y)
}

// TestReportEmpty: an event without records reports nothing, with the
// rates n/a (-1), in every format.
func TestReportEmpty(t *testing.T) {
	s, err := memstore.Open(memstore.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := build(t, s)
	if len(r.Minutes) != 0 || len(r.Draws) != 0 || r.Totals.NoShowRate != -1 || r.Totals.ETAHonesty != -1 || !r.From.IsZero() {
		t.Fatalf("empty report = %+v", r)
	}
	for _, f := range []report.Format{report.CSV, report.JSON, report.HTML} {
		if err := r.Write(io.Discard, f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]report.Format{"": report.JSON, "csv": report.CSV, "json": report.JSON, "html": report.HTML} {
		if got, err := report.ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"CSV", "xml", "html "} {
		if _, err := report.ParseFormat(in); err == nil {
			t.Errorf("ParseFormat(%q) succeeded", in)
		}
	}
}
