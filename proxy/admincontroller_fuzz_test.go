package proxy

import (
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// FuzzDecisionQuery: the controller endpoint's query parser never panics,
// and what it accepts is since and limit at most once each, with limit in
// 1..600 as written and since an RFC 3339 time rounded up to the end of
// its millisecond.
func FuzzDecisionQuery(f *testing.F) {
	for _, s := range []string{"", "limit=5", "limit=600", "limit=601", "limit=0", "limit=05", "limit=%2B5",
		"since=2026-12-01T10:00:00Z", "since=2026-12-01T10:00:00.123456789%2B01:00&limit=2", "since=2026-12-01",
		"since=x&since=y", "limit=1;since=", "foo=bar", "%zz", "limit=3%00", "=", "&&"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		since, limit, err := parseDecisionQuery(raw)
		if err != nil {
			return
		}
		q, qerr := url.ParseQuery(raw)
		if qerr != nil {
			t.Fatalf("accepted %q, which net/url refuses: %v", raw, qerr)
		}
		for k, vs := range q {
			if (k != "since" && k != "limit") || len(vs) != 1 {
				t.Fatalf("accepted %q: %q = %q", raw, k, vs)
			}
		}
		if limit < 1 || limit > admission.DecisionLogSize {
			t.Fatalf("%q: limit %d", raw, limit)
		}
		if s := q.Get("limit"); s != "" && s != strconv.Itoa(limit) {
			t.Fatalf("%q: limit %d from %q", raw, limit, s)
		}
		if s := q.Get("since"); s != "" {
			want, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				t.Fatalf("%q: accepted since %q: %v", raw, s, err)
			}
			if since.Before(want) || since.Sub(want) >= time.Millisecond || since.Add(1).Truncate(time.Millisecond) != since.Add(1) {
				t.Fatalf("%q: since %v from %v", raw, since, want)
			}
		} else if !since.IsZero() {
			t.Fatalf("%q: since %v without one", raw, since)
		}
	})
}
