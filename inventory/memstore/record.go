package memstore

import (
	"encoding/json"

	"github.com/waitroom/waitroom/internal/jsonenc"
	"github.com/waitroom/waitroom/inventory"
)

// Record operations. Each journal record states an effect that was decided
// already (which seats, which ids, which expiry), so replaying it needs no
// clock and no choice: live operations and recovery share apply.
const (
	opDefine  = inventory.ActionDefine
	opHold    = inventory.ActionHold
	opConfirm = inventory.ActionConfirm
	opRelease = inventory.ActionRelease
	opExpire  = inventory.ActionExpire
	opCancel  = inventory.ActionCancel
	opExtend  = inventory.ActionExtend
	// opIdem stores the outcome of a keyed request that changed nothing
	// (a conflict, a repeated confirm); it is not an audit entry.
	opIdem = "idem"
)

// record is one journal entry.
type record struct {
	Op    string              `json:"op"`
	At    int64               `json:"at"`
	Actor string              `json:"actor,omitempty"`
	Def   *inventory.EventDef `json:"def,omitempty"`

	Hold    string   `json:"hold,omitempty"`
	Order   string   `json:"order,omitempty"`
	User    string   `json:"user,omitempty"`
	Seats   []string `json:"seats,omitempty"`
	Pool    string   `json:"pool,omitempty"`
	Qty     int      `json:"qty,omitempty"`
	Price   int64    `json:"price,omitempty"`
	Expires int64    `json:"exp,omitempty"`
	PayRef  string   `json:"pay,omitempty"`
	Reason  string   `json:"reason,omitempty"`

	// Key, FP and Res store an idempotent request's outcome.
	Key string      `json:"key,omitempty"`
	FP  string      `json:"fp,omitempty"`
	Res *idemResult `json:"res,omitempty"`
}

// idemResult is what a repeated idempotency key returns: one of a hold,
// an order, a release, or an error.
type idemResult struct {
	Hold    *inventory.Hold    `json:"hold,omitempty"`
	Order   *inventory.Order   `json:"order,omitempty"`
	Release *inventory.Release `json:"release,omitempty"`
	Err     *idemError         `json:"err,omitempty"`
}

// idemError is a stored error outcome, in wire form.
type idemError struct {
	Code      string   `json:"code"`
	Message   string   `json:"msg,omitempty"`
	Seats     []string `json:"seats,omitempty"`
	Limit     int      `json:"limit,omitempty"`
	Current   int      `json:"current,omitempty"`
	Available int      `json:"available,omitempty"`
}

func storedError(err error) *idemError {
	d := inventory.Details(err)
	return &idemError{Code: inventory.Code(d), Message: d.Message, Seats: d.Seats,
		Limit: d.Limit, Current: d.Current, Available: d.Available}
}

func (e *idemError) err() error {
	return &inventory.Error{Kind: inventory.FromCode(e.Code), Message: e.Message, Seats: e.Seats,
		Limit: e.Limit, Current: e.Current, Available: e.Available}
}

// auditEntry renders a record for the audit stream; ok is false for
// records that are not changes.
func (r *record) auditEntry() (inventory.AuditEntry, bool) {
	if r.Op == opIdem {
		return inventory.AuditEntry{}, false
	}
	return inventory.AuditEntry{
		At:       inventory.UnixMilli(r.At),
		Action:   r.Op,
		Actor:    r.Actor,
		User:     r.User,
		HoldID:   r.Hold,
		OrderID:  r.Order,
		Seats:    r.Seats,
		Pool:     r.Pool,
		Quantity: r.Qty,
	}, true
}

// appendRecord encodes r as encoding/json would (TestRecordEncoding holds
// it to that), without reflection: it runs once per change on the hot
// path. The rare nested parts (a definition, an idempotent result) go
// through encoding/json.
func appendRecord(b []byte, r *record) ([]byte, error) {
	b = append(b, '{')
	b = jsonenc.String(jsonenc.Key(b, "op"), r.Op)
	b = jsonenc.Int(jsonenc.Key(b, "at"), r.At)
	str := func(name, v string) {
		if v != "" {
			b = jsonenc.String(jsonenc.Key(b, name), v)
		}
	}
	num := func(name string, v int64) {
		if v != 0 {
			b = jsonenc.Int(jsonenc.Key(b, name), v)
		}
	}
	nested := func(name string, v any) error {
		raw, err := json.Marshal(v)
		b = append(jsonenc.Key(b, name), raw...)
		return err
	}
	str("actor", r.Actor)
	if r.Def != nil {
		if err := nested("def", r.Def); err != nil {
			return nil, err
		}
	}
	str("hold", r.Hold)
	str("order", r.Order)
	str("user", r.User)
	if len(r.Seats) > 0 {
		b = jsonenc.Strings(jsonenc.Key(b, "seats"), r.Seats)
	}
	str("pool", r.Pool)
	num("qty", int64(r.Qty))
	num("price", r.Price)
	num("exp", r.Expires)
	str("pay", r.PayRef)
	str("reason", r.Reason)
	str("key", r.Key)
	str("fp", r.FP)
	if r.Res != nil {
		if err := nested("res", r.Res); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}
