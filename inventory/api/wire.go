package api

import (
	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/internal/jsonenc"
	"github.com/waitroom/waitroom/inventory"
)

// Holds and orders are the hot responses; they are written by hand, byte
// for byte what encoding/json writes (TestWireMatchesEncodingJSON).

func appendHold(b []byte, h *inventory.Hold) []byte {
	b = append(b, '{')
	b = jsonenc.String(jsonenc.Key(b, "hold_id"), h.ID)
	b = jsonenc.String(jsonenc.Key(b, "event"), h.Event)
	b = jsonenc.String(jsonenc.Key(b, "user"), h.User)
	b = jsonenc.Strings(jsonenc.Key(b, "seats"), h.Seats)
	if h.Pool != "" {
		b = jsonenc.String(jsonenc.Key(b, "pool"), h.Pool)
	}
	b = jsonenc.Int(jsonenc.Key(b, "quantity"), int64(h.Quantity))
	b = jsonenc.Int(jsonenc.Key(b, "price_cents"), h.PriceCents)
	b = jsonenc.Time(jsonenc.Key(b, "created_at"), h.CreatedAt)
	b = jsonenc.Time(jsonenc.Key(b, "expires_at"), h.ExpiresAt)
	b = jsonenc.String(jsonenc.Key(b, "status"), string(h.Status))
	if h.OrderID != "" {
		b = jsonenc.String(jsonenc.Key(b, "order_id"), h.OrderID)
	}
	return append(b, '}')
}

func appendOrder(b []byte, o *inventory.Order) []byte {
	b = append(b, '{')
	b = jsonenc.String(jsonenc.Key(b, "order_id"), o.ID)
	b = jsonenc.String(jsonenc.Key(b, "hold_id"), o.HoldID)
	b = jsonenc.String(jsonenc.Key(b, "event"), o.Event)
	b = jsonenc.String(jsonenc.Key(b, "user"), o.User)
	b = jsonenc.Strings(jsonenc.Key(b, "seats"), o.Seats)
	if o.Pool != "" {
		b = jsonenc.String(jsonenc.Key(b, "pool"), o.Pool)
	}
	b = jsonenc.Int(jsonenc.Key(b, "quantity"), int64(o.Quantity))
	b = jsonenc.Int(jsonenc.Key(b, "price_cents"), o.PriceCents)
	if o.PaymentRef != "" {
		b = jsonenc.String(jsonenc.Key(b, "payment_ref"), o.PaymentRef)
	}
	b = jsonenc.String(jsonenc.Key(b, "status"), string(o.Status))
	b = jsonenc.Time(jsonenc.Key(b, "confirmed_at"), o.ConfirmedAt)
	if o.CancelledAt != nil {
		b = jsonenc.Time(jsonenc.Key(b, "cancelled_at"), *o.CancelledAt)
	}
	return append(b, '}')
}

// writeHold and writeOrder answer with a hold or an order, encoded in a
// stack buffer (large holds spill to the heap) and copied into the
// response's own pooled buffer.
func writeHold(ctx *fasthttp.RequestCtx, status int, h *inventory.Hold) {
	var arr [1024]byte
	ctx.SetStatusCode(status)
	setJSONHeaders(ctx)
	ctx.Response.SetBody(append(appendHold(arr[:0], h), '\n'))
}

func writeOrder(ctx *fasthttp.RequestCtx, status int, o *inventory.Order) {
	var arr [1024]byte
	ctx.SetStatusCode(status)
	setJSONHeaders(ctx)
	ctx.Response.SetBody(append(appendOrder(arr[:0], o), '\n'))
}
