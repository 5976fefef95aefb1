package console

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/challenge"
)

// bands are the bot defence's actions in the order the console shows
// them, with their labels.
var bands = []struct {
	action challenge.Action
	label  string
}{
	{challenge.ActionLightPoW, "light"},
	{challenge.ActionHeavyPoW, "heavy"},
	{challenge.ActionCaptcha, "captcha"},
	{challenge.ActionShadow, "shadow"},
	{challenge.ActionBlock, "block"},
}

// defenceMetric is the counter the proxy keeps of the bot defence's
// decisions, by event, action called for and action applied.
const defenceMetric = "waitroom_challenge_decisions_total"

// defenceCounts reads the bot defence's applied actions per event and
// band (indexed as bands) from g; nil g or a failing gather: none.
func defenceCounts(g prometheus.Gatherer) map[string][5]uint64 {
	out := map[string][5]uint64{}
	if g == nil {
		return out
	}
	mfs, err := g.Gather()
	if err != nil && len(mfs) == 0 {
		return out
	}
	for _, mf := range mfs {
		if mf.GetName() != defenceMetric {
			continue
		}
		for _, m := range mf.GetMetric() {
			ev, applied := label(m, "event"), label(m, "applied")
			for i, b := range bands {
				if string(b.action) == applied {
					c := out[ev]
					c[i] += uint64(m.GetCounter().GetValue())
					out[ev] = c
				}
			}
		}
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// point is one event's figures at one sample: what the charts draw.
type point struct {
	At         time.Time
	Queue      int     // visitors waiting: drawn and not reached, and undrawn
	Arrived    uint64  // cumulative: numbers drawn, undrawn and passed through
	Arrivals   float64 // per minute
	Admitted   int     // in the last minute
	Active     int
	Target     int
	P50, P99   float64 // ms
	ErrorRate  float64
	NoShowRate float64
	ETABack    int // seconds, -1 unknown
	Bots       [5]uint64
}

// eventView is one event's live figures as the console shows them (and
// sends them over the stream).
type eventView struct {
	ID             string          `json:"id"`
	State          admission.State `json:"state"`
	Mode           admission.Mode  `json:"mode"`
	ConfiguredMode admission.Mode  `json:"configured_mode"`
	ModeOverridden bool            `json:"mode_overridden"`
	Queueing       bool            `json:"queueing"`
	Paused         bool            `json:"paused"`
	SoldOut        bool            `json:"sold_out"`
	Caps           capsView        `json:"caps"`
	CapsOverridden bool            `json:"caps_overridden"`
	Queue          int             `json:"queue"`
	QueueChange    int             `json:"queue_change"` // over the last minute
	ArrivalsPerMin float64         `json:"arrivals_per_min"`
	AdmittedPerMin int             `json:"admitted_per_min"`
	Active         int             `json:"active"`
	Target         int             `json:"target"`
	Reason         string          `json:"reason"`
	Bound          string          `json:"bound"`
	Why            string          `json:"why"`
	DecidedAt      *time.Time      `json:"decided_at,omitempty"`
	// LastMove is the controller's last change of the limit in the
	// decisions this replica keeps (nil: none).
	LastMove   *moveView `json:"last_move"`
	LatencyP50 float64   `json:"latency_p50_ms"`
	LatencyP99 float64   `json:"latency_p99_ms"`
	ErrorRate  float64   `json:"error_rate"`
	NoShowRate float64   `json:"no_show_rate"`
	ETABack    etaView   `json:"eta_back"`
	SeatsLeft  *int      `json:"seats_left"`
	Bots       []botView `json:"bots"`
	Notice     string    `json:"notice"`
	// NoticeLanguages counts the notice\'s translations (posted through
	// the admin API; the console posts the default text alone).
	NoticeLanguages int `json:"notice_languages"`
}

// moveView is one change of the controller's limit.
type moveView struct {
	From   int       `json:"from"`
	To     int       `json:"to"`
	At     time.Time `json:"at"`
	Reason string    `json:"reason"`
	Why    string    `json:"why"`
}

type capsView struct {
	MaxActive       int `json:"max_active"`
	MaxNewPerMinute int `json:"max_new_per_minute"`
}

// etaView is the wait of whoever joins now, in seconds (all -1: unknown).
type etaView struct {
	Seconds int `json:"seconds"`
	Low     int `json:"low"`
	High    int `json:"high"`
}

type botView struct {
	Band       string `json:"band"`
	Total      uint64 `json:"total"`
	LastMinute uint64 `json:"last_minute"`
}

// why explains a controller decision in a sentence.
func why(r admission.Reason, b admission.Bound) string {
	s := map[admission.Reason]string{
		admission.ReasonStart:    "first tick: the initial limit",
		admission.ReasonNoData:   "too little origin traffic to measure: the limit holds",
		admission.ReasonProbe:    "the origin answers fast and the limit is in use: growing",
		admission.ReasonSteady:   "the origin runs at its target latency: following its capacity",
		admission.ReasonQueueing: "origin latency rose above its baseline: sized to what it serves",
		admission.ReasonTail:     "the origin's p95 nears twice its baseline: easing",
		admission.ReasonLatency:  "origin p95 above target: cut",
		admission.ReasonErrors:   "origin errors above target: cut",
		admission.ReasonIdle:     "fewer visitors than the limit allows: drifting down",
		admission.ReasonSoldOut:  "the inventory is empty: nobody is let in",
	}[r]
	if s == "" {
		s = string(r)
	}
	switch b {
	case admission.BoundMaxActive:
		s += "; held by the max_active cap"
	case admission.BoundPerMinute:
		s += "; paced by the max_new_per_minute cap"
	case admission.BoundInventory:
		s += "; held by the seats left"
	case admission.BoundWaiting:
		s += "; nobody else is waiting"
	}
	return s
}

// sample reads one event's figures now; prev is the event's history,
// oldest first, for the per-minute rates.
func (c *Console) sample(id string, now time.Time, bots [5]uint64, hist []point) (point, eventView, bool) {
	e := c.opts.Engine
	cfg, err := e.Config(id)
	if err != nil {
		return point{}, eventView{}, false
	}
	ctl, err := e.Control(id)
	if err != nil {
		return point{}, eventView{}, false
	}
	f := e.Figures(id)
	p := point{At: now, Admitted: f.Admitted1m, Active: f.Last.Active, Target: f.Limit,
		P50: ms(f.Last.LatencyP50), P99: ms(f.Last.LatencyP99), ErrorRate: f.Last.ErrorRate,
		NoShowRate: f.NoShowRate, ETABack: -1, Bots: bots}
	p.Arrived = uint64(max(f.PassedThrough, 0))
	eta := etaView{Seconds: 0, Low: 0, High: 0}
	for _, l := range f.Lanes {
		ahead := int(l.Waiting) + l.Undrawn
		p.Queue += ahead
		p.Arrived += l.Drawn + uint64(l.Undrawn)
		if ahead > 0 {
			le := admission.EstimateETA(float64(ahead), 0, l.RateLow, l.RateMid, l.RateHigh)
			if !le.Known() {
				eta = etaView{-1, -1, -1}
			} else if eta.Seconds >= 0 && le.Seconds > eta.Seconds {
				eta = etaView(le)
			}
		}
	}
	p.ETABack = eta.Seconds
	// A minute ago: the oldest sample at most a minute old, the rates
	// scaled to a minute while the history is shorter.
	ago := p
	for i := len(hist) - 1; i >= 0 && now.Sub(hist[i].At) <= time.Minute; i-- {
		ago = hist[i]
	}
	var botsMin [5]uint64
	if span := now.Sub(ago.At); span > 0 {
		scale := float64(time.Minute) / float64(span)
		p.Arrivals = float64(p.Arrived-min(ago.Arrived, p.Arrived)) * scale
		for i := range bots {
			botsMin[i] = uint64(float64(bots[i]-min(ago.Bots[i], bots[i]))*scale + 0.5)
		}
	}
	caps := cfg.Caps
	if ctl.Caps != nil {
		caps = *ctl.Caps
	}
	v := eventView{ID: id, State: f.State, Mode: e.Mode(id), ConfiguredMode: cfg.Mode, ModeOverridden: ctl.Mode != "",
		Queueing: f.Queueing, Paused: ctl.Paused, SoldOut: ctl.SoldOut, Caps: capsView(caps), CapsOverridden: ctl.Caps != nil,
		Queue: p.Queue, QueueChange: p.Queue - ago.Queue, ArrivalsPerMin: round1(p.Arrivals), AdmittedPerMin: p.Admitted,
		Active: p.Active, Target: p.Target, LatencyP50: round1(p.P50), LatencyP99: round1(p.P99),
		ErrorRate: p.ErrorRate, NoShowRate: p.NoShowRate, ETABack: eta, Bots: make([]botView, len(bands))}
	// State as it is now (a change made here shows at once), the rest as
	// of the last tick.
	v.State = e.State(id)
	if log, err := e.Decisions(id, time.Time{}, admission.DecisionLogSize); err == nil && !log.Last.At.IsZero() {
		at := log.Last.At.UTC()
		v.Reason, v.Bound, v.Why, v.DecidedAt = string(log.Last.Reason), string(log.Last.Bound),
			why(log.Last.Reason, log.Last.Bound), &at
		// The last tick that moved the limit, and why.
		for i := len(log.Decisions) - 1; i > 0; i-- {
			if d, prev := log.Decisions[i], log.Decisions[i-1]; d.Limit != prev.Limit {
				at := d.At.UTC()
				v.LastMove = &moveView{From: prev.Limit, To: d.Limit, At: at, Reason: string(d.Reason), Why: why(d.Reason, d.Bound)}
				break
			}
		}
	}
	if n, ok := e.SeatsLeft(id); ok {
		v.SeatsLeft = &n
	}
	for i, b := range bands {
		v.Bots[i] = botView{Band: b.label, Total: bots[i], LastMinute: botsMin[i]}
	}
	if ctl.Notice != nil {
		v.Notice, v.NoticeLanguages = ctl.Notice.Text, len(ctl.Notice.Texts)
	}
	return p, v, true
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }
