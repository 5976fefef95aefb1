package iplist

import (
	"context"

	"github.com/waitroom/waitroom/challenge"
)

// DefaultReason is a Signal's reason when none is given.
const DefaultReason = "datacenter_ip"

// Signal is a risk signal: suspicion 1 when the request's address is in
// the set, with the signal's reason ("datacenter_ip", or the list's
// configured name). It is immutable and safe for concurrent use; Check
// does not allocate.
type Signal struct {
	set    *Set
	reason string
}

// NewSignal returns a Signal over set with reason ("" for DefaultReason).
func NewSignal(set *Set, reason string) *Signal {
	if reason == "" {
		reason = DefaultReason
	}
	return &Signal{set: set, reason: reason}
}

// Check implements challenge.Signal.
func (s *Signal) Check(_ context.Context, r *challenge.Request) (challenge.Finding, error) {
	if s.set.Contains(r.IP) {
		return challenge.Finding{Suspicion: 1, Reason: s.reason}, nil
	}
	return challenge.Finding{}, nil
}

var _ challenge.Signal = (*Signal)(nil)
