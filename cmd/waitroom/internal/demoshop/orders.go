// The pages of a confirmed order: the ticket with its QR code, the order
// page and its cancellation.

package demoshop

import (
	"context"
	"errors"
	"html/template"
	"net/http"

	"github.com/waitroom/waitroom/inventory"
)

// ticketPage is an order with its QR code.
type ticketPage struct {
	base
	Notice    string
	OrderID   string
	Items     []lineItem
	Total     string
	Confirmed bool
	PaidAt    string
	Code      string
	QR        template.HTML
	ManageURL string
}

// ticket shows an order to whoever has its link.
func (s *Shop) ticket(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("order")
	if !inventory.ValidRecordID(id) {
		s.notFound(w, r)
		return
	}
	ctx, cancel := callCtx(r)
	defer cancel()
	o, err := s.inv.GetOrder(ctx, s.event, id)
	switch {
	case errors.Is(err, inventory.ErrOrderNotFound):
		s.notFound(w, r)
		return
	case err != nil:
		s.unavailable(w, r, "get order", err)
		return
	}
	ev, _ := s.eventDef(ctx) // for the seat prices; the page does without
	p := ticketPage{base: s.base("Your tickets"), Notice: notices[r.URL.Query().Get("notice")], OrderID: o.ID,
		Items: lineItems(ev, o.Seats, o.Pool, o.Quantity, o.PriceCents), Total: money(o.PriceCents),
		Confirmed: o.Status == inventory.OrderConfirmed, PaidAt: o.ConfirmedAt.UTC().Format("2 January 2006, 15:04 MST"),
		ManageURL: s.orderURL(o.ID)}
	if p.Confirmed {
		p.Code = s.TicketCode(o.ID)
		if p.QR, err = qrSVG(p.Code); err != nil {
			s.log.Error("demoshop: drawing the ticket's QR code", "order", o.ID, "err", err)
		}
	}
	s.render(w, r, http.StatusOK, "ticket", p)
}

// orderPage lets the buyer cancel an order.
type orderPage struct {
	base
	OrderID   string
	Items     []lineItem
	Total     string
	Confirmed bool
	TicketURL string
	CancelURL string
	CSRF      string
}

func (s *Shop) orderPage(w http.ResponseWriter, r *http.Request, visitor string) {
	o, ok := s.loadOrder(w, r, visitor)
	if !ok {
		return
	}
	p := orderPage{base: s.base("Cancel your order"), OrderID: o.ID,
		Items: lineItems(s.def.Load(), o.Seats, o.Pool, o.Quantity, o.PriceCents), Total: money(o.PriceCents),
		Confirmed: o.Status == inventory.OrderConfirmed, TicketURL: ticketURL(o.ID),
		CancelURL: s.orderURL(o.ID) + "/cancel", CSRF: s.csrfToken(visitor)}
	s.render(w, r, http.StatusOK, "order", p)
}

// cancel returns an order's seats to sale and refunds it.
func (s *Shop) cancel(w http.ResponseWriter, r *http.Request, visitor string) {
	if _, ok := s.readForm(w, r, visitor); !ok {
		return
	}
	o, ok := s.loadOrder(w, r, visitor)
	if !ok {
		return
	}
	if o.Status == inventory.OrderCancelled {
		redirect(w, r, ticketURL(o.ID))
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), payTimeout)
	defer cancel()
	if _, err := s.inv.Cancel(ctx, s.event, o.ID, inventory.CancelRequest{Reason: "cancelled by the buyer in the demo shop",
		Actor: actor}); err != nil {
		s.unavailable(w, r, "cancel", err)
		return
	}
	// Keyed by the order, so two cancels at once refund once.
	s.refund(ctx, Refund{Key: sidecarKey("refund-order", o.ID), Ref: o.PaymentRef, AmountCents: o.PriceCents,
		Reason: "order cancelled by the buyer"})
	s.log.Info("demoshop: order cancelled", "order", o.ID, "visitor", visitor)
	redirect(w, r, ticketURL(o.ID)+"?notice=cancelled")
}
