// The linearizability check of accounts' places, with porcupine: as the
// challenge replay guard's (challengetest), concurrent clients reach for a
// small, sliding set of accounts, placing (each with a visitor of its
// own) or reading, and porcupine looks for a sequential order, consistent
// with real time, that explains every answer under the model: an
// account's place is empty until the first PlaceAccount, which records its
// visitor; every later PlaceAccount returns that visitor, not first, and
// AccountPlace returns it. Accounts are independent, checked one by one.

package admissiontest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/testkit/linpart"
)

type acctInput struct {
	Account int
	Place   bool // PlaceAccount (with Visitor); else AccountPlace
	Visitor admission.VisitorID
}

type acctOutput struct {
	Visitor admission.VisitorID // the place's visitor (zero: none)
	First   bool                // PlaceAccount: recorded by this call
}

var acctModel = porcupine.Model{
	Partition: linpart.By(func(in any) int { return in.(acctInput).Account }),
	Init:      func() any { return admission.VisitorID{} },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(admission.VisitorID), input.(acctInput), output.(acctOutput)
		var none admission.VisitorID
		switch {
		case !in.Place:
			return out.Visitor == s, s
		case s == none:
			return out.First && out.Visitor == in.Visitor, in.Visitor
		default:
			return !out.First && out.Visitor == s, s
		}
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(acctInput), output.(acctOutput)
		if in.Place {
			return fmt.Sprintf("place(%d, %.6s) → %.6s first=%v", in.Account, in.Visitor, out.Visitor, out.First)
		}
		return fmt.Sprintf("read(%d) → %.6s", in.Account, out.Visitor)
	},
}

// testAccountsLinearizable: concurrent PlaceAccount and AccountPlace
// calls on a few accounts at a time are linearizable.
func testAccountsLinearizable(t *testing.T, s admission.Store) {
	const clients, opsPerClient = 8, 100
	ev := NewEventID()
	forget := time.Now().Add(time.Hour)
	var (
		mu   sync.Mutex
		ops  []porcupine.Operation
		errs []error
		wg   sync.WaitGroup
	)
	start := make(chan struct{})
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 1))
			<-start
			for j := range opsPerClient {
				in := acctInput{Account: j/5 + rng.IntN(4), Place: rng.IntN(3) > 0}
				key := fmt.Sprintf("acct-%d", in.Account)
				var out acctOutput
				var err error
				call := time.Now()
				if in.Place {
					in.Visitor = admission.NewVisitorID()
					var p admission.AccountPlace
					p, out.First, err = s.PlaceAccount(ctx, ev, key, place(in.Visitor, public, 0), forget)
					out.Visitor = p.Visitor
				} else {
					var p admission.AccountPlace
					var ok bool
					p, ok, err = s.AccountPlace(ctx, ev, key)
					if ok {
						out.Visitor = p.Visitor
					}
				}
				ret := time.Now()
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Errorf("client %d: %w", c, err))
				} else {
					ops = append(ops, porcupine.Operation{ClientId: c, Input: in, Call: call.UnixNano(),
						Output: out, Return: ret.UnixNano()})
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
		t.Fatal(err)
	}
	res, info := porcupine.CheckOperationsVerbose(acctModel, ops, time.Minute)
	switch res {
	case porcupine.Ok:
	case porcupine.Illegal:
		path := filepath.Join(os.TempDir(), fmt.Sprintf("waitroom-account-linearizability-%d.html", time.Now().UnixNano()))
		if porcupine.VisualizePath(acctModel, info, path) == nil {
			t.Fatalf("history of %d calls is NOT linearizable; visualisation: %s", len(ops), path)
		}
		t.Fatalf("history of %d calls is NOT linearizable", len(ops))
	default:
		t.Fatalf("porcupine could not decide within its time limit (%d calls)", len(ops))
	}
}
