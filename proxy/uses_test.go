package proxy

import (
	"context"
	"testing"
)

// TestPassUse: a pass counts as used (its visitor came, for the no-show
// rate) once a request carrying it went through the gate, in the full
// proxy and through the auth_request endpoint; minting it (the status
// poll) and asking about it (the session endpoint) do not. The first
// such request tells the engine; later ones only read the cache entry's
// flag.
func TestPassUse(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts []rigOption
		gate func(t *testing.T, r *rig, v *visitor) response
	}{
		{"proxy", nil, func(t *testing.T, r *rig, v *visitor) response {
			return v.do(t, "GET", r.url+"/show/seats", "")
		}},
		{"auth_request", []rigOption{authRequestMode}, func(t *testing.T, r *rig, v *visitor) response {
			return v.do(t, "GET", r.url+"/_wr/auth", "", "X-Original-URI", "/show/seats", "X-Original-Method", "GET")
		}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			r := newRig(t, mode.opts...)
			ua := "Mozilla/5.0 use " + mode.name
			v, other := newVisitor(t, ua), newVisitor(t, ua+" other") // other takes a pass, never comes
			for _, x := range []*visitor{v, other} {
				if st := decodeStatus(t, x.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`)); st.Status != "prequeue" {
					t.Fatalf("join: %+v", st)
				}
			}
			for _, x := range []*visitor{v, other} {
				st := statusJSON{}
				for d := 11; d < 20 && st.Status != "admitted"; d++ {
					r.tick(t, secs(d))
					st = decodeStatus(t, x.do(t, "GET", r.url+"/_wr/api/status?event=show", ""))
				}
				if st.Status != "admitted" {
					t.Fatalf("never admitted: %+v", st)
				}
			}
			tok := v.cookie(r.url, "wr_pass_show")
			pass, err := r.keys.VerifyPass(tok, "show", v.bindingFor(t), r.clk.Now())
			if err != nil {
				t.Fatal(err)
			}
			otherPass, err := r.keys.VerifyPass(other.cookie(r.url, "wr_pass_show"), "show", other.bindingFor(t), r.clk.Now())
			if err != nil {
				t.Fatal(err)
			}
			used := func() (bool, bool) {
				t.Helper()
				a, err := r.store.Used(context.Background(), "show", pass.Lane, pass.Number, pass.Number)
				if err != nil {
					t.Fatal(err)
				}
				b, err := r.store.Used(context.Background(), "show", otherPass.Lane, otherPass.Number, otherPass.Number)
				if err != nil {
					t.Fatal(err)
				}
				return a[0], b[0]
			}

			// Minted and asked about, not used.
			if s := v.do(t, "GET", r.url+"/_wr/api/session?event=show", ""); s.status != 200 {
				t.Fatalf("session: %d %s", s.status, s.body)
			}
			r.tick(t, secs(21))
			if a, b := used(); a || b {
				t.Fatalf("passes only minted read as used: %v %v", a, b)
			}
			e := r.p.passes.get([]byte(tok))
			if e == nil || e.v.used.Load() {
				t.Fatal("the minted pass is not cached, or is marked used already")
			}

			for range 3 {
				if got := mode.gate(t, r, v); got.status != 200 && got.status != 204 {
					t.Fatalf("through the gate with the pass: %d %s", got.status, got.body)
				}
				if !e.v.used.Load() {
					t.Fatal("a request through the gate left the pass unmarked")
				}
			}
			// The engine writes it at the next tick.
			if a, _ := used(); a {
				t.Fatal("the use reached the store before a tick")
			}
			r.tick(t, secs(22))
			if a, b := used(); !a || b {
				t.Fatalf("after a tick: used %v (want true), the other visitor's %v (want false)", a, b)
			}
			if f := r.engine.Figures("show"); f.UsesDropped != 0 {
				t.Fatalf("%d uses dropped", f.UsesDropped)
			}
		})
	}
}
