package config

import (
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestParseInstant(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 5, 4, 12, 0, 0, 0, time.FixedZone("CEST", 2*3600))
	tests := []struct {
		in       string
		relative bool
		resolved time.Time // at start
		text     string
		err      string
	}{
		{in: "", text: ""},
		{in: "now", relative: true, resolved: start.UTC(), text: "now"},
		{in: "now+30s", relative: true, resolved: start.Add(30 * time.Second).UTC(), text: "now+30s"},
		{in: "now+1h30m", relative: true, resolved: start.Add(90 * time.Minute).UTC(), text: "now+1h30m"},
		{in: "now+0s", relative: true, resolved: start.UTC(), text: "now"},
		{in: "2027-03-01T09:00:00Z", resolved: time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC), text: "2027-03-01T09:00:00Z"},
		{in: "2027-03-01T10:00:00+01:00", resolved: time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC), text: "2027-03-01T09:00:00Z"},
		{in: "2027-03-01T09:00:00.5Z", resolved: time.Date(2027, 3, 1, 9, 0, 0, 5e8, time.UTC), text: "2027-03-01T09:00:00.5Z"},
		{in: "now-5m", err: `invalid time "now-5m": want an RFC 3339 time such as 2027-03-01T09:00:00Z, or now, or now+30s`},
		{in: "now+-5m", err: `invalid time "now+-5m": after now+ want a duration with a unit, such as now+30s or now+1h30m`},
		{in: "now++5m", err: `invalid time "now++5m": after now+ want a duration with a unit, such as now+30s or now+1h30m`},
		{in: "now+", err: `invalid time "now+": after now+ want a duration with a unit, such as now+30s or now+1h30m`},
		{in: "now+30", err: `invalid time "now+30": after now+ want a duration with a unit, such as now+30s or now+1h30m`},
		{in: "Now", err: `invalid time "Now": want an RFC 3339 time such as 2027-03-01T09:00:00Z, or now, or now+30s`},
		{in: "2027-03-01", err: `invalid time "2027-03-01": want an RFC 3339 time such as 2027-03-01T09:00:00Z, or now, or now+30s`},
		{in: "2027-03-01T09:00:00", err: `invalid time "2027-03-01T09:00:00": want an RFC 3339 time such as 2027-03-01T09:00:00Z, or now, or now+30s`},
		{in: "0001-01-01T00:00:00Z", err: `invalid time "0001-01-01T00:00:00Z": year 1 is not a date to sell tickets on`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			i, err := ParseInstant(tt.in)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("got %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			eq(t, i.IsRelative(), tt.relative)
			eq(t, i.IsZero(), tt.in == "")
			eq(t, i.Resolve(start), tt.resolved)
			eq(t, i.String(), tt.text)
			abs, ok := i.Time()
			eq(t, ok, !tt.relative && tt.in != "")
			if ok {
				eq(t, abs, tt.resolved)
			}
			_, rel := i.Offset()
			eq(t, rel, tt.relative)

			// YAML round trip, through the node types yaml.v3 gives
			// timestamps and strings.
			out, err := yaml.Marshal(i)
			if err != nil {
				t.Fatal(err)
			}
			var back Instant
			if err := yaml.Unmarshal(out, &back); err != nil || back != i {
				t.Errorf("round trip through %q: got %v, %v", out, back, err)
			}
		})
	}
}

func TestInstantYAMLErrors(t *testing.T) {
	t.Parallel()
	var i Instant
	err := yaml.Unmarshal([]byte("[now]"), &i)
	te, ok := err.(*yaml.TypeError)
	if !ok || te.Errors[0] != `line 1: want a time such as 2027-03-01T09:00:00Z, now, or now+30s` {
		t.Errorf("got %v", err)
	}
	err = yaml.Unmarshal([]byte("2027-13-01T00:00:00Z"), &i)
	te, ok = err.(*yaml.TypeError)
	if !ok || te.Errors[0] != `line 1: invalid time "2027-13-01T00:00:00Z": want an RFC 3339 time such as 2027-03-01T09:00:00Z, or now, or now+30s` {
		t.Errorf("got %v", err)
	}
}

func TestInstantCompare(t *testing.T) {
	t.Parallel()
	a, b := At(onSale), At(onSale.Add(time.Second))
	r0, r1 := AfterStart(0), AfterStart(time.Second)
	tests := []struct {
		name string
		x, y Instant
		c    int
		ok   bool
	}{
		{"absolute before", a, b, -1, true},
		{"absolute after", b, a, 1, true},
		{"absolute same", a, At(onSale.In(time.FixedZone("x", 3600))), 0, true},
		{"relative before", r0, r1, -1, true},
		{"relative same", r1, AfterStart(time.Second), 0, true},
		{"relative after", r1, r0, 1, true},
		{"mixed", a, r1, 0, false},
		{"unset", Instant{}, a, 0, false},
		{"unset relative", r0, Instant{}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, ok := tt.x.Compare(tt.y)
			eq(t, c, tt.c)
			eq(t, ok, tt.ok)
		})
	}
}

func TestInstantUnsetResolvesToZero(t *testing.T) {
	t.Parallel()
	if got := (Instant{}).Resolve(time.Now()); !got.IsZero() {
		t.Errorf("got %v", got)
	}
}
