package api

import (
	"fmt"
	"time"

	"github.com/waitroom/waitroom/internal/jsonstrict"
	"github.com/waitroom/waitroom/inventory"
)

// Wire forms of the request bodies. Each lists exactly the fields a
// client may send.

// holdBody is POST /v1/events/{event}/holds. It is not inventory.HoldRequest
// because the wire carries ttl_ms (an extension for sub-second holds) and
// must tell an absent TTL from a zero one.
type holdBody struct {
	User       string
	Seats      []string
	Best       *inventory.BestRequest
	GA         *inventory.GARequest
	TTLSeconds *int64
	TTLMillis  *int64
}

// decodeHold reads a hold body.
func decodeHold(body []byte, b *holdBody) error {
	return decodeBody(body, func(r *jsonstrict.Reader, key []byte) (err error) {
		if r.Null() {
			return nil
		}
		switch string(key) {
		case "user":
			b.User, err = r.String("user")
		case "seats":
			b.Seats, err = r.Strings("seats")
		case "best":
			b.Best = &inventory.BestRequest{}
			err = r.Object("best", func(r *jsonstrict.Reader, k []byte) (err error) {
				if r.Null() {
					return nil
				}
				switch string(k) {
				case "section":
					b.Best.Section, err = r.String("best.section")
				case "tier":
					b.Best.Tier, err = r.String("best.tier")
				case "quantity":
					var n int64
					n, err = r.Int("best.quantity", -maxQuantity, maxQuantity)
					b.Best.Quantity = int(n)
				default:
					err = unknownField("best", k)
				}
				return err
			})
		case "ga":
			b.GA = &inventory.GARequest{}
			err = r.Object("ga", func(r *jsonstrict.Reader, k []byte) (err error) {
				if r.Null() {
					return nil
				}
				switch string(k) {
				case "pool":
					b.GA.Pool, err = r.String("ga.pool")
				case "quantity":
					var n int64
					n, err = r.Int("ga.quantity", -maxQuantity, maxQuantity)
					b.GA.Quantity = int(n)
				default:
					err = unknownField("ga", k)
				}
				return err
			})
		case "ttl_seconds":
			var n int64
			n, err = r.Int("ttl_seconds", -maxCount, maxCount)
			b.TTLSeconds = &n
		case "ttl_ms":
			var n int64
			n, err = r.Int("ttl_ms", -maxCount, maxCount)
			b.TTLMillis = &n
		default:
			err = unknownField("", key)
		}
		return err
	})
}

// Bounds of the TTL fields, checked here (not only by the store) so that
// no value can overflow a time.Duration on its way in.
const (
	maxTTLSeconds = int64(inventory.MaxHoldTTL / time.Second)
	maxTTLMillis  = int64(inventory.MaxHoldTTL / time.Millisecond)
)

// request turns the wire form into the store's request.
func (b *holdBody) request() (inventory.HoldRequest, error) {
	req := inventory.HoldRequest{User: b.User, Seats: b.Seats, Best: b.Best, GA: b.GA}
	if b.TTLSeconds != nil {
		if *b.TTLSeconds < 1 || *b.TTLSeconds > maxTTLSeconds {
			return req, badRequestf("ttl_seconds: must be between 1 and %d", maxTTLSeconds)
		}
		req.TTLSeconds = int(*b.TTLSeconds)
	}
	if b.TTLMillis != nil {
		if *b.TTLMillis < 1 || *b.TTLMillis > maxTTLMillis {
			return req, badRequestf("ttl_ms: must be between 1 and %d", maxTTLMillis)
		}
		req.TTL = time.Duration(*b.TTLMillis) * time.Millisecond
	}
	return req, nil
}

// eventBody is PUT /v1/events/{event}: the definition itself.
type eventBody = inventory.EventDef

// decodeEvent reads an event definition.
func decodeEvent(body []byte, d *eventBody) error {
	intField := func(r *jsonstrict.Reader, path string, hi int64, dst *int) error {
		n, err := r.Int(path, -hi, hi)
		*dst = int(n)
		return err
	}
	return decodeBody(body, func(r *jsonstrict.Reader, key []byte) (err error) {
		if r.Null() {
			return nil
		}
		switch string(key) {
		case "sections":
			d.Sections = []inventory.Section{}
			return r.Array("sections", func(r *jsonstrict.Reader, i int) error {
				path := fmt.Sprintf("sections[%d]", i)
				var s inventory.Section
				err := r.Object(path, func(r *jsonstrict.Reader, k []byte) (err error) {
					if r.Null() {
						return nil
					}
					switch string(k) {
					case "id":
						s.ID, err = r.String(path + ".id")
					case "tier":
						s.Tier, err = r.String(path + ".tier")
					case "price_cents":
						s.PriceCents, err = r.Int(path+".price_cents", -maxPrice, maxPrice)
					case "rows":
						s.Rows = []inventory.Row{}
						err = r.Array(path+".rows", func(r *jsonstrict.Reader, j int) error {
							rp := fmt.Sprintf("%s.rows[%d]", path, j)
							var row inventory.Row
							err := r.Object(rp, func(r *jsonstrict.Reader, k []byte) (err error) {
								if r.Null() {
									return nil
								}
								switch string(k) {
								case "id":
									row.ID, err = r.String(rp + ".id")
								case "seats":
									err = intField(r, rp+".seats", maxCount, &row.Seats)
								default:
									err = unknownField(rp, k)
								}
								return err
							})
							s.Rows = append(s.Rows, row)
							return err
						})
					default:
						err = unknownField(path, k)
					}
					return err
				})
				d.Sections = append(d.Sections, s)
				return err
			})
		case "ga":
			d.GA = []inventory.Pool{}
			return r.Array("ga", func(r *jsonstrict.Reader, i int) error {
				path := fmt.Sprintf("ga[%d]", i)
				var p inventory.Pool
				err := r.Object(path, func(r *jsonstrict.Reader, k []byte) (err error) {
					if r.Null() {
						return nil
					}
					switch string(k) {
					case "id":
						p.ID, err = r.String(path + ".id")
					case "capacity":
						err = intField(r, path+".capacity", maxCount, &p.Capacity)
					case "price_cents":
						p.PriceCents, err = r.Int(path+".price_cents", -maxPrice, maxPrice)
					default:
						err = unknownField(path, k)
					}
					return err
				})
				d.GA = append(d.GA, p)
				return err
			})
		case "limits":
			return r.Object("limits", func(r *jsonstrict.Reader, k []byte) error {
				if r.Null() {
					return nil
				}
				if string(k) != "per_user" {
					return unknownField("limits", k)
				}
				return intField(r, "limits.per_user", maxCount, &d.Limits.PerUser)
			})
		case "hold_ttl_seconds":
			return intField(r, "hold_ttl_seconds", maxCount, &d.HoldTTLSeconds)
		case "max_hold_seconds":
			return intField(r, "max_hold_seconds", maxCount, &d.MaxHoldSeconds)
		}
		return unknownField("", key)
	})
}

// checkEventBody bounds what the store's validation could get wrong by
// overflow.
func checkEventBody(d *eventBody) error {
	if d.HoldTTLSeconds < 0 || int64(d.HoldTTLSeconds) > maxTTLSeconds {
		return badRequestf("hold_ttl_seconds: must be between 0 (default %d) and %d", int(inventory.DefaultHoldTTL/time.Second), maxTTLSeconds)
	}
	if d.MaxHoldSeconds < 0 || int64(d.MaxHoldSeconds) > maxTTLSeconds {
		return badRequestf("max_hold_seconds: must be between 0 (default %d × the hold TTL) and %d", inventory.DefaultMaxHoldFactor, maxTTLSeconds)
	}
	return nil
}

// decodeExtend reads an extend body: empty, or an object with an optional
// ttl_seconds or ttl_ms (not both), each from 1 up to the longest hold.
func decodeExtend(body []byte) (inventory.ExtendRequest, error) {
	var req inventory.ExtendRequest
	if len(body) == 0 {
		return req, nil
	}
	var secs, ms *int64
	err := decodeBody(body, func(r *jsonstrict.Reader, key []byte) (err error) {
		if r.Null() {
			return nil
		}
		var n int64
		switch string(key) {
		case "ttl_seconds":
			n, err = r.Int("ttl_seconds", -maxCount, maxCount)
			secs = &n
		case "ttl_ms":
			n, err = r.Int("ttl_ms", -maxCount, maxCount)
			ms = &n
		default:
			err = unknownField("", key)
		}
		return err
	})
	switch {
	case err != nil:
		return req, err
	case secs != nil && ms != nil:
		return req, badRequestf("give ttl_seconds or ttl_ms, not both")
	case secs != nil && (*secs < 1 || *secs > maxTTLSeconds):
		return req, badRequestf("ttl_seconds: must be between 1 and %d", maxTTLSeconds)
	case ms != nil && (*ms < 1 || *ms > maxTTLMillis):
		return req, badRequestf("ttl_ms: must be between 1 and %d", maxTTLMillis)
	case secs != nil:
		req.TTLSeconds = int(*secs)
	case ms != nil:
		req.TTL = time.Duration(*ms) * time.Millisecond
	}
	return req, nil
}

// decodeText reads a body of one optional string field (confirm's
// payment_ref, cancel's reason); the body may be empty.
func decodeText(body []byte, field string, dst *string) error {
	if len(body) == 0 {
		return nil
	}
	return decodeBody(body, func(r *jsonstrict.Reader, key []byte) (err error) {
		if string(key) != field {
			return unknownField("", key)
		}
		if r.Null() {
			return nil
		}
		*dst, err = r.String(field)
		return err
	})
}
