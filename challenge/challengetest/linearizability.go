package challengetest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/internal/testkit/linpart"
)

// The linearizability check runs concurrent clients that redeem ids from
// a small, sliding id space (at any moment every client reaches for the
// same few ids, so first redeems race), records each call's start, end
// and result, and asks porcupine whether some sequential order of the
// calls, consistent with real time, explains every result under the
// model: a set of redeemed ids, where Redeem(id) returns true and adds id
// when id is absent, and returns false when it is present. Ids are
// independent, so the history is checked id by id.

// LinearizabilityOptions size a run; zero fields take defaults.
type LinearizabilityOptions struct {
	// Clients redeeming concurrently (default 8).
	Clients int
	// OpsPerClient: redeems per client (default 200).
	OpsPerClient int
	// Seed of the clients' random choices.
	Seed uint64
}

type linInput struct{ ID int }

type linOutput struct{ OK bool }

// linModel is the state of one id: redeemed or not.
var linModel = porcupine.Model{
	Partition: linpart.By(func(in any) int { return in.(linInput).ID }),
	Init:      func() any { return false },
	Step: func(state, input, output any) (bool, any) {
		redeemed, ok := state.(bool), output.(linOutput).OK
		if ok {
			return !redeemed, true
		}
		return redeemed, redeemed
	},
	DescribeOperation: func(input, output any) string {
		return fmt.Sprintf("redeem(%d) → %v", input.(linInput).ID, output.(linOutput).OK)
	},
	DescribeState: func(state any) string {
		if state.(bool) {
			return "redeemed"
		}
		return "fresh"
	},
}

// RecordHistory runs the clients against g and returns the history. An
// error from g fails t: with a live context a guard must answer.
func RecordHistory(t *testing.T, g challenge.ReplayGuard, opts LinearizabilityOptions) []porcupine.Operation {
	t.Helper()
	if opts.Clients <= 0 {
		opts.Clients = 8
	}
	if opts.OpsPerClient <= 0 {
		opts.OpsPerClient = 200
	}
	// Real ids for the model's small integers, fresh for this run.
	space := opts.OpsPerClient/5 + 4
	ids := make([][]byte, space)
	for i := range ids {
		ids[i] = NewID()
	}
	exp := later()
	var (
		mu   sync.Mutex
		ops  []porcupine.Operation
		errs []error
		wg   sync.WaitGroup
	)
	start := make(chan struct{})
	for c := range opts.Clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(opts.Seed, uint64(c)))
			<-start
			for j := range opts.OpsPerClient {
				// Op j of every client reaches for one of 4 ids that
				// slide along with j.
				id := j/5 + rng.IntN(4)
				call := time.Now()
				ok, err := g.Redeem(ctx, ids[id], exp)
				ret := time.Now()
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Errorf("client %d: Redeem(%d): %w", c, id, err))
				} else {
					ops = append(ops, porcupine.Operation{ClientId: c, Input: linInput{ID: id},
						Call: call.UnixNano(), Output: linOutput{OK: ok}, Return: ret.UnixNano()})
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if len(errs) > 0 {
		t.FailNow()
	}
	return ops
}

// Linearizable reports porcupine's verdict on a recorded history.
func Linearizable(ops []porcupine.Operation) porcupine.CheckResult {
	res, _ := porcupine.CheckOperationsVerbose(linModel, ops, time.Minute)
	return res
}

// CheckLinearizable fails t unless the history is linearizable, writing a
// visualisation of a bad one to a temporary file.
func CheckLinearizable(t *testing.T, ops []porcupine.Operation) {
	t.Helper()
	res, info := porcupine.CheckOperationsVerbose(linModel, ops, time.Minute)
	switch res {
	case porcupine.Ok:
		won := 0
		for _, op := range ops {
			if op.Output.(linOutput).OK {
				won++
			}
		}
		t.Logf("linearizable: %d redeems, %d first", len(ops), won)
	case porcupine.Illegal:
		path := filepath.Join(os.TempDir(), fmt.Sprintf("waitroom-replay-linearizability-%d.html", time.Now().UnixNano()))
		if err := porcupine.VisualizePath(linModel, info, path); err == nil {
			t.Errorf("history of %d redeems is NOT linearizable; visualisation: %s", len(ops), path)
		} else {
			t.Errorf("history of %d redeems is NOT linearizable", len(ops))
		}
	default:
		t.Errorf("porcupine could not decide within its time limit (%d redeems)", len(ops))
	}
}

func testLinearizable(t *testing.T, g challenge.ReplayGuard) {
	for seed := range uint64(3) {
		CheckLinearizable(t, RecordHistory(t, g, LinearizabilityOptions{Seed: seed}))
	}
}
