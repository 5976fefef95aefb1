// The hold and checkout flow: placing a hold, the checkout page, paying
// (payment first, Confirm after, refund when the hold ran out) and
// releasing a hold.

package demoshop

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/waitroom/waitroom/inventory"
)

// hold asks the sidecar to hold what the form chose, as the visitor, and
// goes on to the checkout; a refusal is explained on the event page.
func (s *Shop) hold(w http.ResponseWriter, r *http.Request, visitor string) {
	f, ok := s.readForm(w, r, visitor)
	if !ok {
		return
	}
	ctx, cancel := callCtx(r)
	defer cancel()
	ev, err := s.eventDef(ctx)
	if err != nil {
		s.unavailable(w, r, "event", err)
		return
	}
	hf, err := parseHoldForm(f, ev)
	if err != nil {
		public := "Please choose again."
		if fe, ok := errors.AsType[*formError](err); ok {
			public = fe.public
		}
		s.renderEvent(w, r, http.StatusUnprocessableEntity, visitor, hf.area(), "",
			&problem{Title: "Please check your choice", Text: public}, nil)
		return
	}
	h, err := s.inv.Hold(ctx, s.event, hf.request(visitor, s.holdTTL))
	if err != nil {
		prob, status := holdProblem(err, &hf)
		if prob == nil {
			s.unavailable(w, r, "hold", err)
			return
		}
		s.log.Info("demoshop: hold refused", "visitor", visitor, "code", inventory.Code(err))
		// Tick the chosen seats that are still free again.
		keep := map[string]bool{}
		for _, id := range hf.seats {
			keep[id] = true
		}
		for _, id := range inventory.Details(err).Seats {
			delete(keep, id)
		}
		s.renderEvent(w, r, status, visitor, hf.area(), "", prob, keep)
		return
	}
	s.remember(visitor, h.ID)
	s.log.Info("demoshop: seats held", "hold", h.ID, "visitor", visitor, "quantity", h.Quantity,
		"expires", h.ExpiresAt, "replayed", h.Replayed)
	redirect(w, r, checkoutURL(h.ID))
}

// holdProblem explains a hold the sidecar refused, naming the seats, with
// the status to answer; nil when the error is not the visitor's to fix.
func holdProblem(err error, hf *holdForm) (*problem, int) {
	d := inventory.Details(err)
	area := areaName(hf.section + hf.pool)
	switch {
	case errors.Is(err, inventory.ErrSeatUnavailable):
		return &problem{Title: "Sorry, " + plural(len(d.Seats), "that seat was", "those seats were") + " just taken",
			Text: "Someone else got there first, so nothing was held. The map below is up to date: pick other seats, " +
				"or let us find the best available ones.",
			Seats: seatNames(d.Seats)}, http.StatusConflict
	case errors.Is(err, inventory.ErrSeatNotFound):
		return &problem{Title: "No such seat", Text: "These seats are not part of the venue, so nothing was held:",
			Seats: seatNames(d.Seats)}, http.StatusUnprocessableEntity
	case errors.Is(err, inventory.ErrUserLimit):
		text := fmt.Sprintf("Each visitor may have at most %d tickets for this event, held or bought, and you have %d. ",
			d.Limit, d.Current)
		if left := d.Limit - d.Current; left > 0 {
			text += fmt.Sprintf("You can add %d more.", left)
		} else {
			text += "You cannot add more."
		}
		return &problem{Title: "Ticket limit reached", Text: text}, http.StatusConflict
	case errors.Is(err, inventory.ErrNotEnoughSeats):
		if hf.mode == modeGA {
			return &problem{Title: "Not enough tickets left",
				Text: fmt.Sprintf("Only %d %s left for %s.", d.Available, plural(d.Available, "ticket is", "tickets are"), area)}, http.StatusConflict
		}
		return &problem{Title: "Not enough seats together",
			Text: fmt.Sprintf("We could not find %d seats next to each other in %s (%d %s left there). Try fewer seats, or pick them on the map.",
				hf.quantity, area, d.Available, plural(d.Available, "seat is", "seats are"))}, http.StatusConflict
	case errors.Is(err, inventory.ErrSoldOut):
		return &problem{Title: "Sold out", Text: fmt.Sprintf("%s is sold out. Try another part of the venue.", area)}, http.StatusConflict
	case errors.Is(err, inventory.ErrSectionNotFound), errors.Is(err, inventory.ErrPoolNotFound),
		errors.Is(err, inventory.ErrTierNotFound), errors.Is(err, inventory.ErrInvalid):
		return &problem{Title: "Please check your choice", Text: "We could not make sense of that request. Please choose again."},
			http.StatusUnprocessableEntity
	case errors.Is(err, inventory.ErrIdempotencyMismatch):
		return &problem{Title: "Please choose again", Text: "That form was already used for another choice."}, http.StatusConflict
	}
	return nil, 0
}

// loadHold reads the hold of the path for its owner. On failure it has
// answered: someone else's hold is "not found", like a missing one, so
// that hold ids cannot be probed.
func (s *Shop) loadHold(w http.ResponseWriter, r *http.Request, visitor string) (inventory.Hold, bool) {
	return loadOwned(s, w, r, visitor, "hold", s.inv.GetHold, inventory.ErrHoldNotFound,
		func(h inventory.Hold) string { return h.User })
}

// loadOrder reads the order of the path for its owner, like loadHold.
func (s *Shop) loadOrder(w http.ResponseWriter, r *http.Request, visitor string) (inventory.Order, bool) {
	return loadOwned(s, w, r, visitor, "order", s.inv.GetOrder, inventory.ErrOrderNotFound,
		func(o inventory.Order) string { return o.User })
}

// loadOwned reads the record named by the path value kind with get and
// returns it when visitor owns it. Otherwise it has answered: an invalid
// or unknown id, or someone else's record, is "not found" alike.
func loadOwned[T any](s *Shop, w http.ResponseWriter, r *http.Request, visitor, kind string,
	get func(ctx context.Context, event, id string) (T, error), notFound error, owner func(T) string) (T, bool) {
	var zero T
	id := r.PathValue(kind)
	if !inventory.ValidRecordID(id) {
		s.notFound(w, r)
		return zero, false
	}
	ctx, cancel := callCtx(r)
	defer cancel()
	rec, err := get(ctx, s.event, id)
	switch {
	case errors.Is(err, notFound):
		s.notFound(w, r)
		return zero, false
	case err != nil:
		s.unavailable(w, r, "get "+kind, err)
		return zero, false
	case owner(rec) != visitor:
		s.log.Info("demoshop: a visitor asked for someone else's "+kind, kind, id, "visitor", visitor)
		s.notFound(w, r)
		return zero, false
	}
	return rec, true
}

// checkoutPage is the held seats, the countdown and the card form.
type checkoutPage struct {
	base
	Problem     *problem
	Items       []lineItem
	Total       string
	Seconds     int
	Left        string
	Expires     string // RFC 3339
	ExpiresText string
	CSRF        string
	FormKey     string
	PayURL      string
	ReleaseURL  string
}

func (s *Shop) checkout(w http.ResponseWriter, r *http.Request, visitor string) {
	h, ok := s.loadHold(w, r, visitor)
	if !ok {
		return
	}
	if h.Status == inventory.HoldHeld {
		h = s.keepHeld(r, h)
	}
	switch h.Status {
	case inventory.HoldConfirmed:
		redirect(w, r, ticketURL(h.OrderID))
	case inventory.HoldHeld:
		s.renderCheckout(w, r, http.StatusOK, visitor, h, newFormKey(), nil)
	default:
		s.holdOver(w, r, h)
	}
}

// keepHeld extends a live hold while its buyer is on the checkout page:
// each load (and the payment's submit) slides it a hold TTL from now, up
// to the event's maximum hold time. It returns the hold as it is now: extended, or read again when it
// ended meanwhile (paid in another tab, released, expired). When the
// sidecar cannot extend it, the page shows the expiry it has.
func (s *Shop) keepHeld(r *http.Request, h inventory.Hold) inventory.Hold {
	ctx, cancel := callCtx(r)
	defer cancel()
	x, err := s.inv.Extend(ctx, s.event, h.ID, inventory.ExtendRequest{TTL: s.holdTTL, Actor: actor})
	switch {
	case err == nil:
		return x
	case errors.Is(err, inventory.ErrHoldExpired), errors.Is(err, inventory.ErrHoldReleased),
		errors.Is(err, inventory.ErrHoldConfirmed):
		if now, gerr := s.inv.GetHold(ctx, s.event, h.ID); gerr == nil {
			return now
		}
		if errors.Is(err, inventory.ErrHoldConfirmed) {
			return h // the page's pay button finds the order
		}
		h.Status = inventory.HoldExpired
		return h
	}
	s.log.Warn("demoshop: extending a hold failed", "hold", h.ID, "code", inventory.Code(err))
	return h
}

// renderCheckout renders the checkout of h with the form key key (a new
// one, or the one of a payment to retry).
func (s *Shop) renderCheckout(w http.ResponseWriter, r *http.Request, status int, visitor string, h inventory.Hold,
	key string, prob *problem) {
	ev := s.def.Load() // for the seat prices; the page does without
	left := max(h.ExpiresAt.Sub(s.now()), 0)
	p := checkoutPage{base: s.base("Checkout"), Problem: prob,
		Items: lineItems(ev, h.Seats, h.Pool, h.Quantity, h.PriceCents), Total: money(h.PriceCents),
		Seconds: int((left + time.Second - 1) / time.Second), Left: clock(left),
		Expires: h.ExpiresAt.Format(time.RFC3339), ExpiresText: h.ExpiresAt.UTC().Format("15:04:05 MST"),
		CSRF: s.csrfToken(visitor), FormKey: key,
		PayURL: checkoutURL(h.ID) + "/pay", ReleaseURL: checkoutURL(h.ID) + "/release"}
	p.Countdown = true
	s.render(w, r, status, "checkout", p)
}

// holdOver explains a hold that is no longer held, before any payment.
func (s *Shop) holdOver(w http.ResponseWriter, r *http.Request, h inventory.Hold) {
	p := messagePage{
		Heading: "Your hold has expired",
		Text: []string{
			fmt.Sprintf("The seats were held for you until %s and went back on sale after that. Nothing was charged.",
				h.ExpiresAt.UTC().Format("15:04:05 MST")),
		},
		Links: []link{{Href: s.eventURL(), Text: "Choose tickets again", Primary: true}},
	}
	if h.Status == inventory.HoldReleased {
		p.Heading = "These seats were released"
		p.Text = []string{"They are back on sale. Nothing was charged."}
	}
	s.message(w, r, http.StatusGone, p)
}

// payHold takes the (fake) payment and confirms the hold. The payment
// comes first, as with a real provider; if the hold ran out meanwhile
// the sidecar answers hold_expired and the payment is refunded.
func (s *Shop) payHold(w http.ResponseWriter, r *http.Request, visitor string) {
	f, ok := s.readForm(w, r, visitor)
	if !ok {
		return
	}
	h, ok := s.loadHold(w, r, visitor)
	if !ok {
		return
	}
	key, ok := single(f, "key")
	if !ok || !validFormKey(key) {
		s.message(w, r, http.StatusBadRequest, messagePage{
			Heading: "That form could not be read",
			Text:    []string{"Nothing was charged. Please go back to the checkout and try again."},
			Links:   []link{{Href: checkoutURL(h.ID), Text: "Back to the checkout", Primary: true}},
		})
		return
	}
	// The card fields are for show: they are never read, stored or logged.
	if h.Status == inventory.HoldHeld {
		h = s.keepHeld(r, h) // paying takes a while: the seats stay held a TTL more
	}
	switch h.Status {
	case inventory.HoldConfirmed: // paid already: a double submit that came second
		w.Header().Set(HeaderComplete, "1")
		redirect(w, r, ticketURL(h.OrderID))
		return
	case inventory.HoldReleased, inventory.HoldExpired:
		s.holdOver(w, r, h)
		return
	}

	// From here on, finish what was started even if the browser leaves:
	// a payment taken must end in an order or a refund.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), payTimeout)
	defer cancel()
	payKey := sidecarKey("pay", visitor, h.ID, key)
	ref, err := s.pay.Charge(ctx, Charge{Key: payKey, AmountCents: h.PriceCents, Visitor: visitor, Hold: h.ID,
		Description: s.name + " tickets"})
	if err != nil {
		s.log.Warn("demoshop: the payment failed", "hold", h.ID, "err", err)
		s.renderCheckout(w, r, http.StatusPaymentRequired, visitor, h, key,
			&problem{Title: "The payment did not go through", Text: "Nothing was charged. Please try again."})
		return
	}
	o, err := s.inv.Confirm(ctx, s.event, h.ID, inventory.ConfirmRequest{PaymentRef: ref, IdempotencyKey: payKey, Actor: actor})
	switch {
	case err == nil:
		if o.PaymentRef != ref {
			// The hold was paid for already, from another tab: that
			// order stands and this payment goes back.
			s.refund(ctx, Refund{Key: sidecarKey("refund", ref), Ref: ref, AmountCents: h.PriceCents,
				Reason: "the hold was already paid for"})
		}
		s.log.Info("demoshop: order confirmed", "order", o.ID, "hold", h.ID, "visitor", visitor, "replayed", o.Replayed)
		w.Header().Set(HeaderComplete, "1")
		redirect(w, r, ticketURL(o.ID))
	case errors.Is(err, inventory.ErrHoldExpired), errors.Is(err, inventory.ErrHoldReleased),
		errors.Is(err, inventory.ErrOrderCancelled), errors.Is(err, inventory.ErrHoldNotFound):
		refunded := s.refund(ctx, Refund{Key: sidecarKey("refund", ref), Ref: ref, AmountCents: h.PriceCents,
			Reason: inventory.Code(err)})
		s.paidTooLate(w, r, err, h, refunded)
	case errors.Is(err, inventory.ErrIdempotencyMismatch):
		// The same form was paid twice at once and the provider gave the
		// two charges different references: the other submit's confirm
		// won. This payment goes back; the hold's state says what next.
		s.refund(ctx, Refund{Key: sidecarKey("refund", ref), Ref: ref, AmountCents: h.PriceCents,
			Reason: "the hold was already paid for"})
		now, err := s.inv.GetHold(ctx, s.event, h.ID)
		if err == nil && now.Status == inventory.HoldConfirmed {
			w.Header().Set(HeaderComplete, "1")
			redirect(w, r, ticketURL(now.OrderID))
			return
		}
		s.log.Error("demoshop: a payment's idempotency key was reused for another payment", "hold", h.ID, "ref", ref)
		s.renderCheckout(w, r, http.StatusConflict, visitor, h, newFormKey(), &problem{
			Title: "We could not confirm your tickets", Text: "The payment was given back. Please pay again."})
	default:
		// The outcome is unknown: the sidecar may have confirmed. The
		// same form key retries with the same idempotency keys, so a
		// second press neither charges twice nor sells twice.
		s.log.Error("demoshop: confirming a paid hold failed", "hold", h.ID, "ref", ref, "err", err)
		s.renderCheckout(w, r, http.StatusServiceUnavailable, visitor, h, key, &problem{
			Title: "We could not confirm your tickets yet",
			Text:  "The ticket system did not answer. Press “Pay” again: you will not be charged twice."})
	}
}

// refund gives a payment back and reports whether it went through; a
// failure is logged for someone to refund by hand.
func (s *Shop) refund(ctx context.Context, rf Refund) bool {
	if err := s.pay.Refund(ctx, rf); err != nil {
		s.log.Error("demoshop: a refund failed; refund it by hand", "ref", rf.Ref, "amount_cents", rf.AmountCents, "err", err)
		return false
	}
	return true
}

// paidTooLate explains a payment that came after the hold ended.
func (s *Shop) paidTooLate(w http.ResponseWriter, r *http.Request, err error, h inventory.Hold, refunded bool) {
	back := "The payment of " + money(h.PriceCents) + " was refunded."
	if !refunded {
		back = "The payment of " + money(h.PriceCents) + " will be refunded; the payment provider did not answer just now."
	}
	p := messagePage{
		Heading: "Your hold expired while you paid",
		Text: []string{
			fmt.Sprintf("The seats were held for you until %s, and the payment came in after that. %s",
				h.ExpiresAt.UTC().Format("15:04:05 MST"), back),
			"The seats went back on sale. You can choose tickets again.",
		},
		Links: []link{{Href: s.eventURL(), Text: "Back to the seat map", Primary: true}},
	}
	switch {
	case errors.Is(err, inventory.ErrHoldReleased):
		p.Heading = "Your seats were released while you paid"
		p.Text[0] = "The hold was released (from another tab, perhaps) before the payment came in. " + back
	case errors.Is(err, inventory.ErrOrderCancelled):
		p.Heading = "This order was cancelled"
		p.Text[0] = "The order for this hold was cancelled before the payment came in. " + back
	case errors.Is(err, inventory.ErrHoldNotFound):
		p.Heading = "Your hold is gone"
		p.Text[0] = "The ticket system no longer knows this hold. " + back
	}
	s.message(w, r, http.StatusConflict, p)
}

// release gives the held seats back.
func (s *Shop) release(w http.ResponseWriter, r *http.Request, visitor string) {
	if _, ok := s.readForm(w, r, visitor); !ok {
		return
	}
	h, ok := s.loadHold(w, r, visitor)
	if !ok {
		return
	}
	ctx, cancel := callCtx(r)
	defer cancel()
	_, err := s.inv.Release(ctx, s.event, h.ID, inventory.ReleaseRequest{Actor: actor})
	switch {
	case errors.Is(err, inventory.ErrHoldConfirmed):
		// Paid meanwhile: the checkout shows the ticket.
		redirect(w, r, checkoutURL(h.ID))
		return
	case err != nil:
		s.unavailable(w, r, "release", err)
		return
	}
	s.log.Info("demoshop: hold released", "hold", h.ID, "visitor", visitor)
	redirect(w, r, s.eventURL()+"?notice=released")
}
