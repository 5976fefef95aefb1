// Package demoshop is the small ticket shop that `waitroom demo` puts
// behind the waiting room: a home page, an event page with availability
// and a seat map, holds (picked seats, best available or general
// admission), a checkout with a fake card form, and a ticket page with a
// QR code. It keeps no state of its own worth keeping: every seat, hold
// and order lives in the seat-hold sidecar, reached through the Go client
// (inventory/client), so the code doubles as the reference for how an
// origin uses the sidecar:
//
//   - Setup defines the event once (PutEvent), keeping an existing one.
//   - A hold uses the visitor as its user, so the sidecar's per-user limit
//     applies, and an idempotency key derived from a key rendered into the
//     form, so a double submit returns the first hold.
//   - Each load of the checkout page, and the payment's submit, extends
//     the hold (Extend) a hold TTL from now, up to the event's maximum
//     hold time, so a buyer still paying keeps their seats.
//   - Payment is taken first and Confirm called after, with an
//     idempotency key; when the sidecar answers hold_expired (the hold ran
//     out while the visitor paid) the payment is refunded.
//   - Errors are told apart with errors.Is on the inventory sentinels, and
//     inventory.Details names the seats that were taken.
//
// The visitor is who the waiting room says it is: the proxy sets
// X-Waitroom-Visitor and X-Waitroom-Event from a verified pass on the
// gated paths (/events/ and /checkout/) and strips any a client sends. A
// gated page requested without them (someone reaching the shop directly)
// gets a 403 page that says to come through the waiting room. Holds and
// orders are shown and changed only for the visitor who made them; a
// ticket page is reachable by its link alone (order ids are 128 random
// bits, unguessable enough for a demo). Every form POST carries a
// per-visitor CSRF token (an HMAC of the visitor id), cross-site posts are
// refused from Sec-Fetch-Site too, every page is rendered with
// html/template, and no internal error text reaches a page: it is logged.
// A successful payment answers with X-Waitroom-Complete: 1 so the proxy
// counts the visitor as done.
//
// It is a demo, not a shop to run a sale with: payments are fake
// (FakePayments moves no money), the shop serves one event, and the
// per-visitor memory of recent holds (used to offer "continue to
// checkout") lives in this process only. It is not on the proxy's hot
// path and uses net/http.
package demoshop
