package demoshop

import (
	"net/http"
	"testing"

	"github.com/waitroom/waitroom/inventory"
)

// BenchmarkEventPage renders the busiest page (availability, a seat map
// of 200 seats) through a real sidecar over loopback.
func BenchmarkEventPage(b *testing.B) {
	h := newHarness(b)
	b.ReportAllocs()
	for b.Loop() {
		if r := h.get("/events/"+testEvent, "alice"); r.status != http.StatusOK {
			b.Fatal(r.status)
		}
	}
}

func BenchmarkQRSVG(b *testing.B) {
	s := testShop(b, testEvent, "0123456789abcdef0123")
	code := s.TicketCode(inventory.NewID(inventory.OrderIDPrefix))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := qrSVG(code); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCSRFCheck(b *testing.B) {
	s := testShop(b, testEvent, "0123456789abcdef0123")
	tok := s.csrfToken("visitor-123")
	b.ReportAllocs()
	for b.Loop() {
		if !s.validCSRF("visitor-123", tok) {
			b.Fatal("token refused")
		}
	}
}
