package demoshop

import (
	"slices"
	"testing"
	"time"
)

func TestMoney(t *testing.T) {
	tests := []struct {
		cents int64
		want  string
	}{
		{0, "$0.00"}, {5, "$0.05"}, {100, "$1.00"}, {8900, "$89.00"}, {123456, "$1,234.56"},
		{100000000, "$1,000,000.00"}, {-250, "-$2.50"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := money(tt.cents); got != tt.want {
				t.Fatalf("money(%d) = %q, want %q", tt.cents, got, tt.want)
			}
		})
	}
}

func TestClock(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0:00"}, {0, "0:00"}, {time.Millisecond, "0:01"}, {59 * time.Second, "0:59"},
		{3 * time.Minute, "3:00"}, {79*time.Second + 500*time.Millisecond, "1:20"}, {61 * time.Minute, "61:00"},
	}
	for _, tt := range tests {
		t.Run(tt.d.String(), func(t *testing.T) {
			if got := clock(tt.d); got != tt.want {
				t.Fatalf("clock(%s) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}

func TestSeatName(t *testing.T) {
	tests := []struct{ id, want string }{
		{"lower-A-7", "Lower bowl, row A, seat 7"},
		{"upper-T-24", "Upper tier, row T, seat 24"},
		{"balcony-1-2", "balcony, row 1, seat 2"},
		{"not a seat", "not a seat"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			if got := seatName(tt.id); got != tt.want {
				t.Fatalf("seatName(%q) = %q, want %q", tt.id, got, tt.want)
			}
		})
	}
}

func TestLineItems(t *testing.T) {
	ev := planEvent()
	tests := []struct {
		name  string
		ev    bool
		seats []string
		pool  string
		qty   int
		want  []lineItem
	}{
		{"seats in two sections", true, []string{"lower-A-1", "upper-K-2"}, "", 2,
			[]lineItem{{"Lower bowl, row A, seat 1", "$89.00"}, {"Upper tier, row K, seat 2", "$49.00"}}},
		{"seats without the definition", false, []string{"lower-A-1"}, "", 1,
			[]lineItem{{"Lower bowl, row A, seat 1", ""}}},
		{"standing", true, nil, "floor", 3, []lineItem{{"3 × Floor (standing)", "$195.00"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := ev
			if !tt.ev {
				e = nil
			}
			if got := lineItems(e, tt.seats, tt.pool, tt.qty, 19500); !slices.Equal(got, tt.want) {
				t.Fatalf("lineItems = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestPlanIsValid(t *testing.T) {
	def := Plan()
	if err := def.Validate(); err != nil {
		t.Fatal(err)
	}
	seats, ga := def.Totals()
	if seats != 440 || ga != 100 || len(def.Sections) != 2 || len(def.GA) != 1 {
		t.Fatalf("plan: %d seats, %d GA", seats, ga)
	}
	for _, id := range []string{"lower", "upper", "floor"} {
		if areaName(id) == id {
			t.Fatalf("area %q has no name", id)
		}
	}
}
