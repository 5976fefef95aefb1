// Tests of the order pages (orders.go): the ticket, cancelling, and that
// nobody but the buyer sees or changes a hold or an order.

package demoshop

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

func TestTicketAndCancel(t *testing.T) {
	h := newHarness(t)
	order := h.buy("alice", seats("lower-J-20"))

	page := h.get("/tickets/"+order, "") // by its link alone
	code := h.shop.TicketCode(order)
	qr, err := qrSVG(code)
	if err != nil {
		t.Fatal(err)
	}
	wantPage(t, page, http.StatusOK, "Your tickets", "Lower bowl, row J, seat 20", "$89.00", string(qr),
		"<code>"+code+"</code>", `href="/events/demo-concert/orders/`+order+`"`, "cannot be guessed")
	if !regexp.MustCompile(`^WRDEMO:demo-concert:ord_[a-z2-7]{26}:[A-Za-z0-9_-]{22}$`).MatchString(code) {
		t.Fatalf("ticket code %q", code)
	}
	if got, err := h.shop.VerifyTicket(code); err != nil || got != order {
		t.Fatalf("VerifyTicket: %q, %v", got, err)
	}

	manage := h.get("/events/"+testEvent+"/orders/"+order, "alice")
	wantPage(t, manage, http.StatusOK, "Cancel the order and refund", "refunds $89.00")
	csrf := csrfRe.FindStringSubmatch(manage.body)[1]
	r := h.post("/events/"+testEvent+"/orders/"+order+"/cancel", "alice", url.Values{"csrf": {csrf}})
	if r.status != http.StatusSeeOther || r.location() != "/tickets/"+order+"?notice=cancelled" {
		t.Fatalf("cancel: %d %q\n%s", r.status, r.location(), r.body)
	}
	h.wantCounts(0, 0)
	_, refunds := h.pay.calls()
	if len(refunds) != 1 || refunds[0].AmountCents != 8900 || refunds[0].Ref == "" {
		t.Fatalf("refunds %+v", refunds)
	}
	page = h.get(r.location(), "")
	wantPage(t, page, http.StatusOK, "This order was cancelled", "Your order was cancelled and the payment refunded.")
	if strings.Contains(page.body, "<svg") || strings.Contains(page.body, "WRDEMO:") {
		t.Fatal("a cancelled order still shows its QR code")
	}
	// Cancelling twice refunds once.
	if r := h.post("/events/"+testEvent+"/orders/"+order+"/cancel", "alice", url.Values{"csrf": {csrf}}); r.status != http.StatusSeeOther {
		t.Fatalf("second cancel: %d", r.status)
	}
	if _, refunds := h.pay.calls(); len(refunds) != 1 {
		t.Fatalf("refunds %+v", refunds)
	}
	wantPage(t, h.get("/events/"+testEvent+"/orders/"+order, "alice"), http.StatusOK, "This order is cancelled")
}

func TestOthersCannotSeeOrTouch(t *testing.T) {
	h := newHarness(t)
	hold := h.hold("alice", seats("lower-F-1"))
	order := h.buy("alice", seats("lower-F-5"))
	malloryCSRF := h.shop.csrfToken("mallory")
	form := url.Values{"csrf": {malloryCSRF}, "key": {newFormKey()}}
	tests := []struct {
		name, method, path string
	}{
		{"see the checkout", "GET", "/checkout/" + hold},
		{"pay the hold", "POST", "/checkout/" + hold + "/pay"},
		{"release the hold", "POST", "/checkout/" + hold + "/release"},
		{"see the order page", "GET", "/events/" + testEvent + "/orders/" + order},
		{"cancel the order", "POST", "/events/" + testEvent + "/orders/" + order + "/cancel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r resp
			if tt.method == "GET" {
				r = h.get(tt.path, "mallory")
			} else {
				r = h.post(tt.path, "mallory", form)
			}
			wantPage(t, r, http.StatusNotFound, "Page not found")
			if strings.Contains(r.body, "lower-F") || strings.Contains(r.body, "row F") {
				t.Fatalf("the page shows alice's seats:\n%s", r.body)
			}
		})
	}
	h.wantCounts(1, 1)
	if charges, _ := h.pay.calls(); len(charges) != 1 {
		t.Fatalf("charges %+v", charges)
	}
	// The ticket page is reachable by its link, by anyone.
	wantPage(t, h.get("/tickets/"+order, "mallory"), http.StatusOK, "Lower bowl, row F, seat 5")
	// And mallory's event page does not offer alice's hold.
	if r := h.get("/events/"+testEvent, "mallory"); strings.Contains(r.body, "Held for you") {
		t.Fatal("another visitor's hold is offered")
	}
}
