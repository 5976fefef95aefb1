package challengetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/waitroom/waitroom/challenge"
)

// refGuard is the specification as code: a set under a mutex, never
// forgetting. The suite must pass it.
type refGuard struct {
	mu     sync.Mutex
	ids    map[string]time.Time
	closed bool
}

func (g *refGuard) Redeem(_ context.Context, id []byte, expires time.Time) (bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false, context.Canceled
	}
	if exp, ok := g.ids[string(id)]; ok && time.Now().Before(exp) {
		return false, nil
	}
	if time.Now().Before(expires) {
		g.ids[string(id)] = expires
	}
	return true, nil
}

func (g *refGuard) Close() error {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	return nil
}

// racyGuard reads, waits, then writes: concurrent redeems of one id can
// all succeed. The linearizability check must catch it.
type racyGuard struct {
	refGuard
}

func (g *racyGuard) Redeem(_ context.Context, id []byte, expires time.Time) (bool, error) {
	g.mu.Lock()
	_, seen := g.ids[string(id)]
	g.mu.Unlock()
	if seen {
		return false, nil
	}
	time.Sleep(50 * time.Microsecond)
	g.mu.Lock()
	g.ids[string(id)] = expires
	g.mu.Unlock()
	return true, nil
}

func TestSuitePassesTheReference(t *testing.T) {
	Run(t, func(t *testing.T) challenge.ReplayGuard {
		return &refGuard{ids: map[string]time.Time{}}
	})
}

func TestLinearizabilityCatchesARace(t *testing.T) {
	g := &racyGuard{refGuard{ids: map[string]time.Time{}}}
	for seed := range uint64(10) {
		ops := RecordHistory(t, g, LinearizabilityOptions{Seed: seed})
		if Linearizable(ops) == porcupine.Illegal {
			return
		}
	}
	t.Fatal("10 histories of a check-then-set guard all passed as linearizable")
}

func TestLinearizabilityModel(t *testing.T) {
	op := func(client, id int, ok bool, call, ret int64) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: linInput{ID: id}, Output: linOutput{OK: ok}, Call: call, Return: ret}
	}
	for _, tc := range []struct {
		name string
		ops  []porcupine.Operation
		want porcupine.CheckResult
	}{
		{"one winner", []porcupine.Operation{op(0, 1, true, 0, 10), op(1, 1, false, 5, 15)}, porcupine.Ok},
		{"loser before winner, overlapping", []porcupine.Operation{op(1, 1, false, 0, 10), op(0, 1, true, 5, 15)}, porcupine.Ok},
		{"two winners", []porcupine.Operation{op(0, 1, true, 0, 10), op(1, 1, true, 5, 15)}, porcupine.Illegal},
		{"loser before any winner", []porcupine.Operation{op(1, 1, false, 0, 4), op(0, 1, true, 5, 15)}, porcupine.Illegal},
		{"nobody wins", []porcupine.Operation{op(1, 1, false, 0, 4)}, porcupine.Illegal},
		{"ids independent", []porcupine.Operation{op(0, 1, true, 0, 10), op(1, 2, true, 5, 15)}, porcupine.Ok},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Linearizable(tc.ops); got != tc.want {
				t.Fatalf("Linearizable = %v, want %v", got, tc.want)
			}
		})
	}
}
