package admission

import (
	"encoding/json"
	"errors"
	"time"
)

// DefaultMinuteRetention is how long the leader's minute records are
// kept when Options.MinuteRetention is 0.
const DefaultMinuteRetention = 30 * 24 * time.Hour

// MinuteRecord is one stored minute of an event: the minute (its start,
// UTC, a whole minute) and its record (an encoded Minute, opaque to the
// store).
type MinuteRecord struct {
	Minute time.Time
	Record []byte
}

// Defence bands, in the order of Minute.Defence: the bot-defence action
// applied to a visitor's challenge, from the mildest to the harshest
// (the names are challenge.Action's).
var DefenceBands = [...]string{"light_pow", "heavy_pow", "captcha", "shadow", "block"}

// DefenceCounts counts the bot-defence actions applied, by band.
type DefenceCounts struct {
	LightPoW uint64 `json:"light_pow"`
	HeavyPoW uint64 `json:"heavy_pow"`
	Captcha  uint64 `json:"captcha"`
	Shadow   uint64 `json:"shadow"`
	Block    uint64 `json:"block"`
}

// Add adds o to c.
func (c *DefenceCounts) Add(o DefenceCounts) {
	c.LightPoW += o.LightPoW
	c.HeavyPoW += o.HeavyPoW
	c.Captcha += o.Captcha
	c.Shadow += o.Shadow
	c.Block += o.Block
}

// Slice returns the counts in the order of DefenceBands.
func (c DefenceCounts) Slice() [len(DefenceBands)]uint64 {
	return [...]uint64{c.LightPoW, c.HeavyPoW, c.Captcha, c.Shadow, c.Block}
}

func defenceFrom(a [len(DefenceBands)]uint64) DefenceCounts {
	return DefenceCounts{LightPoW: a[0], HeavyPoW: a[1], Captcha: a[2], Shadow: a[3], Block: a[4]}
}

// Minute is the leader's record of one minute of an event, summed over
// every replica's samples (see the recorder in record.go). Counts are
// of events that happened in the minute; levels (active, target, seats
// left, waiting) are as of the minute's last tick. A minute in which the
// lead changed hands is counted from the new leader's first tick.
type Minute struct {
	// At is the minute's start (UTC).
	At time.Time `json:"at"`
	// Ticks is how many of the leader's ticks the minute covers.
	Ticks int `json:"ticks"`
	// Arrivals counts the joins; Admitted the passes minted (status
	// polls that admitted a visitor).
	Arrivals uint64 `json:"arrivals"`
	Admitted uint64 `json:"admitted"`
	// Active is the most visitors active at once at a tick of the
	// minute; Waiting the visitors drawn and not yet reached at its end.
	Active  int `json:"active"`
	Waiting int `json:"waiting"`
	// OriginRequests and OriginErrors count the requests of admitted
	// visitors that the origin answered and those that were 5xx or got
	// no answer (estimated from the replicas' windows, so fractional).
	OriginRequests float64 `json:"origin_requests"`
	OriginErrors   float64 `json:"origin_errors"`
	// LatencyP50Ms and LatencyP99Ms are the origin's latency
	// percentiles over the minute's answered requests (0: none).
	LatencyP50Ms float64 `json:"latency_p50_ms"`
	LatencyP99Ms float64 `json:"latency_p99_ms"`
	// Target is the controller's active-visitor limit at the minute's
	// last decision, Reason the reason of that decision ("" when the
	// controller did not run: not selling).
	Target int    `json:"target"`
	Reason string `json:"reason,omitempty"`
	// SeatsSold is how many seats the inventory's remaining count went
	// down by in the minute (sales net of releases and cancellations);
	// SeatsLeft the remaining count at its end (-1: no inventory link).
	SeatsSold int `json:"seats_sold"`
	SeatsLeft int `json:"seats_left"`
	// NoShows counts the visitors reached whose grace ended in the
	// minute without their pass being used at the gate (or who were
	// passed over as gone).
	NoShows int `json:"no_shows"`
	// Reached counts the visitors whose turn came and whose grace ended
	// in the minute (NoShows of them did not come): the no-show rate's
	// denominator.
	Reached int `json:"reached"`
	// Defence counts the bot-defence actions applied, by band.
	Defence DefenceCounts `json:"defence"`
	// ETAKept counts the passes minted in the minute to visitors who
	// were shown an ETA, whose first promised latest time (eta_high) had
	// not passed; ETALate those for whom it had.
	ETAKept uint64 `json:"eta_kept"`
	ETALate uint64 `json:"eta_late"`
}

// ErrBadMinute is the error of a minute record that cannot be read.
var ErrBadMinute = errors.New("admission: malformed minute record")

// MarshalBinary encodes the record (JSON, so that other tools read it
// from the store as it is).
func (m *Minute) MarshalBinary() ([]byte, error) { return json.Marshal(m) }

// UnmarshalBinary reads what MarshalBinary wrote.
func (m *Minute) UnmarshalBinary(b []byte) error {
	*m = Minute{}
	if err := json.Unmarshal(b, m); err != nil {
		return errors.Join(ErrBadMinute, err)
	}
	return nil
}
