package proxy

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/proxy/netlimit"
)

// metrics are the proxy's Prometheus metrics. Counters used per request
// are resolved once, so counting allocates nothing.
type metrics struct {
	requests     *prometheus.CounterVec
	joinsVec     *prometheus.CounterVec
	identityVec  *prometheus.CounterVec
	passesIssued *prometheus.CounterVec
	renewedVec   *prometheus.CounterVec
	badPasses    *prometheus.CounterVec
	noTicket     *prometheus.CounterVec
	bypassVec    *prometheus.CounterVec
	passCache    *prometheus.CounterVec
	bypassCIDR   prometheus.Counter
	bypassHeader prometheus.Counter
	passHits     prometheus.Counter
	passMisses   prometheus.Counter
	rateLimited  prometheus.Counter
	// sharedLimitErrors counts shared rate-limit budgets that did not
	// answer in time (the replica's own buckets decided).
	sharedLimitErrors prometheus.Counter
	badRequests       prometheus.Counter
	refusedVec        *prometheus.CounterVec
	// badTargets and refusedMethods are refusedVec's reasons.
	badTargets, refusedMethods prometheus.Counter
	shed                       *prometheus.CounterVec
	originErrors               *prometheus.CounterVec
	// reserveShed counts anonymous requests shed because the rest of an
	// origin's in-flight limit is reserved for admitted visitors.
	reserveShed *prometheus.CounterVec
	// refused counts requests refused by Options.Budget, by class.
	refused [netlimit.NumClasses]prometheus.Counter
	// timeouts counts requests cut off for arriving too slowly: head
	// (fasthttp could not read the head, or a declared body's first
	// bytes), body (a streamed body stalled below the minimum rate).
	headTimeouts, bodyTimeouts prometheus.Counter
	extra                      []prometheus.Collector
}

// routeCounts are one route action's outcomes.
type routeCounts struct {
	forwarded, bypassed, room, blocked prometheus.Counter
	// crawler counts allowlisted crawlers forwarded without a pass.
	crawler prometheus.Counter
	// passed: let straight through with a new pass (threshold mode, the
	// passthrough state); maintenance: answered with the maintenance page.
	passed, maintenance prometheus.Counter
}

// eventCounts are one event's counters.
type eventCounts struct {
	id                           string
	m                            *metrics
	passesIssued                 prometheus.Counter
	passesRenewed                prometheus.Counter
	invalidPasses, revokedPasses prometheus.Counter
	statusNoTicket               prometheus.Counter
}

func (c *eventCounts) joins(result string) prometheus.Counter {
	return c.m.joinsVec.WithLabelValues(c.id, result)
}

func (c *eventCounts) identity(result string) prometheus.Counter {
	return c.m.identityVec.WithLabelValues(c.id, result)
}

func newMetrics(reg prometheus.Registerer, engine *admission.Engine) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_requests_total",
			Help: "Requests through the gate, by route action and outcome (forwarded, bypassed, crawler, room, blocked, passed: let straight through with a new pass, maintenance)."},
			[]string{"action", "outcome"}),
		joinsVec: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_joins_total",
			Help: "Join requests by event and result (joined, shadowed, rejoined, deduplicated: the place the account was given before, passed: admitted at once in threshold mode or passthrough, scheduled, sold_out, closed, login_required: refused for want of a valid identity, refused)."},
			[]string{"event", "result"}),
		identityVec: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_identity_total",
			Help: "Identities read at join in events with identity optional or required, by event and result (verified, missing, invalid, unavailable: the origin's key set could not be fetched)."},
			[]string{"event", "result"}),
		passesIssued: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_passes_issued_total",
			Help: "Passes handed to admitted visitors."}, []string{"event"}),
		renewedVec: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_passes_renewed_total",
			Help: "Passes slid forward for visitors still active at the origin (events[].max_session)."}, []string{"event"}),
		badPasses: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_passes_refused_total",
			Help: "Pass cookies refused at the gate, by reason (invalid: bad signature, expired, wrong device or event; revoked)."},
			[]string{"event", "reason"}),
		noTicket: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_status_no_ticket_total",
			Help: "Status polls without a valid ticket."}, []string{"event"}),
		bypassVec: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_bypass_total",
			Help: "Requests let through by a bypass rule, by rule (cidr, header)."}, []string{"via"}),
		passCache: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_pass_cache_total",
			Help: "Pass lookups in the verified-pass cache (hit, miss)."}, []string{"result"}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{Name: "waitroom_api_rate_limited_total",
			Help: "Waiting-room API requests refused by the per-address rate limits."}),
		sharedLimitErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "waitroom_rate_limit_shared_errors_total",
			Help: "Requests whose shared (Redis) rate-limit budget did not answer in time; the replica's own buckets decided them."}),
		badRequests: prometheus.NewCounter(prometheus.CounterOpts{Name: "waitroom_bad_requests_total",
			Help: "Requests refused as malformed (framing, smuggling shapes)."}),
		refusedVec: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_refused_requests_total",
			Help: "Requests refused before routing, by reason (target: a malformed or ambiguous request-target or Host; method: CONNECT, or TRACE where no route allows it)."},
			[]string{"reason"}),
		shed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_shed_total",
			Help: "Requests refused with 503 because the origin's in-flight limit was reached."}, []string{"origin"}),
		originErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_origin_failures_total",
			Help: "Forwarded requests that failed at the origin, by kind (timeout, unavailable)."}, []string{"origin", "kind"}),
	}
	m.reserveShed = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_origin_reserve_shed_total",
		Help: "Requests without a pass refused with 503 because the rest of the origin's in-flight limit is reserved for admitted visitors (serve.reserved.admitted)."},
		[]string{"origin"})
	refused := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_in_flight_refused_total",
		Help: "Requests refused with 503 because serve.max_in_flight, less the shares reserved for other classes, was reached, by class (anonymous, admitted, api)."},
		[]string{"class"})
	for c := range netlimit.NumClasses {
		m.refused[c] = refused.WithLabelValues(c.String())
	}
	timeouts := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_request_timeouts_total",
		Help: "Requests cut off (408, connection closed) for arriving too slowly, by phase: head (serve.header_timeout, or a declared body's first bytes), body (serve.body_timeout, body_min_rate, read_timeout)."},
		[]string{"phase"})
	m.headTimeouts, m.bodyTimeouts = timeouts.WithLabelValues("head"), timeouts.WithLabelValues("body")
	m.extra = []prometheus.Collector{m.reserveShed, refused, timeouts}
	m.bypassCIDR, m.bypassHeader = m.bypassVec.WithLabelValues("cidr"), m.bypassVec.WithLabelValues("header")
	m.passHits, m.passMisses = m.passCache.WithLabelValues("hit"), m.passCache.WithLabelValues("miss")
	m.badTargets, m.refusedMethods = m.refusedVec.WithLabelValues("target"), m.refusedVec.WithLabelValues("method")
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.requests, m.joinsVec, m.identityVec, m.passesIssued, m.renewedVec, m.badPasses, m.noTicket,
		m.shed, m.originErrors, m.rateLimited, m.sharedLimitErrors, m.badRequests, m.refusedVec, m.bypassVec, m.passCache, &queueCollector{engine: engine},
		m.extra[0], m.extra[1], m.extra[2]} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) route(a Action) *routeCounts {
	return &routeCounts{
		forwarded: m.requests.WithLabelValues(a.String(), "forwarded"),
		bypassed:  m.requests.WithLabelValues(a.String(), "bypassed"),
		room:      m.requests.WithLabelValues(a.String(), "room"),
		blocked:   m.requests.WithLabelValues(a.String(), "blocked"),
		crawler:   m.requests.WithLabelValues(a.String(), "crawler"),
		passed:    m.requests.WithLabelValues(a.String(), "passed"),

		maintenance: m.requests.WithLabelValues(a.String(), "maintenance"),
	}
}

func (m *metrics) event(id string) *eventCounts {
	return &eventCounts{id: id, m: m,
		passesIssued:   m.passesIssued.WithLabelValues(id),
		passesRenewed:  m.renewedVec.WithLabelValues(id),
		invalidPasses:  m.badPasses.WithLabelValues(id, "invalid"),
		revokedPasses:  m.badPasses.WithLabelValues(id, "revoked"),
		statusNoTicket: m.noTicket.WithLabelValues(id),
	}
}

// queueCollector exports every event's live queue figures at scrape time.
type queueCollector struct{ engine *admission.Engine }

var (
	descState = prometheus.NewDesc("waitroom_event_state",
		"The event's state: 1 for the current one.", []string{"event", "state"}, nil)
	descLimit = prometheus.NewDesc("waitroom_admission_limit",
		"How many visitors the controller lets be active at once.", []string{"event"}, nil)
	descAdmitted = prometheus.NewDesc("waitroom_admitted_last_minute",
		"Visitors admitted in the last minute.", []string{"event"}, nil)
	descNoShow = prometheus.NewDesc("waitroom_no_show_rate",
		"Share of reached visitors whose pass was never used at the gate: they never came for their turn, or took the pass and never came.", []string{"event"}, nil)
	descUsesDropped = prometheus.NewDesc("waitroom_pass_uses_dropped_total",
		"First uses of passes this replica could not buffer for the store (tried again at the pass's next request).", []string{"event"}, nil)
	descLeader = prometheus.NewDesc("waitroom_event_leader",
		"1 when this replica runs the event's draws and controller.", []string{"event"}, nil)
	descServing = prometheus.NewDesc("waitroom_queue_serving",
		"Queue numbers admitted so far.", []string{"event", "lane"}, nil)
	descDrawn = prometheus.NewDesc("waitroom_queue_drawn",
		"Queue numbers given out by draws so far.", []string{"event", "lane"}, nil)
	descWaiting = prometheus.NewDesc("waitroom_queue_waiting",
		"Drawn visitors not admitted yet.", []string{"event", "lane"}, nil)
	descUndrawn = prometheus.NewDesc("waitroom_queue_undrawn",
		"Visitors in tranches not drawn yet.", []string{"event", "lane"}, nil)
	descQueueing = prometheus.NewDesc("waitroom_event_queueing",
		"1 while visitors without a pass go to the waiting room; 0 while they pass straight through (threshold mode with room under the limit, or the passthrough state).", []string{"event"}, nil)
	descSlots = prometheus.NewDesc("waitroom_passthrough_slots",
		"Pass-through slots the leader granted at its last tick (threshold mode).", []string{"event"}, nil)
	descUnarrived = prometheus.NewDesc("waitroom_admission_unarrived",
		"Visitors admitted who have not come yet and still may, counted against max_active (the leader's, at its last tick).", []string{"event"}, nil)
	descReplicas = prometheus.NewDesc("waitroom_admission_replicas",
		"Replicas whose measurements the leader summed at its last tick (0 on a follower).", []string{"event"}, nil)
)

// The controller's decisions (admission.Decision). The counter counts
// every decision this replica made while it led the event, with every
// reason present from the start; the reason gauge is 1 for the reason of
// the decision at the last tick and 0 for the others (all 0 when the
// controller did not run at it: a follower, an event not selling); the
// figures behind the decision are exported only while it decides.
var (
	descDecisions = prometheus.NewDesc("waitroom_controller_decisions_total",
		"Admission controller decisions made on this replica while it led the event (one per tick of a selling event), by reason.",
		[]string{"event", "reason"}, nil)
	descReason = prometheus.NewDesc("waitroom_controller_reason",
		"The reason of the admission controller's decision at the last tick: 1 for it, 0 for the others (all 0 when it did not decide: a follower, an event not selling).",
		[]string{"event", "reason"}, nil)
	descCapacity = prometheus.NewDesc("waitroom_controller_capacity_requests_per_second",
		"The request rate the origin was last measured to serve at its limit, as the controller's last decision used it (0: not measured yet).",
		[]string{"event"}, nil)
	descBaseLatency = prometheus.NewDesc("waitroom_controller_base_latency_seconds",
		"The origin's unloaded latency baseline at the controller's last decision.", []string{"event"}, nil)
	descCtlLatency = prometheus.NewDesc("waitroom_controller_latency_seconds",
		"The origin's recent mean latency the controller's last decision saw.", []string{"event"}, nil)
	descUsage = prometheus.NewDesc("waitroom_controller_usage",
		"Visitors occupying the limit at the controller's last decision: active at the origin plus pending.", []string{"event"}, nil)
	descCtlPending = prometheus.NewDesc("waitroom_controller_pending",
		"Visitors let in and expected to come (no-shows discounted) at the controller's last decision.", []string{"event"}, nil)
)

var allStates = []admission.State{admission.StateScheduled, admission.StatePrequeue, admission.StateSelling,
	admission.StateSoldOut, admission.StateClosed, admission.StatePaused, admission.StateMaintenance, admission.StatePassthrough}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descState, descLimit, descAdmitted, descNoShow, descUsesDropped, descLeader,
		descServing, descDrawn, descWaiting, descUndrawn, descQueueing, descSlots, descDecisions, descReason,
		descCapacity, descBaseLatency, descCtlLatency, descUsage, descCtlPending, descUnarrived, descReplicas} {
		ch <- d
	}
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	for _, id := range c.engine.Events() {
		f := c.engine.Figures(id)
		for _, s := range allStates {
			v := 0.0
			if f.State == s {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descState, prometheus.GaugeValue, v, id, string(s))
		}
		leader := 0.0
		if f.Leader {
			leader = 1
		}
		ch <- prometheus.MustNewConstMetric(descLeader, prometheus.GaugeValue, leader, id)
		ch <- prometheus.MustNewConstMetric(descLimit, prometheus.GaugeValue, float64(f.Limit), id)
		ch <- prometheus.MustNewConstMetric(descAdmitted, prometheus.GaugeValue, float64(f.Admitted1m), id)
		ch <- prometheus.MustNewConstMetric(descNoShow, prometheus.GaugeValue, f.NoShowRate, id)
		ch <- prometheus.MustNewConstMetric(descUnarrived, prometheus.GaugeValue, float64(f.Unarrived), id)
		ch <- prometheus.MustNewConstMetric(descReplicas, prometheus.GaugeValue, float64(f.Replicas), id)
		ch <- prometheus.MustNewConstMetric(descUsesDropped, prometheus.CounterValue, float64(f.UsesDropped), id)
		queueing := 0.0
		if f.Queueing {
			queueing = 1
		}
		ch <- prometheus.MustNewConstMetric(descQueueing, prometheus.GaugeValue, queueing, id)
		ch <- prometheus.MustNewConstMetric(descSlots, prometheus.GaugeValue, float64(f.Slots), id)
		for lane, l := range f.Lanes {
			ch <- prometheus.MustNewConstMetric(descServing, prometheus.GaugeValue, float64(l.Serving), id, lane)
			ch <- prometheus.MustNewConstMetric(descDrawn, prometheus.GaugeValue, float64(l.Drawn), id, lane)
			ch <- prometheus.MustNewConstMetric(descWaiting, prometheus.GaugeValue, float64(l.Waiting), id, lane)
			ch <- prometheus.MustNewConstMetric(descUndrawn, prometheus.GaugeValue, float64(l.Undrawn), id, lane)
		}
		c.collectDecisions(ch, id)
	}
}

// collectDecisions exports an event's controller decisions.
func (c *queueCollector) collectDecisions(ch chan<- prometheus.Metric, id string) {
	log, err := c.engine.Decisions(id, time.Time{}, 0)
	if err != nil {
		return
	}
	for _, r := range admission.Reasons {
		ch <- prometheus.MustNewConstMetric(descDecisions, prometheus.CounterValue, float64(log.Counts[r]), id, string(r))
		v := 0.0
		if log.Deciding && log.Last.Reason == r {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(descReason, prometheus.GaugeValue, v, id, string(r))
	}
	if !log.Deciding {
		return
	}
	d := log.Last
	ch <- prometheus.MustNewConstMetric(descCapacity, prometheus.GaugeValue, d.Capacity, id)
	ch <- prometheus.MustNewConstMetric(descBaseLatency, prometheus.GaugeValue, d.BaseLatency.Seconds(), id)
	ch <- prometheus.MustNewConstMetric(descCtlLatency, prometheus.GaugeValue, d.Latency.Seconds(), id)
	ch <- prometheus.MustNewConstMetric(descUsage, prometheus.GaugeValue, d.Usage, id)
	ch <- prometheus.MustNewConstMetric(descCtlPending, prometheus.GaugeValue, d.Pending, id)
}
