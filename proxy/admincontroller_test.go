package proxy

import (
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/waitroom/waitroom/admission"
)

// decisionFields are the JSON fields of one decision: a contract with the
// operator's tools.
var decisionFields = []string{"at", "reason", "limit", "admit", "slots", "bound", "usage", "active", "pending",
	"latency_ms", "base_latency_ms", "p95_ms", "request_rate", "capacity_rps", "error_rate", "target", "think_ms"}

// checkDecisionJSON checks one decision's JSON: its fields, a known
// reason, its time (RFC 3339, to the millisecond) at the tick.
func checkDecisionJSON(t *testing.T, d any, at time.Time) {
	t.Helper()
	m, ok := d.(map[string]any)
	if !ok {
		t.Fatalf("a decision is %T: %v", d, d)
	}
	if keys := slices.Sorted(maps.Keys(m)); !slices.Equal(keys, slices.Sorted(slices.Values(decisionFields))) {
		t.Fatalf("decision fields %v, want %v", keys, decisionFields)
	}
	if s, _ := m["at"].(string); s != at.UTC().Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("at %v, want %v to the millisecond", m["at"], at)
	}
	if r, _ := m["reason"].(string); !slices.Contains(admission.Reasons, admission.Reason(r)) {
		t.Errorf("reason %v is not one of admission.Reasons", m["reason"])
	}
	if _, ok := m["bound"].(string); !ok {
		t.Errorf("bound %v is not a string", m["bound"])
	}
	for _, k := range decisionFields[2:] {
		if k == "bound" {
			continue
		}
		if v, ok := m[k].(float64); !ok || v < 0 {
			t.Errorf("%s = %v, want a number ≥ 0", k, m[k])
		}
	}
}

func TestAdminController(t *testing.T) {
	r := newRig(t)
	base := startAdmin(t, r)
	path := base + "/admin/v1/events/show/controller"
	for _, tok := range []string{"", "wrong-token-wrong-token"} {
		if code, body := adminDo(t, "GET", path, tok, ""); code != 401 || body["error"] != "unauthorized" {
			t.Errorf("token %q: %d %v", tok, code, body)
		}
	}
	if code, body := adminDo(t, "GET", base+"/admin/v1/events/nope/controller", adminToken, ""); code != 404 || body["error"] != "unknown_event" {
		t.Errorf("unknown event: %d %v", code, body)
	}

	// Before the on-sale the leader does not decide.
	r.tick(t, 0)
	code, v := adminDo(t, "GET", path, adminToken, "")
	if code != 200 || v["event"] != "show" || v["leader"] != true || v["deciding"] != false || v["state"] != "prequeue" ||
		v["last_decision"] != nil || v["tick_ms"] != 1000.0 {
		t.Fatalf("before the on-sale: %d %v", code, v)
	}
	if d, ok := v["decisions"].([]any); !ok || len(d) != 0 {
		t.Fatalf("decisions before the on-sale: %#v", v["decisions"])
	}
	counts, _ := v["counts"].(map[string]any)
	if len(counts) != len(admission.Reasons) {
		t.Fatalf("counts %v, want every reason", counts)
	}
	for _, reason := range admission.Reasons {
		if counts[string(reason)] != 0.0 {
			t.Fatalf("counts before any decision: %v", counts)
		}
	}

	// Selling: a decision per tick, most recent last.
	var ticks []time.Time
	for s := 11; s <= 20; s++ {
		r.tick(t, secs(s))
		ticks = append(ticks, r.clk.Now())
	}
	_, ev := adminDo(t, "GET", base+"/admin/v1/events/show", adminToken, "")
	code, v = adminDo(t, "GET", path, adminToken, "")
	decisions, _ := v["decisions"].([]any)
	if code != 200 || v["deciding"] != true || v["state"] != "selling" || len(decisions) != len(ticks) || v["limit"] != ev["limit"] {
		t.Fatalf("selling: %d %v", code, v)
	}
	for i, d := range decisions {
		checkDecisionJSON(t, d, ticks[i])
	}
	last := decisions[len(decisions)-1].(map[string]any)
	if lastDecision, _ := v["last_decision"].(map[string]any); !maps.Equal(lastDecision, last) || last["limit"] != v["limit"] {
		t.Fatalf("last decision %v, decisions end with %v, limit %v", v["last_decision"], last, v["limit"])
	}
	total := 0.0
	for _, reason := range admission.Reasons {
		n, _ := v["counts"].(map[string]any)[string(reason)].(float64)
		total += n
	}
	if total != float64(len(ticks)) {
		t.Fatalf("counts %v for %d decisions", v["counts"], len(ticks))
	}

	// since and limit.
	at := func(i int) string { return url.QueryEscape(ticks[i].Format(time.RFC3339Nano)) }
	for _, c := range []struct {
		query string
		want  []time.Time
	}{
		{"limit=3", ticks[7:]},
		{"limit=600", ticks},
		{"since=" + at(6), ticks[7:]},
		{"since=" + at(6) + "&limit=2", ticks[8:]},
		{"since=" + at(9), nil},
		{"since=" + url.QueryEscape(ticks[5].Add(999*time.Microsecond).Format(time.RFC3339Nano)), ticks[6:]},
		{"since=" + url.QueryEscape(ticks[5].Add(-time.Millisecond).In(time.FixedZone("", 3600)).Format(time.RFC3339)), ticks[5:]},
		{"since=2026-12-01T11:00:16%2B01:00", ticks[6:]},
	} {
		code, v := adminDo(t, "GET", path+"?"+c.query, adminToken, "")
		got, _ := v["decisions"].([]any)
		if code != 200 || len(got) != len(c.want) {
			t.Errorf("%s: %d, %d decisions, want %d", c.query, code, len(got), len(c.want))
			continue
		}
		for i, d := range got {
			checkDecisionJSON(t, d, c.want[i])
		}
	}
	for _, bad := range []string{"limit=0", "limit=601", "limit=-1", "limit=%2B5", "limit=05", "limit=1.5", "limit=abc",
		"limit=", "limit", "limit=1&limit=2", "limit=99999999999999999999", "since=", "since=yesterday",
		"since=2026-12-01", "since=2026-12-01T10:00:16", "since=2026-12-01T11:00:16+01:00", "since=1764583216",
		"since=" + strings.Repeat("9", 100), "since=" + at(1) + "&since=" + at(2), "foo=1", "limit=3&foo=", "LIMIT=3",
		"limit=%zz", "limit=3;since=" + at(1), "limit=3%00"} {
		code, body := adminDo(t, "GET", path+"?"+bad, adminToken, "")
		if code != 400 || body["error"] != "bad_request" || body["message"] == "" {
			t.Errorf("?%s: %d %v", bad, code, body)
		}
	}
	if code, body := adminDo(t, "GET", base+"/admin/v1/events/nope/controller?limit=1", adminToken, ""); code != 404 || body["error"] != "unknown_event" {
		t.Errorf("unknown event: %d %v", code, body)
	}
}

func TestControllerMetrics(t *testing.T) {
	r := newRig(t)
	const n = 7
	for s := 11; s < 11+n; s++ {
		r.tick(t, secs(s))
	}
	reg := r.reg
	show := r.engine.Figures("show").Decision
	total := 0.0
	for _, reason := range admission.Reasons {
		labels := map[string]string{"event": "show", "reason": string(reason)}
		total += counterValue(t, reg, "waitroom_controller_decisions_total", labels)
		want := 0.0
		if reason == show.Reason {
			want = 1
		}
		if got := counterValue(t, reg, "waitroom_controller_reason", labels); got != want {
			t.Errorf("waitroom_controller_reason %v = %v, want %v (the last decision's reason is %s)", labels, got, want, show.Reason)
		}
	}
	if total != n {
		t.Errorf("waitroom_controller_decisions_total for show sums to %v after %d decisions", total, n)
	}
	if got := counterValue(t, reg, "waitroom_controller_usage", map[string]string{"event": "show"}); got != show.Usage {
		t.Errorf("waitroom_controller_usage = %v, want %v", got, show.Usage)
	}
	if got := counterValue(t, reg, "waitroom_controller_base_latency_seconds", map[string]string{"event": "show"}); got != show.BaseLatency.Seconds() {
		t.Errorf("waitroom_controller_base_latency_seconds = %v, want %v", got, show.BaseLatency.Seconds())
	}

	// Every series, for both events: the counter and the reason gauge with
	// every reason (other is not selling: all 0); the figures only where
	// the controller decides.
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := map[string]map[string]int{} // family → event → series
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "waitroom_controller_") {
			continue
		}
		series[mf.GetName()] = map[string]int{}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "event" {
					series[mf.GetName()][lp.GetValue()]++
				}
			}
			if lp := m.GetLabel(); mf.GetName() == "waitroom_controller_reason" && lp[0].GetValue() == "other" && m.GetGauge().GetValue() != 0 {
				t.Errorf("a reason of the event that does not decide is 1: %v", m)
			}
		}
	}
	for _, name := range []string{"waitroom_controller_decisions_total", "waitroom_controller_reason"} {
		if s := series[name]; s["show"] != len(admission.Reasons) || s["other"] != len(admission.Reasons) {
			t.Errorf("%s: series per event %v, want %d each", name, s, len(admission.Reasons))
		}
	}
	for _, name := range []string{"waitroom_controller_capacity_requests_per_second", "waitroom_controller_base_latency_seconds",
		"waitroom_controller_latency_seconds", "waitroom_controller_usage", "waitroom_controller_pending"} {
		if s := series[name]; s["show"] != 1 || s["other"] != 0 {
			t.Errorf("%s: series per event %v, want show only", name, s)
		}
	}

	// The Prometheus naming rules (promtool check metrics).
	problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "waitroom_controller_") {
			t.Errorf("lint: %s: %s", p.Metric, p.Text)
		}
	}
}
