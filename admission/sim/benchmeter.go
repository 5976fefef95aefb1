package sim

import (
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/loghist"
)

// The proxy meter's defaults (proxy/meter: DefaultWindow,
// DefaultActiveWindow and its 12 epochs), which `waitroom serve` runs
// with. admission/sim cannot import the proxy; bench/controller checks
// that MeterModel and proxy/meter report the same figures for the same
// traffic.
const (
	meterWindow       = time.Second
	meterActiveWindow = 60 * time.Second
	meterEpochs       = 12
	meterRing         = 4 // slots kept: the window's one, the one partly in it, spares
)

// meterSlot is one second of the meter's window.
type meterSlot struct {
	tag      int64 // slot number + 1 (0: unused)
	requests float64
	errors   float64
	hist     [loghist.Buckets]float64
}

// MeterModel computes, in simulated time, what proxy/meter reports to the
// admission engine for one event: RequestRate, ErrorRate (5xx and
// failures), the latency percentiles, mean and count over the last second
// (the current slot and the share of the previous one still in the
// window, its requests taken as spread evenly over it), InFlight, Active
// (distinct visitors seen within 60 s, counted by 5 s epochs; a visitor
// who completed leaves at once) and Completions since the previous
// Measure. Slot and epoch boundaries fall on whole seconds after base, as
// the real meter's fall after its creation. It is exported so that
// bench/controller can check it against proxy/meter (admission/sim cannot
// import the proxy). It is not safe for concurrent use; the simulation is
// single-threaded.
type MeterModel struct {
	base        time.Time
	created     int64 // ns after base, when the event was registered
	slots       [meterRing]meterSlot
	inFlight    int
	completions int
	reported    int
	// epochs counts the visitors last seen in each epoch (epoch number,
	// from 1); a visitor's last epoch is in their MeterPresence.
	epochs map[int64]int
}

// MeterPresence is one visitor's mark in a MeterModel's active count, as
// proxy/meter.Presence; the zero value is a visitor never seen.
type MeterPresence struct {
	epoch     int64 // last epoch seen in (0: never, -1: completed)
	completed bool
}

// NewMeterModel returns the meter of an event registered at base, the
// time its slots and epochs count from.
func NewMeterModel(base time.Time) *MeterModel {
	return &MeterModel{base: base, epochs: map[int64]int{}}
}

func (m *MeterModel) nanos(t time.Time) int64 { return max(int64(t.Sub(m.base)), 0) }

// Start counts a request going to the origin.
func (m *MeterModel) Start() { m.inFlight++ }

// Done counts a request the origin answered with status after latency
// (or failed to: failed), at now.
func (m *MeterModel) Done(now time.Time, latency time.Duration, status int, failed bool) {
	m.inFlight--
	sn := m.nanos(now) / int64(meterWindow)
	sl := &m.slots[sn%meterRing]
	if sl.tag != sn+1 {
		if sl.tag > sn+1 {
			return
		}
		*sl = meterSlot{tag: sn + 1}
	}
	sl.requests++
	if failed || status >= 500 && status <= 599 {
		sl.errors++
	}
	if !failed {
		sl.hist[loghist.Bucket(uint64(max(latency, 0))/1000)]++
	}
}

// Seen marks the visitor of p active at now.
func (m *MeterModel) Seen(p *MeterPresence, now time.Time) {
	ep := m.nanos(now)/m.epochNs() + 1
	if p.epoch >= ep || p.epoch < 0 {
		return
	}
	if p.epoch > 0 {
		m.epochs[p.epoch]--
	}
	p.epoch = ep
	m.epochs[ep]++
}

// Complete records that the visitor of p completed; true the first time.
func (m *MeterModel) Complete(p *MeterPresence) bool {
	if p.completed {
		return false
	}
	p.completed = true
	m.completions++
	if p.epoch > 0 {
		m.epochs[p.epoch]--
	}
	p.epoch = -1
	return true
}

func (m *MeterModel) epochNs() int64 { return int64(meterActiveWindow) / meterEpochs }

// Measure implements admission.Meter, as proxy/meter.Event.Measure.
func (m *MeterModel) Measure(_ string, now time.Time) admission.Measurements {
	slotNs := int64(meterWindow)
	t := m.nanos(now)
	start, weighted := t-slotNs, true
	if start < m.created {
		start, weighted = m.created, false
	}
	first, last := start/slotNs, t/slotNs
	oldest := 1.0
	if weighted {
		oldest = float64((first+1)*slotNs-start) / float64(slotNs)
	}
	var (
		h                 [loghist.Buckets]float64
		reqs, errs, timed float64
		out               admission.Measurements
	)
	for sn := first; sn <= last; sn++ {
		sl := &m.slots[sn%meterRing]
		if sl.tag != sn+1 {
			continue
		}
		w := 1.0
		if sn == first {
			w = oldest
		}
		reqs += w * sl.requests
		errs += w * sl.errors
		for b, c := range sl.hist {
			if c != 0 {
				h[b] += w * c
				timed += w * c
			}
		}
	}
	if span := t - start; span > 0 {
		out.RequestRate = reqs / time.Duration(span).Seconds()
	}
	if reqs > 0 {
		out.ErrorRate = min(errs/reqs, 1)
	}
	out.LatencyP50 = loghist.Percentile(&h, timed, 0.50)
	out.LatencyP95 = loghist.Percentile(&h, timed, 0.95)
	out.LatencyMean = loghist.Mean(&h, timed)
	out.Answered = timed
	out.InFlight = max(m.inFlight, 0)
	cur := t/m.epochNs() + 1
	for ep, n := range m.epochs {
		if ep >= cur-meterEpochs && ep <= cur {
			out.Active += n
		}
	}
	out.Active = max(out.Active, 0)
	out.Completions = m.completions - m.reported
	m.reported = m.completions
	return out
}

var _ admission.Meter = (*MeterModel)(nil)
