package admission

// Cluster-wide measurements: every replica measures the origin traffic
// of the visitors it serves, so no single replica's meter sees the room.
// At every tick each replica publishes its Sample of each event to the
// store (Store.PublishSample: one record per replica, replaced at every
// tick, gone after the publication's ttl when the replica dies), and the
// leader's controller decides on the sum of the samples in force
// (Store.Samples, merged by mergeSamples): rates, errors and the latency
// histogram add up, and active visitors are counted once across
// replicas, by a 32-bit key of their visitor id, with their latest
// activity; a visitor with a bar (completed or revoked, on any replica)
// is active nowhere.

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/waitroom/waitroom/internal/loghist"
)

// Sample is one replica's measurements of an event at one tick, as it
// publishes them for the leader (see Store.PublishSample).
type Sample struct {
	// At is when the sample was taken (kept to the millisecond).
	At time.Time
	// Window is the span the window figures (Requests, Errors, Latency)
	// cover, ending at At (kept to the microsecond).
	Window time.Duration
	// Requests is how many requests to the origin ended in the window,
	// Errors how many of them were 5xx or got no answer (fractional
	// where a window weighs its oldest slot in part).
	Requests, Errors float64
	// Latency counts the answered requests of the window by latency
	// (internal/loghist buckets).
	Latency [loghist.Buckets]float64
	// InFlight is the requests in progress at At.
	InFlight int
	// Completions, Minted and Redeemed count, since the replica started,
	// the visitors who completed, the passes minted (status polls that
	// admitted) and the passes first used at the gate, on this replica.
	Completions, Minted, Redeemed uint64
	// Visitors are the active visitors, by VisitorKey, each with when it
	// was last seen (whole seconds before At), in increasing key order;
	// Unlisted counts active visitors the meter cannot name (they are
	// added to the sum as they are).
	Visitors []SeenVisitor
	Unlisted int
	// Joins, ETAKept and ETALate count, since the replica started, the
	// visitors who joined, and the first passes minted to visitors whose
	// join's promised latest time had not passed and had; Defence the
	// bot-defence actions applied, by band (DefenceBands). All are
	// filled in by the engine, for the leader's minute records.
	Joins, ETAKept, ETALate uint64
	Defence                 [len(DefenceBands)]uint64
}

// SeenVisitor is an active visitor in a Sample: its VisitorKey and when
// it was last seen.
type SeenVisitor struct {
	Key  uint32
	Seen time.Time
}

// Sampler is a Meter that also tells who is active, so that the leader
// can count a visitor seen through several replicas once (proxy/meter
// is one). With a Sampler every replica publishes its samples and the
// leader decides on their sum; a Meter that is not one measures the
// leader's own traffic only (the simulator's models, one replica).
type Sampler interface {
	Meter
	// Sample returns the event's sample at now; Minted and Redeemed are
	// filled in by the engine. Completions count from the meter's start.
	Sample(event string, now time.Time) Sample
}

// VisitorKey is the 32-bit key under which replicas publish a visitor's
// activity: two of n active visitors share a key with a chance of about
// n²/2³³ (0.1 at 30,000), which undercounts the room by one.
func VisitorKey(v VisitorID) uint32 {
	return binary.LittleEndian.Uint32(v[0:]) ^ binary.LittleEndian.Uint32(v[4:]) ^
		binary.LittleEndian.Uint32(v[8:]) ^ binary.LittleEndian.Uint32(v[12:])
}

// sampleVersion tags the encoding of a Sample; sampleVersion1 lacks the
// counters of the minute records (Joins, ETAKept, ETALate, Defence),
// which read as 0 from a replica not upgraded yet.
const (
	sampleVersion1 = 1
	sampleVersion  = 2
)

// maxSampleVisitors bounds the visitors of one decoded sample.
const maxSampleVisitors = 1 << 22

// ErrBadSample is the error of a sample record that cannot be read.
var ErrBadSample = errors.New("admission: malformed measurement sample")

// AppendBinary appends the sample's compact encoding to b: a version
// byte, varints for the times and counts (the minute records' counters
// after the others), the non-empty latency buckets
// (index delta and float32 count), and the visitors in key order as
// varint key deltas and seconds since they were seen. Ten thousand
// active visitors take about 40 KB. Visitors must be in increasing key
// order (Sample sorts them).
func (s *Sample) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, sampleVersion)
	b = binary.AppendUvarint(b, uint64(max(s.At.UnixMilli(), 0)))
	b = binary.AppendUvarint(b, uint64(max(s.Window.Microseconds(), 0)))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(nonNeg(s.Requests)))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(nonNeg(s.Errors)))
	for _, n := range []uint64{uint64(max(s.InFlight, 0)), s.Completions, s.Minted, s.Redeemed, uint64(max(s.Unlisted, 0))} {
		b = binary.AppendUvarint(b, n)
	}
	b = binary.AppendUvarint(b, s.Joins)
	b = binary.AppendUvarint(b, s.ETAKept)
	b = binary.AppendUvarint(b, s.ETALate)
	for _, n := range s.Defence {
		b = binary.AppendUvarint(b, n)
	}
	nz := 0
	for _, c := range s.Latency {
		if c > 0 {
			nz++
		}
	}
	b = binary.AppendUvarint(b, uint64(nz))
	prev := -1
	for i, c := range s.Latency {
		if c > 0 {
			b = binary.AppendUvarint(b, uint64(i-prev))
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(c)))
			prev = i
		}
	}
	b = binary.AppendUvarint(b, uint64(len(s.Visitors)))
	var last uint64
	for i, v := range s.Visitors {
		if i > 0 && uint64(v.Key) <= last {
			return nil, errors.New("admission: sample visitors out of key order")
		}
		b = binary.AppendUvarint(b, uint64(v.Key)-last)
		last = uint64(v.Key)
		age := s.At.Sub(v.Seen) / time.Second
		b = binary.AppendUvarint(b, uint64(max(age, 0)))
	}
	return b, nil
}

func nonNeg(f float64) float64 {
	if !(f > 0) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// UnmarshalBinary reads what AppendBinary wrote; anything else is
// ErrBadSample.
func (s *Sample) UnmarshalBinary(b []byte) error {
	*s = Sample{}
	r := sampleReader{b: b}
	v := r.byte()
	if v != sampleVersion && v != sampleVersion1 {
		return ErrBadSample
	}
	at := r.uvarint()
	s.Window = time.Duration(min(r.uvarint(), math.MaxInt64/1000)) * time.Microsecond
	s.Requests, s.Errors = r.float64(), r.float64()
	s.InFlight = int(min(r.uvarint(), math.MaxInt32))
	s.Completions, s.Minted, s.Redeemed = r.uvarint(), r.uvarint(), r.uvarint()
	s.Unlisted = int(min(r.uvarint(), math.MaxInt32))
	if v >= sampleVersion {
		s.Joins, s.ETAKept, s.ETALate = r.uvarint(), r.uvarint(), r.uvarint()
		for i := range s.Defence {
			s.Defence[i] = r.uvarint()
		}
	}
	if at > math.MaxInt64 {
		return ErrBadSample
	}
	s.At = time.UnixMilli(int64(at)).UTC()
	nz := r.uvarint()
	if nz > loghist.Buckets {
		return ErrBadSample
	}
	i := -1
	for range nz {
		d := r.uvarint()
		if d == 0 || d > loghist.Buckets {
			return ErrBadSample
		}
		i += int(d)
		if i >= loghist.Buckets {
			return ErrBadSample
		}
		s.Latency[i] = float64(math.Float32frombits(r.uint32()))
	}
	n := r.uvarint()
	if n > maxSampleVisitors || n > uint64(len(r.b)) {
		return ErrBadSample
	}
	if n > 0 {
		s.Visitors = make([]SeenVisitor, 0, n)
	}
	var key uint64
	for j := range n {
		d := r.uvarint()
		if j > 0 && d == 0 {
			return ErrBadSample
		}
		key += d
		if key > math.MaxUint32 {
			return ErrBadSample
		}
		age := min(r.uvarint(), 1<<31)
		s.Visitors = append(s.Visitors, SeenVisitor{Key: uint32(key), Seen: s.At.Add(-time.Duration(age) * time.Second)})
	}
	if r.bad || len(r.b) != 0 {
		return ErrBadSample
	}
	for _, f := range []float64{s.Requests, s.Errors} {
		if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return ErrBadSample
		}
	}
	for _, c := range s.Latency {
		if math.IsNaN(c) || math.IsInf(c, 0) || c < 0 {
			return ErrBadSample
		}
	}
	return nil
}

// sampleReader reads a sample's fields, noting a short or bad input.
type sampleReader struct {
	b   []byte
	bad bool
}

func (r *sampleReader) byte() byte {
	if len(r.b) < 1 {
		r.bad = true
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *sampleReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *sampleReader) uint32() uint32 {
	if len(r.b) < 4 {
		r.bad, r.b = true, nil
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *sampleReader) float64() float64 {
	if len(r.b) < 8 {
		r.bad, r.b = true, nil
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v
}

// SortVisitors puts s.Visitors in increasing key order, keeping the
// latest Seen of a key listed twice.
func (s *Sample) SortVisitors() {
	slices.SortFunc(s.Visitors, func(a, b SeenVisitor) int {
		switch {
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return b.Seen.Compare(a.Seen) // the latest first: Compact keeps it
	})
	s.Visitors = slices.CompactFunc(s.Visitors, func(a, b SeenVisitor) bool { return a.Key == b.Key })
}

// clusterFigures is the merge of the samples in force at a tick.
type clusterFigures struct {
	m                 Measurements
	replicas          int
	minted, redeemed  uint64
	visitors, dropped int // distinct active visitors listed; of them, barred
	// For the minute records: each replica's counters, and the origin's
	// errors and answered requests by latency bucket per second (each
	// sample's window figures over its window), summed.
	counters map[string]replicaCounters
	errRate  float64
	latRate  [loghist.Buckets]float64
}

// mergeSamples sums the samples of every replica (see the comment at
// the top of the file). barred holds the keys of barred visitors;
// completions are the deltas of each replica's count since last (which
// it updates; a replica seen for the first time counts none).
func mergeSamples(samples map[string]Sample, barred map[uint32]bool, last map[string]uint64) clusterFigures {
	var (
		h                [loghist.Buckets]float64
		f                clusterFigures
		reqs, errs, rate float64
		timed            float64
	)
	seen := make(map[uint32]time.Time)
	f.counters = make(map[string]replicaCounters, len(samples))
	for name, s := range samples {
		f.replicas++
		if w := s.Window.Seconds(); w > 0 {
			rate += s.Requests / w
		}
		reqs += s.Requests
		errs += s.Errors
		for i, c := range s.Latency {
			h[i] += c
			timed += c
		}
		if w := s.Window.Seconds(); w > 0 {
			f.errRate += s.Errors / w
			for i, c := range s.Latency {
				f.latRate[i] += c / w
			}
		}
		f.counters[name] = countersOf(&s)
		f.m.InFlight += s.InFlight
		f.m.Active += s.Unlisted
		f.minted += s.Minted
		f.redeemed += s.Redeemed
		if prev, ok := last[name]; ok && s.Completions >= prev {
			f.m.Completions += int(min(s.Completions-prev, math.MaxInt32))
		}
		last[name] = s.Completions
		for _, v := range s.Visitors {
			if t, ok := seen[v.Key]; !ok || v.Seen.After(t) {
				seen[v.Key] = v.Seen
			}
		}
	}
	for name := range last {
		if _, ok := samples[name]; !ok {
			delete(last, name)
		}
	}
	for k := range seen {
		if barred[k] {
			f.dropped++
		}
	}
	f.visitors = len(seen) - f.dropped
	f.m.Active += f.visitors
	f.m.RequestRate = rate
	if reqs > 0 {
		f.m.ErrorRate = min(errs/reqs, 1)
	}
	f.m.LatencyP50 = loghist.Percentile(&h, timed, 0.50)
	f.m.LatencyP95 = loghist.Percentile(&h, timed, 0.95)
	f.m.LatencyP99 = loghist.Percentile(&h, timed, 0.99)
	f.m.LatencyMean = loghist.Mean(&h, timed)
	f.m.Answered = timed
	return f
}
