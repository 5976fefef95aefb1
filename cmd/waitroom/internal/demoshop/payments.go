package demoshop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
)

// Payments takes and refunds the shop's payments. A real shop puts its
// payment provider here; the demo uses FakePayments. Implementations must
// be safe for concurrent use.
//
// The shop charges before it confirms the hold with the sidecar, and
// refunds when the confirm fails for good (the hold expired or was
// released meanwhile), or when a second charge was made for a hold that
// was already paid.
type Payments interface {
	// Charge takes c.AmountCents and returns the payment's reference. A
	// second Charge with the same Key must not charge again: it returns
	// the first reference.
	Charge(ctx context.Context, c Charge) (ref string, err error)
	// Refund gives a payment back. A second Refund with the same Key
	// must not refund again.
	Refund(ctx context.Context, r Refund) error
}

// Charge is one payment to take.
type Charge struct {
	// Key makes a retry return the first charge.
	Key         string
	AmountCents int64
	// Visitor and Hold say who pays for what.
	Visitor, Hold string
	// Description is what a statement would show.
	Description string
}

// Refund is one payment to give back.
type Refund struct {
	// Key makes a retry refund once.
	Key string
	// Ref is the reference Charge returned.
	Ref         string
	AmountCents int64
	// Reason says why, for the log and the statement.
	Reason string
}

// FakePayments is the demo's payment provider: every charge succeeds and
// no money moves; charges and refunds are logged at Info. A reference is
// derived from the charge's key, so a retried charge gets the same one.
// It is safe for concurrent use.
type FakePayments struct {
	// Logger receives the fake charges and refunds; slog.Default when nil.
	Logger *slog.Logger
}

func (p FakePayments) logger() *slog.Logger {
	if p.Logger == nil {
		return slog.Default()
	}
	return p.Logger
}

// Charge implements Payments.
func (p FakePayments) Charge(ctx context.Context, c Charge) (string, error) {
	sum := sha256.Sum256([]byte(c.Key))
	ref := "demo_pay_" + hex.EncodeToString(sum[:10])
	p.logger().Info("demoshop: fake payment taken (no money moved)", "ref", ref, "amount_cents", c.AmountCents,
		"hold", c.Hold, "visitor", c.Visitor)
	return ref, nil
}

// Refund implements Payments.
func (p FakePayments) Refund(ctx context.Context, r Refund) error {
	p.logger().Info("demoshop: fake payment refunded (no money moved)", "ref", r.Ref, "amount_cents", r.AmountCents,
		"reason", r.Reason)
	return nil
}

var _ Payments = FakePayments{}
