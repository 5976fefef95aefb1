package inventory

import (
	"errors"
	"math"
	"testing"
)

// TestTTLOverflow: a TTL in seconds so large that converting it to a
// Duration would wrap to a negative value must be rejected, not turned
// into holds that are born expired.
func TestTTLOverflow(t *testing.T) {
	huge := []int{math.MaxInt64/1_000_000_000 + 1, math.MaxInt, 86401}
	for _, n := range huge {
		req := HoldRequest{User: "u", Seats: []string{"A-1-1"}, TTLSeconds: n}
		if err := req.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("ttl_seconds %d accepted", n)
		}
		def := EventDef{GA: []Pool{{ID: "g", Capacity: 1}}, HoldTTLSeconds: n}
		if err := def.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("hold_ttl_seconds %d accepted", n)
		}
	}
}

func TestErrorWithoutKind(t *testing.T) {
	if got := (&Error{}).Error(); got != "inventory: " {
		t.Fatalf("Error() = %q", got)
	}
}

func TestParseSeatID(t *testing.T) {
	good := map[string][3]string{"A-1-1": {"A", "1", "1"}, "Floor_2.b-AA-1000": {"Floor_2.b", "AA", "1000"}}
	for id, want := range good {
		s, r, n, ok := ParseSeatID(id)
		if !ok || s != want[0] || r != want[1] || SeatID(s, r, n) != id {
			t.Errorf("ParseSeatID(%q) = %q %q %d %v", id, s, r, n, ok)
		}
	}
	for _, id := range []string{"", "A", "A-1", "A-1-", "A-1-0", "A-1-01", "A-1-1001", "-1-1", "A--1", "A-1-1-1", "A-1-x", "A-1-+1", "A-1- 1", "ä-1-1"} {
		if _, _, _, ok := ParseSeatID(id); ok {
			t.Errorf("ParseSeatID(%q) accepted", id)
		}
	}
}

func FuzzParseSeatID(f *testing.F) {
	for _, s := range []string{"A-1-1", "A-1-01", "Floor-AA-1000", "--", "A-1-99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		s, r, n, ok := ParseSeatID(id)
		if ok && SeatID(s, r, n) != id {
			t.Fatalf("%q parsed to %q %q %d, which prints as %q", id, s, r, n, SeatID(s, r, n))
		}
	})
}
