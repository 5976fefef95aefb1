package admission_test

import (
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// TestNoShowsTold: 20 visitors are admitted and take a pass; every fourth
// never brings it to the gate. Options.NoShows is told, on the leader
// only and once per offer, of exactly those 5 numbers once their grace
// has run out, and of nothing before.
func TestNoShowsTold(t *testing.T) {
	for _, k := range storeKinds {
		t.Run(k.name, func(t *testing.T) {
			cfg := event("show")
			cfg.NoShowGrace = 20 * time.Second
			cfg.Controller.InitialActive = 100
			var mu sync.Mutex
			told := map[string][]admission.NoShow{}
			r := replicas(t, k, 2, cfg, func(i int, o *admission.Options) {
				replica := o.Replica
				o.NoShows = func(n admission.NoShow) {
					mu.Lock()
					told[replica] = append(told[replica], n)
					mu.Unlock()
				}
			})
			lead := r.engines[0]
			r.at(t, time.Second)
			tickets := make([]admission.Ticket, 20)
			for i := range tickets {
				tk, _, err := r.engines[i%2].Join(ctx, "show", admission.JoinRequest{})
				if err != nil {
					t.Fatal(err)
				}
				tickets[i] = tk
			}
			r.at(t, 62*time.Second) // the draw
			admitted, s := 0, 63
			for ; admitted < len(tickets); s++ {
				if s > 120 {
					t.Fatalf("%d of %d admitted by %ds", admitted, len(tickets), s)
				}
				r.at(t, time.Duration(s)*time.Second)
				for i := range tickets {
					if tickets[i].Number == ^uint64(0) {
						continue
					}
					res, err := r.engines[i%2].Status(ctx, "show", tickets[i])
					if err != nil {
						t.Fatal(err)
					}
					tickets[i] = res.Ticket
					if res.Status.Kind != admission.StatusAdmitted {
						continue
					}
					admitted++
					if res.Pass.Number%4 != 0 && !lead.NoteUse("show", res.Pass) {
						t.Fatal("NoteUse refused a use")
					}
					tickets[i].Number = ^uint64(0) // done
				}
			}
			r.at(t, time.Duration(s+1)*time.Second)
			mu.Lock()
			if n := len(told["r0"]) + len(told["r1"]); n != 0 {
				t.Errorf("told of %d no-shows within the grace: %+v", n, told)
			}
			mu.Unlock()
			for x := s + 2; x < s+2+int(cfg.NoShowGrace/time.Second)+5; x++ {
				r.at(t, time.Duration(x)*time.Second)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(told["r1"]) != 0 {
				t.Errorf("the follower told of no-shows: %+v", told["r1"])
			}
			total, seen := 0, map[uint64]bool{}
			for _, n := range told["r0"] {
				if n.Event != "show" || n.Lane != admission.PublicLane || n.Count < 1 || n.Count > int(n.To-n.From+1) ||
					n.At.Sub(n.Offered) <= cfg.NoShowGrace {
					t.Errorf("no-show %+v", n)
				}
				if seen[n.From] {
					t.Errorf("the offer from %d told twice", n.From)
				}
				seen[n.From] = true
				total += n.Count
			}
			if total != 5 {
				t.Errorf("told of %d no-shows, want 5 (every fourth of 20): %+v", total, told["r0"])
			}
		})
	}
}
