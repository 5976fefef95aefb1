package challenge

import (
	"errors"
	"fmt"
)

// Action is what the waiting room does with a join, picked from the risk
// score by Bands.
type Action string

// The actions, from the mildest to the harshest.
const (
	// ActionLightPoW asks the light proof of work: every join gets at
	// least this, so that joining costs something.
	ActionLightPoW Action = "light_pow"
	// ActionHeavyPoW asks the heavy proof of work.
	ActionHeavyPoW Action = "heavy_pow"
	// ActionCaptcha asks a CAPTCHA (the caller falls back to the heavy
	// proof of work when the event has no provider).
	ActionCaptcha Action = "captcha"
	// ActionShadow lets the join succeed into a shadow queue: the visitor
	// waits like everyone else but is never admitted.
	ActionShadow Action = "shadow"
	// ActionBlock refuses the join (403).
	ActionBlock Action = "block"
)

// Valid reports whether a is one of the actions above.
func (a Action) Valid() bool {
	switch a {
	case ActionLightPoW, ActionHeavyPoW, ActionCaptcha, ActionShadow, ActionBlock:
		return true
	}
	return false
}

// Default band thresholds. They are read against the default signal set
// (headers 60, rate 40, ja4 30, consistency 40, client 30 score points at
// full suspicion):
//
//   - DefaultHeavyPoW 30: about half the headers signal, such as a
//     Chromium user agent without client hints (0.8 × 60 = 48) or a
//     missing Accept-Language (0.5 × 60 = 30), or a visitor three
//     quarters of the way from the soft to the hard per-IP rate limit
//     (0.75 × 40 = 30). One odd trait costs a visitor seconds of CPU,
//     nothing more: the heavy proof of work is the cheap doubt.
//   - DefaultCaptcha 60: a declared automation tool or headless browser
//     (1 × 60) alone reaches it, as does a tool's TLS fingerprint under a
//     browser's User-Agent (ja4 30 + consistency 40), or two independent
//     signals at about half strength together. A person who trips it can
//     still get through.
//   - DefaultShadow 80: needs strong evidence from two signals, such as a
//     tool user agent and a rate halfway to the hard limit (60 + 20). The
//     shadow queue is silent, so it is kept for requests no person makes.
//   - DefaultBlock 95: a declared tool at the hard rate limit (60 + 40),
//     or an operator's known-bad list with a high weight. A block tells
//     the client it was caught, so it is the last resort: the shadow
//     queue wastes a bot's time better.
const (
	DefaultHeavyPoW = 30
	DefaultCaptcha  = 60
	DefaultShadow   = 80
	DefaultBlock    = 95
)

// ErrInvalidBands is returned (wrapped) by Bands.Validate.
var ErrInvalidBands = errors.New("challenge: invalid bands")

// Bands are the score thresholds of the actions. A score at or above a
// band's threshold gets that band's action, the highest band reached
// winning: score ≥ Block blocks, else ≥ Shadow shadows, else ≥ Captcha
// asks a CAPTCHA, else ≥ HeavyPoW asks the heavy proof of work, else the
// light proof of work.
//
// A threshold of 0 (or less), or above 100, disables its band: no score
// (which is 0 to 100) reaches it, and a score that would have reached it
// falls to the next lower enabled band. Thresholds 1 to 100 are enabled;
// a threshold of 1 catches every score above 0. A Bands value is
// immutable and safe for concurrent use.
type Bands struct {
	// From this score, the heavy proof of work.
	HeavyPoW int
	// From this score, a CAPTCHA.
	Captcha int
	// From this score, the shadow queue.
	Shadow int
	// From this score, a block.
	Block int
}

// DefaultBands returns the bands with the Default… thresholds.
func DefaultBands() Bands {
	return Bands{HeavyPoW: DefaultHeavyPoW, Captcha: DefaultCaptcha, Shadow: DefaultShadow, Block: DefaultBlock}
}

// bandEnabled reports whether threshold t takes part.
func bandEnabled(t int) bool { return t >= 1 && t <= 100 }

// Validate checks that no threshold is negative and that the enabled
// thresholds rise strictly from HeavyPoW to Block. It returns nil or every
// problem, joined, each wrapping ErrInvalidBands.
func (b Bands) Validate() error {
	var errs []error
	last, lastName := 0, ""
	for _, t := range b.list() {
		switch {
		case t.v < 0:
			errs = append(errs, fmt.Errorf("%w: %s is %d: want 0 (off) or a score from 1 to 100", ErrInvalidBands, t.name, t.v))
		case !bandEnabled(t.v):
		case lastName != "" && t.v <= last:
			errs = append(errs, fmt.Errorf("%w: %s (%d) must be above %s (%d)", ErrInvalidBands, t.name, t.v, lastName, last))
		default:
			last, lastName = t.v, t.name
		}
	}
	return errors.Join(errs...)
}

type bandDef struct {
	name string
	v    int
	a    Action
}

func (b Bands) list() [4]bandDef {
	return [4]bandDef{
		{"heavy_pow", b.HeavyPoW, ActionHeavyPoW},
		{"captcha", b.Captcha, ActionCaptcha},
		{"shadow", b.Shadow, ActionShadow},
		{"block", b.Block, ActionBlock},
	}
}

// Action returns the action for score: that of the highest enabled band
// whose threshold score reaches, or ActionLightPoW.
func (b Bands) Action(score int) Action {
	l := b.list()
	for i := len(l) - 1; i >= 0; i-- {
		if bandEnabled(l[i].v) && score >= l[i].v {
			return l[i].a
		}
	}
	return ActionLightPoW
}

// Policy turns scores into decisions for one event. A Policy value is
// immutable and safe for concurrent use.
type Policy struct {
	Bands
	// DryRun: decide as the bands say, but apply only the light proof of
	// work (the caller logs Decision.Would).
	DryRun bool
}

// Decision is what a policy decided for one score.
type Decision struct {
	// Would is the action the bands give the score.
	Would Action
	// Apply is the action to take: Would, or ActionLightPoW in dry run.
	Apply Action
}

// Decide returns the decision for score.
func (p Policy) Decide(score int) Decision {
	would := p.Bands.Action(score)
	if p.DryRun {
		return Decision{Would: would, Apply: ActionLightPoW}
	}
	return Decision{Would: would, Apply: would}
}
