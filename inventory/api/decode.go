package api

import (
	"fmt"
	"time"

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
	return decodeBody(body, func(r *reader, key string) (err error) {
		if r.null() {
			return nil
		}
		switch key {
		case "user":
			b.User, err = r.str(key)
		case "seats":
			b.Seats, err = r.strings(key)
		case "best":
			b.Best = &inventory.BestRequest{}
			err = r.object(key, func(r *reader, k string) (err error) {
				if r.null() {
					return nil
				}
				switch k {
				case "section":
					b.Best.Section, err = r.str("best.section")
				case "tier":
					b.Best.Tier, err = r.str("best.tier")
				case "quantity":
					var n int64
					n, err = r.integer("best.quantity", -maxQuantity, maxQuantity)
					b.Best.Quantity = int(n)
				default:
					err = unknownField(key, k)
				}
				return err
			})
		case "ga":
			b.GA = &inventory.GARequest{}
			err = r.object(key, func(r *reader, k string) (err error) {
				if r.null() {
					return nil
				}
				switch k {
				case "pool":
					b.GA.Pool, err = r.str("ga.pool")
				case "quantity":
					var n int64
					n, err = r.integer("ga.quantity", -maxQuantity, maxQuantity)
					b.GA.Quantity = int(n)
				default:
					err = unknownField(key, k)
				}
				return err
			})
		case "ttl_seconds":
			var n int64
			n, err = r.integer(key, -maxCount, maxCount)
			b.TTLSeconds = &n
		case "ttl_ms":
			var n int64
			n, err = r.integer(key, -maxCount, maxCount)
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
	intField := func(r *reader, path string, hi int64, dst *int) error {
		n, err := r.integer(path, -hi, hi)
		*dst = int(n)
		return err
	}
	return decodeBody(body, func(r *reader, key string) (err error) {
		if r.null() {
			return nil
		}
		switch key {
		case "sections":
			d.Sections = []inventory.Section{}
			return r.array(key, func(r *reader, i int) error {
				path := fmt.Sprintf("sections[%d]", i)
				var s inventory.Section
				err := r.object(path, func(r *reader, k string) (err error) {
					if r.null() {
						return nil
					}
					switch k {
					case "id":
						s.ID, err = r.str(path + ".id")
					case "tier":
						s.Tier, err = r.str(path + ".tier")
					case "price_cents":
						s.PriceCents, err = r.integer(path+".price_cents", -maxPrice, maxPrice)
					case "rows":
						s.Rows = []inventory.Row{}
						err = r.array(path+".rows", func(r *reader, j int) error {
							rp := fmt.Sprintf("%s.rows[%d]", path, j)
							var row inventory.Row
							err := r.object(rp, func(r *reader, k string) (err error) {
								if r.null() {
									return nil
								}
								switch k {
								case "id":
									row.ID, err = r.str(rp + ".id")
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
			return r.array(key, func(r *reader, i int) error {
				path := fmt.Sprintf("ga[%d]", i)
				var p inventory.Pool
				err := r.object(path, func(r *reader, k string) (err error) {
					if r.null() {
						return nil
					}
					switch k {
					case "id":
						p.ID, err = r.str(path + ".id")
					case "capacity":
						err = intField(r, path+".capacity", maxCount, &p.Capacity)
					case "price_cents":
						p.PriceCents, err = r.integer(path+".price_cents", -maxPrice, maxPrice)
					default:
						err = unknownField(path, k)
					}
					return err
				})
				d.GA = append(d.GA, p)
				return err
			})
		case "limits":
			return r.object(key, func(r *reader, k string) error {
				if r.null() {
					return nil
				}
				if k != "per_user" {
					return unknownField(key, k)
				}
				return intField(r, "limits.per_user", maxCount, &d.Limits.PerUser)
			})
		case "hold_ttl_seconds":
			return intField(r, key, maxCount, &d.HoldTTLSeconds)
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
	return nil
}

// decodeText reads a body of one optional string field (confirm's
// payment_ref, cancel's reason); the body may be empty.
func decodeText(body []byte, field string, dst *string) error {
	if len(body) == 0 {
		return nil
	}
	return decodeBody(body, func(r *reader, key string) (err error) {
		if key != field {
			return unknownField("", key)
		}
		if r.null() {
			return nil
		}
		*dst, err = r.str(key)
		return err
	})
}
