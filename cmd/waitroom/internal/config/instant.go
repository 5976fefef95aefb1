package config

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Instant is a moment in an event's schedule, written in YAML either as
// an absolute RFC 3339 time ("2027-03-01T09:00:00Z",
// "2027-03-01T10:00:00+01:00") or relative to when the process starts:
// "now" or "now+D" with D a duration ("now+30s", "now+1h30m"). Relative
// times are for demos and tests: they move with every restart. An empty
// value is the zero Instant, "not set".
//
// An Instant is a plain value, safe to copy and to share between
// goroutines.
type Instant struct {
	abs      time.Time     // absolute time in UTC; zero unless set
	offset   time.Duration // after the start, when relative
	relative bool
}

// At returns the absolute Instant t (in UTC).
func At(t time.Time) Instant { return Instant{abs: t.UTC()} }

// AfterStart returns the Instant d after the process start ("now+d"); d
// must not be negative.
func AfterStart(d time.Duration) Instant { return Instant{offset: d, relative: true} }

// IsZero reports whether i is unset.
func (i Instant) IsZero() bool { return !i.relative && i.abs.IsZero() }

// IsRelative reports whether i is relative to the start ("now+D").
func (i Instant) IsRelative() bool { return i.relative }

// Time returns the absolute time and true, or the zero time and false
// when i is relative or unset.
func (i Instant) Time() (time.Time, bool) { return i.abs, !i.relative && !i.abs.IsZero() }

// Offset returns how long after the start a relative Instant is, and
// whether i is relative.
func (i Instant) Offset() (time.Duration, bool) { return i.offset, i.relative }

// Resolve returns the moment i names for a process that started at start:
// start+D for "now+D", the time itself for an absolute Instant, and the
// zero time when i is unset. The result is in UTC.
func (i Instant) Resolve(start time.Time) time.Time {
	switch {
	case i.relative:
		return start.Add(i.offset).UTC()
	case i.abs.IsZero():
		return time.Time{}
	}
	return i.abs
}

// Compare orders two Instants of the same kind (both absolute or both
// relative) like time.Time.Compare, with ok true; for unset Instants or
// different kinds ok is false: their order is known only once resolved.
func (i Instant) Compare(j Instant) (c int, ok bool) {
	switch {
	case i.IsZero() || j.IsZero() || i.relative != j.relative:
		return 0, false
	case i.relative:
		return cmp.Compare(i.offset, j.offset), true
	}
	return i.abs.Compare(j.abs), true
}

// String returns i as it is written in YAML: RFC 3339 in UTC, "now",
// "now+D", or "" when unset.
func (i Instant) String() string {
	switch {
	case i.relative && i.offset == 0:
		return "now"
	case i.relative:
		return "now+" + Duration(i.offset).String()
	case i.abs.IsZero():
		return ""
	}
	return i.abs.Format(time.RFC3339Nano)
}

// ParseInstant reads the YAML form of an Instant (see Instant).
func ParseInstant(s string) (Instant, error) {
	const want = `want an RFC 3339 time such as 2027-03-01T09:00:00Z, or now, or now+30s`
	switch {
	case s == "":
		return Instant{}, nil
	case s == "now":
		return AfterStart(0), nil
	case strings.HasPrefix(s, "now+"):
		rest := s[len("now+"):]
		d, err := time.ParseDuration(rest)
		if err != nil || rest[0] < '0' || rest[0] > '9' {
			return Instant{}, fmt.Errorf("invalid time %q: after now+ want a duration with a unit, such as now+30s or now+1h30m", s)
		}
		return AfterStart(d), nil
	case strings.HasPrefix(s, "now"):
		return Instant{}, fmt.Errorf("invalid time %q: %s", s, want)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return Instant{}, fmt.Errorf("invalid time %q: %s", s, want)
	}
	if t.IsZero() {
		return Instant{}, fmt.Errorf("invalid time %q: year 1 is not a date to sell tickets on", s)
	}
	return At(t), nil
}

// UnmarshalYAML reads an Instant.
func (i *Instant) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf(`line %d: want a time such as 2027-03-01T09:00:00Z, now, or now+30s`, n.Line)}}
	}
	v, err := ParseInstant(n.Value)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %v", n.Line, err)}}
	}
	*i = v
	return nil
}

// MarshalYAML writes i as its String form.
func (i Instant) MarshalYAML() (any, error) { return i.String(), nil }
