package inventorytest

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/waitroom/waitroom/inventory"
)

// The linearizability check drives a store with concurrent clients
// fighting over a few hot seats and a small GA pool (holds with short and
// long TTLs, confirms, releases, cancels, extends and reads), records the history,
// and asks porcupine whether some sequential order of the operations,
// consistent with real time, explains every result under the model below.
//
// Time is part of the specification: a hold is live while its expiry is
// after the moment an operation takes effect. The model therefore carries
// a lower bound on that moment; each operation takes effect at some t
// within its call and return times (and not before the previous one), and
// results that carry a server timestamp (a hold's creation, an order's
// confirmation or cancellation) pin t to it.

// LinearizabilityOptions size the run.
type LinearizabilityOptions struct {
	Clients      int
	OpsPerClient int
	Seed         uint64
}

// linSeats and linPool define the contested event.
var linSeats = []string{"H-1-1", "H-1-2", "H-1-3", "H-1-4"}

const (
	linPoolCap = 3
	linLimit   = 3
	// linMaxHold is the event's max_hold_seconds (ms): holds of the
	// short TTLs can be extended up to it, long ones never are.
	linMaxHold = 1000
)

// LinearizabilityEvent is the plan the check runs on.
func LinearizabilityEvent() inventory.EventDef {
	return inventory.EventDef{
		Sections: []inventory.Section{{ID: "H", Rows: []inventory.Row{{ID: "1", Seats: len(linSeats)}}}},
		GA:       []inventory.Pool{{ID: "G", Capacity: linPoolCap}},
		Limits:   inventory.Limits{PerUser: linLimit},
		// Every hold names its TTL; these bound extensions.
		HoldTTLSeconds: 1, MaxHoldSeconds: linMaxHold / 1000,
	}
}

type linKind int

const (
	linHold linKind = iota
	linHoldGA
	linConfirm
	linRelease
	linCancel
	linGet
	linAvail
	linExtend
)

// linNames name the kinds, in order.
var linNames = []string{"hold", "holdGA", "confirm", "release", "cancel", "get", "avail", "extend"}

type linInput struct {
	Kind      linKind
	User      string
	Seats     []string
	Qty       int
	TTL       int64 // ms
	Hold      string
	Order     string
	Call, Ret int64 // ms, widened by one on each side
}

type linOutput struct {
	Code   string // "" for success, else the error code
	Hold   string
	Order  string
	At     int64 // server time of the result: hold creation, order confirmation or cancellation
	Exp    int64 // a hold's expiry (hold, extend)
	Status string
	Seats  []string
	Counts [2]inventory.Counts // section H, pool G
}

type linHoldState struct {
	user   string
	seats  []string
	qty    int
	ga     bool
	at     int64 // created at
	exp    int64
	status inventory.HoldStatus // held, confirmed or released; expired is derived
	order  string
}

type linOrderState struct {
	hold      string
	cancelled bool
	at        int64 // confirmed at
	cxAt      int64 // cancelled at
}

type linState struct {
	lb     int64
	holds  map[string]linHoldState
	orders map[string]linOrderState
}

func (s linState) clone() linState {
	n := linState{lb: s.lb, holds: make(map[string]linHoldState, len(s.holds)+1), orders: make(map[string]linOrderState, len(s.orders)+1)}
	for k, v := range s.holds {
		n.holds[k] = v
	}
	for k, v := range s.orders {
		n.orders[k] = v
	}
	return n
}

func (h linHoldState) live(t int64) bool { return h.status == inventory.HoldHeld && h.exp > t }

// occupancy derives, at time t, the held and sold seats, GA places and
// each user's count.
func (s linState) occupancy(t int64) (held, sold map[string]bool, gaHeld, gaSold int, users map[string]int) {
	held, sold, users = map[string]bool{}, map[string]bool{}, map[string]int{}
	for _, h := range s.holds {
		active := h.live(t) || (h.status == inventory.HoldConfirmed && !s.orders[h.order].cancelled)
		if !active {
			continue
		}
		users[h.user] += h.qty
		isSold := h.status == inventory.HoldConfirmed
		if h.ga {
			if isSold {
				gaSold += h.qty
			} else {
				gaHeld += h.qty
			}
			continue
		}
		for _, seat := range h.seats {
			if isSold {
				sold[seat] = true
			} else {
				held[seat] = true
			}
		}
	}
	return
}

// step checks out against the model at time t and returns the new state.
func (s linState) step(t int64, in linInput, out linOutput) (bool, linState) {
	held, sold, gaHeld, gaSold, users := s.occupancy(t)
	switch in.Kind {
	case linHold, linHoldGA:
		qty := len(in.Seats)
		if in.Kind == linHoldGA {
			qty = in.Qty
		}
		if users[in.User]+qty > linLimit {
			return out.Code == "user_limit", s
		}
		if in.Kind == linHold {
			var taken []string
			for _, seat := range in.Seats {
				if held[seat] || sold[seat] {
					taken = append(taken, seat)
				}
			}
			if len(taken) > 0 {
				return out.Code == "seat_unavailable" && slices.Equal(out.Seats, taken), s
			}
		} else {
			free := linPoolCap - gaHeld - gaSold
			switch {
			case free == 0:
				return out.Code == "sold_out", s
			case free < qty:
				return out.Code == "not_enough_seats", s
			}
		}
		if out.Code != "" || out.At != t || out.Exp != t+in.TTL {
			return false, s
		}
		if _, dup := s.holds[out.Hold]; dup || out.Hold == "" {
			return false, s
		}
		n := s.clone()
		n.holds[out.Hold] = linHoldState{user: in.User, seats: in.Seats, qty: qty, ga: in.Kind == linHoldGA,
			at: out.At, exp: out.Exp, status: inventory.HoldHeld}
		return true, n

	case linConfirm:
		h, ok := s.holds[in.Hold]
		if !ok {
			return out.Code == "hold_not_found", s
		}
		switch {
		case h.status == inventory.HoldConfirmed:
			if s.orders[h.order].cancelled {
				return out.Code == "order_cancelled", s
			}
			return out.Code == "" && out.Order == h.order && out.At == s.orders[h.order].at, s
		case h.status == inventory.HoldReleased:
			return out.Code == "hold_released", s
		case !h.live(t):
			return out.Code == "hold_expired", s
		}
		if out.Code != "" || out.At != t || out.Order == "" {
			return false, s
		}
		if _, dup := s.orders[out.Order]; dup {
			return false, s
		}
		n := s.clone()
		h.status, h.order = inventory.HoldConfirmed, out.Order
		n.holds[in.Hold] = h
		n.orders[out.Order] = linOrderState{hold: in.Hold, at: t}
		return true, n

	case linRelease:
		h, ok := s.holds[in.Hold]
		if !ok {
			return out.Code == "hold_not_found", s
		}
		switch {
		case h.status == inventory.HoldConfirmed:
			return out.Code == "hold_confirmed", s
		case h.status == inventory.HoldReleased:
			return out.Code == "" && out.Status == string(inventory.HoldReleased), s
		case !h.live(t):
			return out.Code == "" && out.Status == string(inventory.HoldExpired), s
		}
		if out.Code != "" || out.Status != string(inventory.HoldReleased) {
			return false, s
		}
		n := s.clone()
		h.status = inventory.HoldReleased
		n.holds[in.Hold] = h
		return true, n

	case linCancel:
		o, ok := s.orders[in.Order]
		if !ok {
			return out.Code == "order_not_found", s
		}
		if o.cancelled {
			return out.Code == "" && out.Status == string(inventory.OrderCancelled) && out.At == o.cxAt, s
		}
		if out.Code != "" || out.Status != string(inventory.OrderCancelled) || out.At != t {
			return false, s
		}
		n := s.clone()
		o.cancelled, o.cxAt = true, t
		n.orders[in.Order] = o
		return true, n

	case linExtend:
		h, ok := s.holds[in.Hold]
		if !ok {
			return out.Code == "hold_not_found", s
		}
		switch {
		case h.status == inventory.HoldConfirmed:
			return out.Code == "hold_confirmed", s
		case h.status == inventory.HoldReleased:
			return out.Code == "hold_released", s
		case !h.live(t):
			return out.Code == "hold_expired", s
		}
		exp := max(h.exp, min(t+in.TTL, h.at+linMaxHold))
		if out.Code != "" || out.Exp != exp || out.Status != string(inventory.HoldHeld) {
			return false, s
		}
		if exp == h.exp {
			return true, s
		}
		n := s.clone()
		h.exp = exp
		n.holds[in.Hold] = h
		return true, n

	case linGet:
		h, ok := s.holds[in.Hold]
		if !ok {
			return out.Code == "hold_not_found", s
		}
		status := h.status
		if status == inventory.HoldHeld && !h.live(t) {
			status = inventory.HoldExpired
		}
		return out.Code == "" && out.Status == string(status) && out.Order == h.order, s

	case linAvail:
		want := [2]inventory.Counts{
			{Available: len(linSeats) - len(held) - len(sold), Held: len(held), Sold: len(sold)},
			{Available: linPoolCap - gaHeld - gaSold, Held: gaHeld, Sold: gaSold},
		}
		return out.Code == "" && out.Counts == want, s
	}
	return false, s
}

// linModel is the porcupine model. A step tries every moment in the
// operation's window at which the set of live holds changes (and the
// result's own timestamp) and takes the earliest that explains the result.
var linModel = porcupine.Model{
	Init: func() any { return linState{holds: map[string]linHoldState{}, orders: map[string]linOrderState{}} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(linState), input.(linInput), output.(linOutput)
		lo, hi := max(in.Call, s.lb), in.Ret
		if lo > hi {
			return false, s
		}
		cands := []int64{lo}
		if out.At >= lo && out.At <= hi {
			cands = append(cands, out.At)
		}
		for _, h := range s.holds {
			if h.status == inventory.HoldHeld && h.exp > lo && h.exp <= hi {
				cands = append(cands, h.exp)
			}
		}
		if in.Kind == linExtend {
			// The new expiry gives the moment away (now + TTL), unless it
			// hit the maximum: then the earliest moment that reaches it.
			for _, c := range []int64{out.Exp - in.TTL, s.holds[in.Hold].at + linMaxHold - in.TTL} {
				if c >= lo && c <= hi {
					cands = append(cands, c)
				}
			}
		}
		slices.Sort(cands)
		for _, t := range slices.Compact(cands) {
			// States are values whose maps are only ever replaced (see
			// clone), so setting lb on the copy leaves s untouched.
			if ok, n := s.step(t, in, out); ok {
				n.lb = t
				return true, n
			}
		}
		return false, s
	},
	Equal: func(a, b any) bool {
		x, y := a.(linState), b.(linState)
		return x.lb == y.lb && sameState(x, y)
	},
	Hash: func(state any) uint64 {
		s := state.(linState)
		h := fnv.New64a()
		fmt.Fprint(h, s.lb, len(s.holds), len(s.orders))
		keys := make([]string, 0, len(s.holds))
		for k := range s.holds {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprint(h, k, s.holds[k].status)
		}
		return h.Sum64()
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(linInput), output.(linOutput)
		names := linNames
		res := out.Code
		if res == "" {
			res = "ok " + out.Hold + out.Order + out.Status
		}
		return fmt.Sprintf("%s(%s %v %d %s%s) -> %s", names[in.Kind], in.User, in.Seats, in.Qty, in.Hold, in.Order, res)
	},
}

func sameState(x, y linState) bool {
	if len(x.holds) != len(y.holds) || len(x.orders) != len(y.orders) {
		return false
	}
	for k, v := range x.holds {
		w, ok := y.holds[k]
		if !ok || v.status != w.status || v.order != w.order || v.exp != w.exp {
			return false
		}
	}
	for k, v := range x.orders {
		if y.orders[k] != v {
			return false
		}
	}
	return true
}

// CheckLinearizable runs concurrent clients against s and fails t unless
// porcupine finds the history linearizable under the model. The history
// must also have exercised the interesting outcomes (linWanted): which
// ones a run reaches depends on timing as well as on the seed (whether a
// short hold runs out before a client reaches for it), so a history that
// missed one is checked all the same and another is recorded with the
// next seed, up to linAttempts histories in all.
func CheckLinearizable(t *testing.T, s inventory.Store, opts LinearizabilityOptions) {
	t.Helper()
	var missed []string
	for attempt := range linAttempts {
		run := opts
		run.Seed = opts.Seed + uint64(attempt)*1_000_003
		ops := RecordHistory(t, s, run)
		cov := Coverage(ops)
		checkHistory(t, ops, cov)
		missed = missed[:0]
		for _, want := range linWanted {
			if cov[want] == 0 {
				missed = append(missed, want)
			}
		}
		if len(missed) == 0 || t.Failed() {
			return
		}
		t.Logf("history %d (seed %d) never saw %q; coverage: %v", attempt+1, run.Seed, missed, cov)
	}
	t.Errorf("%d histories never saw %q", linAttempts, missed)
}

// linWanted are the outcomes a history must show to have tested anything
// interesting; linAttempts is how many histories may try.
var linWanted = []string{"hold ok", "hold seat_unavailable", "confirm ok", "confirm hold_expired", "release ok",
	"extend ok", "extend hold_expired"}

const linAttempts = 4

// checkHistory fails t unless porcupine finds ops linearizable.
func checkHistory(t *testing.T, ops []porcupine.Operation, cov map[string]int) {
	t.Helper()
	res, info := porcupine.CheckOperationsVerbose(linModel, ops, 2*time.Minute)
	switch res {
	case porcupine.Ok:
		t.Logf("linearizable: %d operations; outcomes: %v", len(ops), cov)
	case porcupine.Illegal:
		path := filepath.Join(os.TempDir(), fmt.Sprintf("waitroom-linearizability-%d.html", time.Now().UnixNano()))
		if err := porcupine.VisualizePath(linModel, info, path); err == nil {
			t.Errorf("history of %d operations is NOT linearizable; visualisation: %s", len(ops), path)
		} else {
			t.Errorf("history of %d operations is NOT linearizable", len(ops))
		}
	default:
		t.Errorf("porcupine could not decide within its time limit (%d operations)", len(ops))
	}
}

// Coverage counts a history's outcomes by operation and result code
// ("confirm hold_expired"), to show what a run exercised.
func Coverage(ops []porcupine.Operation) map[string]int {
	names := linNames
	out := map[string]int{}
	for _, op := range ops {
		in, o := op.Input.(linInput), op.Output.(linOutput)
		code := o.Code
		if code == "" {
			code = "ok"
		}
		out[names[in.Kind]+" "+code]++
		if in.Kind == linGet && o.Status == string(inventory.HoldExpired) {
			out["get expired"]++
		}
	}
	return out
}

// Linearizable reports porcupine's verdict on a recorded history.
func Linearizable(ops []porcupine.Operation) porcupine.CheckResult {
	res, _ := porcupine.CheckOperationsVerbose(linModel, ops, 2*time.Minute)
	return res
}
