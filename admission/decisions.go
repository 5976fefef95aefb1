package admission

import (
	"sync"
	"time"
)

// DecisionLogSize is how many of an event's recent decisions a replica
// keeps: ten minutes at the default one-second tick.
const DecisionLogSize = 600

// DecisionLog is an event's controller decisions as this replica knows
// them (see Engine.Decisions). A replica records the decisions it makes
// while it leads the event: one per tick at which the controller ran,
// that is each leader tick of a selling event (in any mode). Ticks that do
// not run the controller (another replica leads, or the event is
// scheduled, in its pre-queue, paused, in maintenance, in passthrough,
// marked sold out by the operator or closed) record nothing, so a gap
// in the decisions is time the controller did not decide; State says
// why it does not decide now.
type DecisionLog struct {
	Event string
	// Leader tells whether this replica leads the event now; a replica
	// that never led has no decisions, one that led before keeps those
	// it made then.
	Leader bool
	// State is the event's state and Limit its current limit (as of the
	// last tick).
	State State
	Limit int
	// Deciding tells whether the controller ran at this replica's last
	// tick (the leader of a selling event).
	Deciding bool
	// Tick is the controller's tick interval.
	Tick time.Duration
	// Last is the last decision recorded (At is zero when there is none).
	Last Decision
	// Counts are the decisions recorded on this replica since it started,
	// by reason; every reason of Reasons is present.
	Counts map[Reason]uint64
	// Decisions are the recent decisions asked for, most recent last.
	Decisions []Decision
}

// decisionLog is an event's ring of recent decisions and its counts per
// reason. Safe for concurrent use: the tick records, operators read.
type decisionLog struct {
	mu     sync.Mutex
	ring   []Decision // DecisionLogSize once the first decision is recorded
	next   int        // where the next decision goes
	n      int        // decisions in the ring
	counts map[Reason]uint64
}

func newDecisionLog() *decisionLog {
	d := &decisionLog{counts: make(map[Reason]uint64, len(Reasons))}
	for _, r := range Reasons {
		d.counts[r] = 0
	}
	return d
}

// record keeps one decision. The ring is allocated at the first one, so
// a replica that never leads holds none; after that recording allocates
// nothing.
func (d *decisionLog) record(dec Decision) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ring == nil {
		d.ring = make([]Decision, DecisionLogSize)
	}
	d.ring[d.next] = dec
	d.next = (d.next + 1) % len(d.ring)
	d.n = min(d.n+1, len(d.ring))
	d.counts[dec.Reason]++
}

// read fills in the last decision, the counts, and at most limit of the
// decisions made after since (all kept ones for a zero since), most
// recent last.
func (d *decisionLog) read(out *DecisionLog, since time.Time, limit int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out.Counts = make(map[Reason]uint64, len(d.counts))
	for r, n := range d.counts {
		out.Counts[r] = n
	}
	if d.n == 0 {
		return
	}
	at := func(i int) *Decision { // i-th most recent, from 0
		return &d.ring[(d.next-1-i+2*len(d.ring))%len(d.ring)]
	}
	out.Last = *at(0)
	k := 0
	for k < min(d.n, limit) && at(k).At.After(since) {
		k++
	}
	out.Decisions = make([]Decision, k)
	for i := range k {
		out.Decisions[k-1-i] = *at(i)
	}
}

// Decisions returns what this replica knows of an event's controller
// decisions: the last one, the counts per reason, and at most limit of
// the recent ones made after since (a zero since: any), most recent last
// (limit ≤ 0: none, only the last and the counts). At most
// DecisionLogSize decisions are kept. It is safe to call while the
// engine ticks.
func (e *Engine) Decisions(id string, since time.Time, limit int) (DecisionLog, error) {
	ev, err := e.event(id)
	if err != nil {
		return DecisionLog{}, err
	}
	f := ev.figures.Load()
	out := DecisionLog{Event: id, Leader: f.Leader, State: f.State, Limit: f.Limit,
		Deciding: !f.Decision.At.IsZero(), Tick: ev.conf().Controller.Tick, Decisions: []Decision{}}
	ev.decisions.read(&out, since, limit)
	return out, nil
}
