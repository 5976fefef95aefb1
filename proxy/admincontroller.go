package proxy

import (
	"errors"
	"math"
	"net/http"
	"net/url"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// The query of GET /admin/v1/events/{id}/controller.
const (
	// defaultDecisions is how many decisions it answers unless told.
	defaultDecisions = 120
	// maxSinceLen bounds the since parameter (an RFC 3339 time with
	// nanoseconds and an offset is 35 bytes).
	maxSinceLen = 64
	// decisionTime is how a decision's time is shown: RFC 3339 in UTC,
	// to the millisecond.
	decisionTime = "2006-01-02T15:04:05.000Z07:00"
)

// controllerView is what GET /admin/v1/events/{id}/controller answers:
// the controller's recent decisions on this replica.
type controllerView struct {
	Event string `json:"event"`
	// Leader tells whether this replica leads the event (only the leader
	// decides); Deciding whether the controller ran at its last tick
	// (the event is selling); State says why not.
	Leader   bool            `json:"leader"`
	Deciding bool            `json:"deciding"`
	State    admission.State `json:"state"`
	TickMS   float64         `json:"tick_ms"`
	Limit    int             `json:"limit"`
	// Last is the last decision this replica recorded (null: none).
	Last *decisionView `json:"last_decision"`
	// Counts are the decisions this replica made, by reason (every
	// reason present).
	Counts    map[admission.Reason]uint64 `json:"counts"`
	Decisions []decisionView              `json:"decisions"`
}

// decisionView is one admission.Decision.
type decisionView struct {
	At            string           `json:"at"`
	Reason        admission.Reason `json:"reason"`
	Limit         int              `json:"limit"`
	Admit         int              `json:"admit"`
	Slots         int              `json:"slots"`
	Bound         admission.Bound  `json:"bound"`
	Usage         float64          `json:"usage"`
	Active        float64          `json:"active"`
	Pending       float64          `json:"pending"`
	LatencyMS     float64          `json:"latency_ms"`
	BaseLatencyMS float64          `json:"base_latency_ms"`
	P95MS         float64          `json:"p95_ms"`
	RequestRate   float64          `json:"request_rate"`
	CapacityRPS   float64          `json:"capacity_rps"`
	ErrorRate     float64          `json:"error_rate"`
	Target        float64          `json:"target"`
	ThinkMS       float64          `json:"think_ms"`
}

func viewDecision(d admission.Decision) decisionView {
	return decisionView{At: d.At.UTC().Format(decisionTime), Reason: d.Reason, Limit: d.Limit, Admit: d.Admit,
		Slots: d.Slots, Bound: d.Bound, Usage: finite(d.Usage), Active: finite(d.Active), Pending: finite(d.Pending),
		LatencyMS: ms(d.Latency), BaseLatencyMS: ms(d.BaseLatency), P95MS: ms(d.P95),
		RequestRate: finite(d.RequestRate), CapacityRPS: finite(d.Capacity), ErrorRate: finite(d.ErrorRate),
		Target: finite(d.Target), ThinkMS: ms(d.Think)}
}

// finite is x, or 0 for what JSON cannot carry (NaN, ±Inf): one odd
// figure must not cost the operator the whole answer.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}

// errDecisionQuery is a malformed query of the controller endpoint.
var errDecisionQuery = errors.New("proxy: malformed decisions query")

// parseDecisionQuery reads the controller endpoint's query strictly:
// only since (RFC 3339) and limit (1..admission.DecisionLogSize), each at
// most once and never empty. since is returned rounded up to the end of
// its millisecond, so that "after since" means after it as shown (the
// decisions' times are shown to the millisecond): a console that polls
// with the last time it got gets each decision once.
func parseDecisionQuery(raw string) (since time.Time, limit int, err error) {
	limit = defaultDecisions
	q, err := url.ParseQuery(raw)
	if err != nil {
		return time.Time{}, 0, errDecisionQuery
	}
	for k, vs := range q {
		if len(vs) != 1 || vs[0] == "" {
			return time.Time{}, 0, errDecisionQuery
		}
		v := vs[0]
		switch k {
		case "since":
			if len(v) > maxSinceLen {
				return time.Time{}, 0, errDecisionQuery
			}
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return time.Time{}, 0, errDecisionQuery
			}
			since = t.Truncate(time.Millisecond).Add(time.Millisecond - 1)
		case "limit":
			if len(v) > 3 || v[0] == '0' {
				return time.Time{}, 0, errDecisionQuery
			}
			n := 0
			for _, c := range []byte(v) {
				if c < '0' || c > '9' {
					return time.Time{}, 0, errDecisionQuery
				}
				n = 10*n + int(c-'0')
			}
			if n > admission.DecisionLogSize {
				return time.Time{}, 0, errDecisionQuery
			}
			limit = n
		default:
			return time.Time{}, 0, errDecisionQuery
		}
	}
	return since, limit, nil
}

// controller answers GET /admin/v1/events/{id}/controller.
func (a *admin) controller(w http.ResponseWriter, r *http.Request) {
	since, limit, err := parseDecisionQuery(r.URL.RawQuery)
	if err != nil {
		adminError(w, http.StatusBadRequest, "bad_request",
			"the query takes since (an RFC 3339 time; write + as %2B) and limit (1 to 600), each at most once, and nothing else")
		return
	}
	log, err := a.p.engine.Decisions(r.PathValue("id"), since, limit)
	if err != nil {
		adminError(w, http.StatusNotFound, "unknown_event", "there is no such event")
		return
	}
	v := controllerView{Event: log.Event, Leader: log.Leader, Deciding: log.Deciding, State: log.State,
		TickMS: ms(log.Tick), Limit: log.Limit, Counts: log.Counts, Decisions: make([]decisionView, len(log.Decisions))}
	if !log.Last.At.IsZero() {
		last := viewDecision(log.Last)
		v.Last = &last
	}
	for i, d := range log.Decisions {
		v.Decisions[i] = viewDecision(d)
	}
	adminJSON(w, http.StatusOK, v)
}
