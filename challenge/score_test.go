package challenge

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// scoreFixed is a signal with a fixed answer.
type scoreFixed struct {
	f   Finding
	err error
}

func (s scoreFixed) Check(context.Context, *Request) (Finding, error) { return s.f, s.err }

// scoreSleep answers after d, or when ctx is done if it honours ctx.
type scoreSleep struct {
	d          time.Duration
	honoursCtx bool
	f          Finding
}

func (s scoreSleep) Check(ctx context.Context, _ *Request) (Finding, error) {
	if !s.honoursCtx {
		time.Sleep(s.d)
		return s.f, nil
	}
	select {
	case <-time.After(s.d):
		return s.f, nil
	case <-ctx.Done():
		return Finding{}, ctx.Err()
	}
}

type scorePanic struct{}

func (scorePanic) Check(context.Context, *Request) (Finding, error) { panic("boom") }

// scoreErrors records OnError calls.
type scoreErrors struct {
	mu   sync.Mutex
	errs map[string]error
}

func (e *scoreErrors) on(name string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.errs == nil {
		e.errs = map[string]error{}
	}
	e.errs[name] = err
}

func (e *scoreErrors) get() map[string]error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.errs
}

func TestScorerScore(t *testing.T) {
	sus := func(s float64, reason string) Signal { return scoreFixed{f: Finding{Suspicion: s, Reason: reason}} }
	tests := []struct {
		name    string
		signals []WeightedSignal
		want    Result
		failed  []string
	}{
		{"none", nil, Result{Score: 0, Reasons: []Reason{}}, nil},
		{"all clean", []WeightedSignal{{Name: "a", Weight: 60, Signal: sus(0, "")}, {Name: "b", Weight: 40, Signal: sus(0, "")}},
			Result{Score: 0, Reasons: []Reason{}}, nil},
		{"weighted sum, largest first", []WeightedSignal{
			{Name: "headers", Weight: 60, Signal: sus(0.5, "missing_accept_language")},
			{Name: "rate", Weight: 40, Signal: sus(1, "rate_ip")},
			{Name: "ja4", Weight: 30, Signal: sus(0, "")},
		}, Result{Score: 70, Reasons: []Reason{{"rate", "rate_ip", 40}, {"headers", "missing_accept_language", 30}}}, nil},
		{"capped at 100", []WeightedSignal{
			{Name: "a", Weight: 80, Signal: sus(1, "x")}, {Name: "b", Weight: 80, Signal: sus(1, "y")},
		}, Result{Score: 100, Reasons: []Reason{{"a", "x", 80}, {"b", "y", 80}}}, nil},
		{"rounded sum, not sum of rounded", []WeightedSignal{
			{Name: "a", Weight: 1, Signal: sus(0.4, "x")}, {Name: "b", Weight: 1, Signal: sus(0.4, "y")},
		}, Result{Score: 1, Reasons: []Reason{{"a", "x", 0}, {"b", "y", 0}}}, nil},
		{"zero weight adds nothing", []WeightedSignal{{Name: "a", Weight: 0, Signal: sus(1, "x")}},
			Result{Score: 0, Reasons: []Reason{}}, nil},
		{"error counts zero", []WeightedSignal{
			{Name: "bad", Weight: 50, Signal: scoreFixed{f: Finding{Suspicion: 1, Reason: "x"}, err: errors.New("down")}},
			{Name: "good", Weight: 20, Signal: sus(1, "y")},
		}, Result{Score: 20, Reasons: []Reason{{"good", "y", 20}}, Failed: 1}, []string{"bad"}},
		{"panic counts zero", []WeightedSignal{{Name: "p", Weight: 50, Signal: scorePanic{}}},
			Result{Score: 0, Reasons: []Reason{}, Failed: 1}, []string{"p"}},
		{"slow panic counts zero", []WeightedSignal{{Name: "p", Weight: 50, Signal: scorePanic{}, Slow: true}},
			Result{Score: 0, Reasons: []Reason{}, Failed: 1}, []string{"p"}},
		{"suspicion over 1 is broken", []WeightedSignal{{Name: "a", Weight: 50, Signal: sus(1.5, "x")}},
			Result{Score: 0, Reasons: []Reason{}, Failed: 1}, []string{"a"}},
		{"NaN is broken", []WeightedSignal{{Name: "a", Weight: 50, Signal: sus(math.NaN(), "x")}},
			Result{Score: 0, Reasons: []Reason{}, Failed: 1}, []string{"a"}},
		{"negative is broken", []WeightedSignal{{Name: "a", Weight: 50, Signal: sus(-0.1, "x")}},
			Result{Score: 0, Reasons: []Reason{}, Failed: 1}, []string{"a"}},
		{"slow and fast mixed", []WeightedSignal{
			{Name: "ext1", Weight: 30, Signal: scoreSleep{d: 10 * time.Millisecond, honoursCtx: true, f: Finding{1, "ext"}}, Slow: true},
			{Name: "fast", Weight: 20, Signal: sus(1, "f")},
			{Name: "ext2", Weight: 40, Signal: scoreSleep{d: 5 * time.Millisecond, honoursCtx: true, f: Finding{0.5, "ext"}}, Slow: true},
		}, Result{Score: 70, Reasons: []Reason{{"ext1", "ext", 30}, {"fast", "f", 20}, {"ext2", "ext", 20}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec scoreErrors
			s, err := NewScorer(tt.signals, ScorerOptions{OnError: rec.on})
			if err != nil {
				t.Fatal(err)
			}
			got := s.Score(context.Background(), &Request{})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Score() = %+v, want %+v", got, tt.want)
			}
			errs := rec.get()
			if len(errs) != len(tt.failed) {
				t.Errorf("OnError got %v, want calls for %v", errs, tt.failed)
			}
			for _, n := range tt.failed {
				if errs[n] == nil {
					t.Errorf("no OnError for %q", n)
				}
			}
		})
	}
}

func TestScorerErrorKinds(t *testing.T) {
	var rec scoreErrors
	s, err := NewScorer([]WeightedSignal{
		{Name: "panic", Weight: 10, Signal: scorePanic{}},
		{Name: "nan", Weight: 10, Signal: scoreFixed{f: Finding{Suspicion: math.NaN()}}},
	}, ScorerOptions{OnError: rec.on})
	if err != nil {
		t.Fatal(err)
	}
	s.Score(context.Background(), &Request{})
	errs := rec.get()
	if !errors.Is(errs["panic"], ErrSignalPanicked) {
		t.Errorf("panic: %v, want ErrSignalPanicked", errs["panic"])
	}
	if !errors.Is(errs["nan"], ErrBadFinding) {
		t.Errorf("nan: %v, want ErrBadFinding", errs["nan"])
	}
}

// Two slow signals overlap: the score takes about the slower one's time,
// not the sum.
func TestScorerSlowSignalsRunConcurrently(t *testing.T) {
	const d = 150 * time.Millisecond
	s, err := NewScorer([]WeightedSignal{
		{Name: "a", Weight: 10, Signal: scoreSleep{d: d, f: Finding{1, "a"}}, Slow: true},
		{Name: "b", Weight: 10, Signal: scoreSleep{d: d, f: Finding{1, "b"}}, Slow: true},
		{Name: "c", Weight: 10, Signal: scoreSleep{d: d, f: Finding{1, "c"}}, Slow: true},
	}, ScorerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := s.Score(context.Background(), &Request{})
	if el := time.Since(start); el >= 2*d {
		t.Errorf("Score took %v for three %v signals: they did not overlap", el, d)
	}
	if got.Score != 30 {
		t.Errorf("Score = %d, want 30", got.Score)
	}
}

// A slow signal that ignores its context cannot hold Score past the
// deadline; it counts 0 and is reported.
func TestScorerBoundedByContext(t *testing.T) {
	for _, slow := range []int{1, 2} {
		t.Run(strings.Repeat("slow", slow), func(t *testing.T) {
			sigs := []WeightedSignal{{Name: "fast", Weight: 25, Signal: scoreFixed{f: Finding{1, "f"}}}}
			for i := 0; i < slow; i++ {
				sigs = append(sigs, WeightedSignal{
					Name: string(rune('a' + i)), Weight: 50, Slow: true,
					Signal: scoreSleep{d: 2 * time.Second, f: Finding{1, "late"}},
				})
			}
			var rec scoreErrors
			s, err := NewScorer(sigs, ScorerOptions{OnError: rec.on})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			start := time.Now()
			got := s.Score(ctx, &Request{})
			if el := time.Since(start); el > time.Second {
				t.Fatalf("Score took %v past a 50ms deadline", el)
			}
			want := Result{Score: 25, Reasons: []Reason{{"fast", "f", 25}}, Failed: slow}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Score() = %+v, want %+v", got, want)
			}
			for n, err := range rec.get() {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("%s: error %v, want the deadline", n, err)
				}
			}
		})
	}
}

// Scoring is safe for concurrent use.
func TestScorerConcurrent(t *testing.T) {
	s, err := NewScorer([]WeightedSignal{
		{Name: "a", Weight: 40, Signal: scoreFixed{f: Finding{0.5, "a"}}},
		{Name: "b", Weight: 40, Signal: scoreSleep{d: time.Millisecond, honoursCtx: true, f: Finding{1, "b"}}, Slow: true},
		{Name: "c", Weight: 20, Signal: scoreSleep{d: time.Millisecond, honoursCtx: true, f: Finding{1, "c"}}, Slow: true},
	}, ScorerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 50 {
				if got := s.Score(context.Background(), &Request{}); got.Score != 80 {
					t.Errorf("Score = %d, want 80", got.Score)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestNewScorerInvalid(t *testing.T) {
	ok := scoreFixed{}
	tests := []struct {
		name    string
		signals []WeightedSignal
		want    []string
	}{
		{"no name", []WeightedSignal{{Weight: 1, Signal: ok}}, []string{"signal 0 has no name"}},
		{"duplicate", []WeightedSignal{{Name: "a", Signal: ok}, {Name: "a", Signal: ok}}, []string{`"a" is used twice`}},
		{"weight", []WeightedSignal{{Name: "a", Weight: 101, Signal: ok}, {Name: "b", Weight: -1, Signal: ok}, {Name: "c", Weight: math.NaN(), Signal: ok}},
			[]string{`"a": weight 101`, `"b": weight -1`, `"c": weight NaN`}},
		{"nil", []WeightedSignal{{Name: "a"}}, []string{`"a" is nil`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewScorer(tt.signals, ScorerOptions{})
			if !errors.Is(err, ErrInvalidScorer) {
				t.Fatalf("NewScorer = %v, want ErrInvalidScorer", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}
