package admission

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/loghist"
)

var sampleAt = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func testSample() Sample {
	s := Sample{At: sampleAt, Window: time.Second, Requests: 120.5, Errors: 3.25, InFlight: 7,
		Completions: 42, Minted: 100, Redeemed: 90, Unlisted: 2, Joins: 300, ETAKept: 80, ETALate: 20,
		Defence: [len(DefenceBands)]uint64{250, 30, 12, 5, 3}}
	s.Latency[loghist.Bucket(20_000)] = 100
	s.Latency[loghist.Bucket(300_000)] = 17.5
	s.Latency[0] = 1
	s.Latency[loghist.Buckets-1] = 2
	s.Visitors = []SeenVisitor{{Key: 5, Seen: sampleAt.Add(-3 * time.Second)}, {Key: 1, Seen: sampleAt},
		{Key: math.MaxUint32, Seen: sampleAt.Add(-59 * time.Second)}, {Key: 5, Seen: sampleAt.Add(-time.Second)}}
	s.SortVisitors()
	return s
}

// TestSampleRoundTrip: what AppendBinary writes UnmarshalBinary reads
// back (times to the second of the visitors' activity), and its size is
// what the docs say: about 4 bytes a visitor.
func TestSampleRoundTrip(t *testing.T) {
	s := testSample()
	if len(s.Visitors) != 3 || s.Visitors[1].Key != 5 || !s.Visitors[1].Seen.Equal(sampleAt.Add(-time.Second)) {
		t.Fatalf("SortVisitors kept %+v; want keys 1, 5 (its latest), MaxUint32", s.Visitors)
	}
	b, err := s.AppendBinary([]byte("prefix"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("prefix")) {
		t.Fatal("AppendBinary did not append")
	}
	var got Sample
	if err := got.UnmarshalBinary(b[len("prefix"):]); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, s)
	}
	// 10,000 visitors spread over the keys, seen within a minute.
	big := Sample{At: sampleAt}
	for i := range 10_000 {
		big.Visitors = append(big.Visitors, SeenVisitor{Key: uint32(i) * 429_497, Seen: sampleAt.Add(-time.Duration(i%60) * time.Second)})
	}
	b, _ = big.AppendBinary(nil)
	if len(b) > 45_000 {
		t.Errorf("10,000 visitors take %d bytes, want about 40 KB", len(b))
	}
	if err := got.UnmarshalBinary(b); err != nil || len(got.Visitors) != 10_000 {
		t.Fatalf("10,000 visitors: %d back, %v", len(got.Visitors), err)
	}
}

// TestSampleRefused: keys out of order are not written; truncated,
// extended or inconsistent records are ErrBadSample.
func TestSampleRefused(t *testing.T) {
	s := testSample()
	s.Visitors[0], s.Visitors[1] = s.Visitors[1], s.Visitors[0]
	if _, err := s.AppendBinary(nil); err == nil {
		t.Fatal("AppendBinary took visitors out of key order")
	}
	gs := testSample()
	good, _ := gs.AppendBinary(nil)
	bad := map[string][]byte{
		"empty":         nil,
		"version":       append([]byte{9}, good[1:]...),
		"trailing":      append(append([]byte{}, good...), 0),
		"bucket beyond": {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0x7f},
		"nan requests":  {1, 0, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	}
	for i := 1; i < len(good); i++ {
		bad["truncated"] = good[:i]
		var got Sample
		if err := got.UnmarshalBinary(good[:i]); !errors.Is(err, ErrBadSample) {
			t.Fatalf("truncated to %d bytes: %v", i, err)
		}
	}
	for name, b := range bad {
		var got Sample
		if err := got.UnmarshalBinary(b); !errors.Is(err, ErrBadSample) {
			t.Errorf("%s: %v, want ErrBadSample", name, err)
		}
	}
}

// FuzzSampleRecord: any record either fails with ErrBadSample or reads
// into a sample that encodes to a record reading back the same.
func FuzzSampleRecord(f *testing.F) {
	gs := testSample()
	good, _ := gs.AppendBinary(nil)
	f.Add(good)
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		var s Sample
		if err := s.UnmarshalBinary(b); err != nil {
			if !errors.Is(err, ErrBadSample) {
				t.Fatalf("error %v is not ErrBadSample", err)
			}
			return
		}
		out, err := s.AppendBinary(nil)
		if err != nil {
			t.Fatalf("a sample read could not be written: %v", err)
		}
		var again Sample
		if err := again.UnmarshalBinary(out); err != nil {
			t.Fatalf("rewritten record refused: %v", err)
		}
		if len(again.Visitors) != len(s.Visitors) || again.Completions != s.Completions || again.Requests != s.Requests {
			t.Fatalf("rewritten record differs: %+v vs %+v", again, s)
		}
	})
}

// TestMergeSamples: rates, errors, histograms and in-flight requests add
// up; a visitor seen through two replicas counts once, one barred
// (completed elsewhere) nowhere, and unlisted ones as they are;
// completions are each replica's new ones since the last merge.
func TestMergeSamples(t *testing.T) {
	a := Sample{At: sampleAt, Window: time.Second, Requests: 100, Errors: 1, InFlight: 3, Completions: 10, Minted: 5, Redeemed: 4,
		Visitors: []SeenVisitor{{Key: 1, Seen: sampleAt}, {Key: 2, Seen: sampleAt.Add(-30 * time.Second)}, {Key: 3, Seen: sampleAt}}}
	b := Sample{At: sampleAt, Window: 2 * time.Second, Requests: 100, Errors: 3, InFlight: 2, Completions: 7, Minted: 1, Redeemed: 1,
		Visitors: []SeenVisitor{{Key: 2, Seen: sampleAt}, {Key: 4, Seen: sampleAt}}, Unlisted: 5}
	a.Latency[loghist.Bucket(10_000)] = 90
	b.Latency[loghist.Bucket(10_000)] = 5
	b.Latency[loghist.Bucket(1_000_000)] = 10
	last := map[string]uint64{"a": 4, "gone": 1}
	f := mergeSamples(map[string]Sample{"a": a, "b": b}, map[uint32]bool{3: true, 9: true}, last)
	m := f.m
	if f.replicas != 2 || m.RequestRate != 150 || m.ErrorRate != 0.02 || m.InFlight != 5 || m.Answered != 105 {
		t.Errorf("sums: %+v (%d replicas)", m, f.replicas)
	}
	// Keys 1, 2 (both replicas), 4; 3 is barred; 5 unlisted.
	if m.Active != 3+5 || f.visitors != 3 || f.dropped != 1 {
		t.Errorf("active %d (listed %d, barred %d), want 8 (3 listed, 1 barred)", m.Active, f.visitors, f.dropped)
	}
	if m.LatencyP50 > 12*time.Millisecond || m.LatencyP95 < 500*time.Millisecond || m.LatencyP99 < m.LatencyP95 {
		t.Errorf("percentiles of the summed histogram: p50 %v, p95 %v, p99 %v", m.LatencyP50, m.LatencyP95, m.LatencyP99)
	}
	// a had 4 at the last merge; b is new (its completions since it
	// started are not this tick's); "gone" is forgotten.
	if m.Completions != 6 || !reflect.DeepEqual(last, map[string]uint64{"a": 10, "b": 7}) {
		t.Errorf("completions %d, last %v", m.Completions, last)
	}
	if f.minted != 6 || f.redeemed != 5 {
		t.Errorf("minted %d, redeemed %d", f.minted, f.redeemed)
	}
	a.Completions = 13
	if f := mergeSamples(map[string]Sample{"a": a, "b": b}, nil, last); f.m.Completions != 3 {
		t.Errorf("completions at the next merge: %d, want 3", f.m.Completions)
	}
}

// TestSampleVersion1: a replica not upgraded yet publishes version 1,
// without the minute records' counters: the leader reads its sample,
// those counters 0.
func TestSampleVersion1(t *testing.T) {
	s := testSample()
	s.Joins, s.ETAKept, s.ETALate, s.Defence = 0, 0, 0, [len(DefenceBands)]uint64{}
	b, err := s.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	// Version 1 is version 2 without the eight varints (each one byte
	// here, all 0) after the five counts.
	head := 1 + uvarintLen(uint64(s.At.UnixMilli())) + uvarintLen(uint64(s.Window.Microseconds())) + 16
	for _, n := range []uint64{uint64(s.InFlight), s.Completions, s.Minted, s.Redeemed, uint64(s.Unlisted)} {
		head += uvarintLen(n)
	}
	if !bytes.Equal(b[head:head+8], make([]byte, 8)) {
		t.Fatalf("the new counters are not where the test expects them: % x", b[head:head+8])
	}
	v1 := append([]byte{sampleVersion1}, b[1:head]...)
	v1 = append(v1, b[head+8:]...)
	var got Sample
	if err := got.UnmarshalBinary(v1); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("version 1:\n got %+v\nwant %+v", got, s)
	}
	v1[0] = 3
	if err := got.UnmarshalBinary(v1); !errors.Is(err, ErrBadSample) {
		t.Fatalf("version 3: %v, want ErrBadSample", err)
	}
}

func uvarintLen(n uint64) int { return len(binary.AppendUvarint(nil, n)) }
