package proxy

import (
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/proxy/netlimit"
)

// TestBodyGuardDeadline: the next bytes are due grace plus what the bytes
// received so far earned at the minimum rate, never beyond the limit.
func TestBodyGuardDeadline(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	pol := &bodyPolicy{grace: 10 * time.Second, rate: 1000, limit: time.Minute}
	for _, tc := range []struct {
		name     string
		pol      *bodyPolicy
		received int64
		want     time.Duration
	}{
		{"nothing yet", pol, 0, 10 * time.Second},
		{"one second earned", pol, 1000, 11 * time.Second},
		{"half a second earned", pol, 500, 10*time.Second + 500*time.Millisecond},
		{"capped by the limit", pol, 10_000_000, time.Minute},
		{"no rate", &bodyPolicy{grace: 10 * time.Second, limit: time.Minute}, 5, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := bodyGuard{pol: tc.pol, start: start, received: tc.received}
			if got := g.deadline().Sub(start); got != tc.want {
				t.Fatalf("deadline %v after the head, want %v", got, tc.want)
			}
		})
	}
}

// TestBudgetClasses: with the anonymous share of the in-flight budget
// taken, a pass-route request gets 503 busy with Retry-After (counted),
// while an admitted visitor and the waiting-room API are still served.
func TestBudgetClasses(t *testing.T) {
	r := newRig(t)
	v := r.admit(t, "Mozilla/5.0 budget")
	held := 0
	for r.p.budget.Acquire(netlimit.Anonymous) {
		held++
	}
	defer func() {
		for range held {
			r.p.budget.Release(netlimit.Anonymous)
		}
	}()
	if held != 500 {
		t.Fatalf("anonymous traffic took %d of 1000 slots, want 500", held)
	}
	resp := v.do(t, "GET", r.url+"/static/app.js", "", "Accept", "application/json")
	if resp.status != 503 || resp.header.Get("Retry-After") == "" || !strings.Contains(resp.body, `"busy"`) {
		t.Fatalf("anonymous request: %d %v %s", resp.status, resp.header, resp.body)
	}
	if n := counterValue(t, r.reg, "waitroom_in_flight_refused_total", map[string]string{"class": "anonymous"}); n != 1 {
		t.Fatalf("refusals counted %v", n)
	}
	if resp := v.do(t, "GET", r.url+"/show/seats", ""); resp.status != 200 || resp.body != "origin:/show/seats" {
		t.Fatalf("admitted visitor: %d %s", resp.status, resp.body)
	}
	if resp := v.do(t, "GET", r.url+"/_wr/api/status?event=show", ""); resp.status == 503 {
		t.Fatalf("the waiting-room API was refused: %s", resp.body)
	}
	if r.p.budget.InUse(netlimit.Admitted) != 0 || r.p.budget.InUse(netlimit.API) != 0 {
		t.Fatal("a slot was not given back")
	}
}
