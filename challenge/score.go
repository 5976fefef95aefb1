package challenge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
)

// MaxScore is the highest risk score.
const MaxScore = 100

// ErrInvalidScorer is returned (wrapped) by NewScorer for a signal set it
// cannot score with.
var ErrInvalidScorer = errors.New("challenge: invalid scorer")

// ErrSignalPanicked is reported (wrapped) for a signal whose Check
// panicked; the signal counts 0 for that request.
var ErrSignalPanicked = errors.New("challenge: signal panicked")

// ErrBadFinding is reported (wrapped) for a signal that returned a
// suspicion outside 0..1 (or NaN); the signal counts 0 for that request.
var ErrBadFinding = errors.New("challenge: signal returned an invalid suspicion")

// WeightedSignal is one signal of a Scorer.
type WeightedSignal struct {
	// Name of the signal in reasons, logs and metrics ("headers",
	// "rate"); unique within a Scorer.
	Name string
	// Score points the signal adds at full suspicion, 0 to 100.
	Weight float64
	// The signal.
	Signal Signal
	// Slow marks a signal that waits on something outside the process (an
	// external scorer over HTTP). Slow signals run in goroutines of their
	// own while the fast ones run in the calling goroutine, and Score
	// stops waiting for them when its ctx is done.
	Slow bool
}

// ScorerOptions are the optional settings of a Scorer.
type ScorerOptions struct {
	// OnError is called (from the goroutine that calls Score) for every
	// signal that could not judge a request: it returned an error, ran
	// past the context, panicked or returned an invalid suspicion. It
	// must be safe for concurrent use. Nil: only Log.
	OnError func(signal string, err error)
	// Log gets a debug record for each such error. Nil: no logging.
	Log *slog.Logger
}

// Reason is one signal's contribution to a score.
type Reason struct {
	// Signal is the WeightedSignal's name.
	Signal string `json:"signal"`
	// Reason is the signal's Finding.Reason.
	Reason string `json:"reason"`
	// Points is the contribution, weight × suspicion, rounded; it can be
	// 0 for a contribution under half a point.
	Points int `json:"points"`
}

// Result is the risk score of one request.
type Result struct {
	// Score from 0 to 100: the rounded sum of every signal's weight ×
	// suspicion, at most 100.
	Score int `json:"score"`
	// Reasons are the non-zero contributions, the largest first (ties in
	// the order the signals were configured).
	Reasons []Reason `json:"reasons,omitempty"`
	// Failed counts the signals that could not judge the request and
	// counted 0 (see ScorerOptions.OnError): a low score with failures
	// is a weaker statement than one without.
	Failed int `json:"failed,omitempty"`
}

// Scorer combines weighted signals into a risk score. It is immutable
// after NewScorer and safe for concurrent use.
type Scorer struct {
	fast, slow []scorerSignal
	n          int
	onError    func(string, error)
	log        *slog.Logger
}

// scorerSignal is a WeightedSignal and its place in the configuration.
type scorerSignal struct {
	WeightedSignal
	pos int
}

// NewScorer returns a Scorer over signals. Names must be non-empty and
// unique, weights 0 to 100 and signals non-nil; otherwise the error wraps
// ErrInvalidScorer and lists every problem.
func NewScorer(signals []WeightedSignal, opts ScorerOptions) (*Scorer, error) {
	var errs []error
	seen := make(map[string]bool, len(signals))
	s := &Scorer{n: len(signals), onError: opts.OnError, log: opts.Log}
	for i, ws := range signals {
		switch {
		case ws.Name == "":
			errs = append(errs, fmt.Errorf("%w: signal %d has no name", ErrInvalidScorer, i))
		case seen[ws.Name]:
			errs = append(errs, fmt.Errorf("%w: signal name %q is used twice", ErrInvalidScorer, ws.Name))
		}
		seen[ws.Name] = true
		if !(ws.Weight >= 0 && ws.Weight <= MaxScore) {
			errs = append(errs, fmt.Errorf("%w: signal %q: weight %v is not 0 to 100", ErrInvalidScorer, ws.Name, ws.Weight))
		}
		if ws.Signal == nil {
			errs = append(errs, fmt.Errorf("%w: signal %q is nil", ErrInvalidScorer, ws.Name))
		}
		if ws.Slow {
			s.slow = append(s.slow, scorerSignal{ws, i})
		} else {
			s.fast = append(s.fast, scorerSignal{ws, i})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// Slow reports whether the scorer has slow signals, which Score runs in
// goroutines of their own and waits for until its context is done: a
// scorer without them never waits, and needs no deadline.
func (s *Scorer) Slow() bool { return len(s.slow) > 0 }

// Score runs every signal on r and sums their weighted findings. Fast
// signals run one after the other in the calling goroutine; slow ones run
// each in a goroutine of its own, started first, so they overlap with the
// fast ones and with each other. Score returns when every signal has
// answered or ctx is done, whichever is first: a slow signal still
// running then counts 0 and is reported as failed with ctx's error (its
// goroutine ends when the signal returns). A signal that fails counts 0.
func (s *Scorer) Score(ctx context.Context, r *Request) Result {
	var (
		sum   float64
		res   Result
		found = make([]scoredReason, 0, s.n)
	)
	add := func(ss *scorerSignal, f Finding, err error) {
		f, err = sanitizeFinding(f, err)
		if err != nil {
			res.Failed++
			s.report(ss.Name, err)
		}
		c := ss.Weight * f.Suspicion
		if c > 0 {
			sum += c
			found = append(found, scoredReason{Reason{Signal: ss.Name, Reason: f.Reason, Points: int(math.Round(c))}, ss.pos})
		}
	}

	var results chan slowResult
	if len(s.slow) > 0 {
		// Buffered so that a signal answering after Score gave up never
		// blocks its goroutine.
		results = make(chan slowResult, len(s.slow))
		for i := range s.slow {
			go func() {
				f, err := runSignal(ctx, s.slow[i].Signal, r)
				results <- slowResult{i, f, err}
			}()
		}
	}
	for i := range s.fast {
		f, err := runSignal(ctx, s.fast[i].Signal, r)
		add(&s.fast[i], f, err)
	}
	if len(s.slow) > 0 {
		done := make([]bool, len(s.slow))
	wait:
		for range s.slow {
			select {
			case sr := <-results:
				done[sr.i] = true
				add(&s.slow[sr.i], sr.f, sr.err)
			case <-ctx.Done():
				// Take the answers that are in; the rest are late.
				for drained := false; !drained; {
					select {
					case sr := <-results:
						done[sr.i] = true
						add(&s.slow[sr.i], sr.f, sr.err)
					default:
						drained = true
					}
				}
				for i := range s.slow {
					if !done[i] {
						add(&s.slow[i], Finding{}, fmt.Errorf("challenge: signal did not answer in time: %w", context.Cause(ctx)))
					}
				}
				break wait
			}
		}
	}

	res.Score = int(math.Round(math.Min(sum, MaxScore)))
	slices.SortFunc(found, func(a, b scoredReason) int {
		if a.Points != b.Points {
			return b.Points - a.Points
		}
		return a.pos - b.pos
	})
	res.Reasons = make([]Reason, len(found))
	for i := range found {
		res.Reasons[i] = found[i].Reason
	}
	return res
}

type scoredReason struct {
	Reason
	pos int
}

type slowResult struct {
	i   int
	f   Finding
	err error
}

// runSignal runs one signal, turning a panic into an error.
func runSignal(ctx context.Context, sig Signal, r *Request) (f Finding, err error) {
	defer func() {
		if p := recover(); p != nil {
			f, err = Finding{}, fmt.Errorf("%w: %v", ErrSignalPanicked, p)
		}
	}()
	return sig.Check(ctx, r)
}

// sanitizeFinding applies the Signal contract: an error means no judgement, and
// a suspicion outside 0..1 is a broken signal.
func sanitizeFinding(f Finding, err error) (Finding, error) {
	if err != nil {
		return Finding{}, err
	}
	if !(f.Suspicion >= 0 && f.Suspicion <= 1) {
		return Finding{}, fmt.Errorf("%w: %v (reason %q)", ErrBadFinding, f.Suspicion, f.Reason)
	}
	return f, nil
}

func (s *Scorer) report(name string, err error) {
	if s.onError != nil {
		s.onError(name, err)
	}
	if s.log != nil {
		s.log.Debug("risk signal failed", "signal", name, "err", err)
	}
}
