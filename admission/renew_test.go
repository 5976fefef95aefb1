package admission_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
)

func TestPassAdmittedAtRoundTrip(t *testing.T) {
	k, err := admission.NewKeyring(admission.Key{ID: "k", Alg: "EdDSA", Private: newEdKey(t)})
	if err != nil {
		t.Fatal(err)
	}
	now := t0.Add(time.Hour)
	p := admission.Pass{ID: admission.NewPassID(), Event: "show", Visitor: admission.NewVisitorID(), Lane: "public",
		Number: 3, Binding: "b", IssuedAt: now, ExpiresAt: now.Add(time.Minute), AdmittedAt: now.Add(-time.Hour)}
	tok, err := k.SignPass(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := k.VerifyPass(tok, "show", "b", now)
	if err != nil || !got.AdmittedAt.Equal(p.AdmittedAt) {
		t.Fatalf("VerifyPass = %+v, %v; want AdmittedAt %v", got, err, p.AdmittedAt)
	}
	legacy := p
	legacy.AdmittedAt = time.Time{}
	if tok, err = k.SignPass(legacy); err != nil {
		t.Fatal(err)
	}
	if got, err = k.VerifyPass(tok, "show", "b", now); err != nil || !got.AdmittedAt.IsZero() {
		t.Fatalf("a pass without adm: %+v, %v", got, err)
	}
	bad := p
	bad.AdmittedAt = now.Add(time.Second)
	if _, err := k.SignPass(bad); err == nil {
		t.Fatal("SignPass signed a pass admitted after it was issued")
	}
}

func TestRenewPass(t *testing.T) {
	cfg := event("show")
	cfg.SessionDuration = 4 * time.Minute
	cfg.MaxSession = 10 * time.Minute
	cfg.CompleteGrace = 20 * time.Second
	r := newRig(t, cfg)
	r.at(t, time.Second)
	tickets := make([]admission.Ticket, 3)
	for i := range tickets {
		tickets[i] = r.join(t, "show", admission.JoinRequest{Binding: "b"})
	}
	i, pass, _ := admitOne(t, r, "show", tickets, 62*time.Second)
	now := r.clk.Now()
	if pass.AdmittedAt.IsZero() || pass.AdmittedAt.After(pass.IssuedAt) || pass.IssuedAt.Sub(pass.AdmittedAt) > cfg.Controller.Tick+time.Second {
		t.Fatalf("a pass from a status poll: admitted %v, issued %v", pass.AdmittedAt, pass.IssuedAt)
	}
	// Polling again later in the turn does not start a new session.
	r.clk.Add(30 * time.Second)
	if again := r.status(t, "show", &tickets[i]); again.Pass == nil || !again.Pass.AdmittedAt.Equal(pass.AdmittedAt) {
		t.Fatalf("a second poll in the turn: %+v, want the session begun at %v", again.Pass, pass.AdmittedAt)
	}
	r.clk.Add(-30 * time.Second)
	end := pass.AdmittedAt.Add(cfg.MaxSession)
	if got := r.e.SessionEnd("show", pass); !got.Equal(end) {
		t.Fatalf("SessionEnd = %v, want %v", got, end)
	}
	if at := r.e.RenewAt("show", pass); !at.Equal(pass.ExpiresAt.Add(-2 * time.Minute)) {
		t.Fatalf("RenewAt = %v, want half a session before %v", at, pass.ExpiresAt)
	}
	if _, ok := r.e.RenewPass("show", pass, now); ok {
		t.Fatal("a fresh pass was renewed: its expiry would not move")
	}

	// Slides forward, keeping who and since when, until the session's end.
	cur := *pass
	for step := 0; ; step++ {
		now = now.Add(3 * time.Minute)
		np, ok := r.e.RenewPass("show", &cur, now)
		if !ok {
			if !cur.ExpiresAt.Equal(end) {
				t.Fatalf("renewal stopped at %v, before the session's end %v", cur.ExpiresAt, end)
			}
			break
		}
		if np.ID != pass.ID || np.Visitor != pass.Visitor || np.Binding != pass.Binding || np.Lane != pass.Lane ||
			np.Number != pass.Number || !np.AdmittedAt.Equal(pass.AdmittedAt) {
			t.Fatalf("renewed pass %+v is not the same visitor's pass %+v", np, pass)
		}
		want := now.Add(cfg.SessionDuration)
		if want.After(end) {
			want = end
		}
		if !np.IssuedAt.Equal(now) || !np.ExpiresAt.Equal(want) {
			t.Fatalf("step %d: renewed to %v (issued %v), want %v", step, np.ExpiresAt, np.IssuedAt, want)
		}
		cur = np
		if step > 10 {
			t.Fatal("renewal never reached the session's end")
		}
	}
	if !r.e.RenewAt("show", &cur).IsZero() {
		t.Fatal("a pass at its session's end is still due for renewal")
	}

	// A pass without AdmittedAt (minted before renewal) is never renewed.
	legacy := *pass
	legacy.AdmittedAt = time.Time{}
	if _, ok := r.e.RenewPass("show", &legacy, pass.ExpiresAt.Add(-time.Second)); ok || !r.e.RenewAt("show", &legacy).IsZero() {
		t.Fatal("a pass without adm was renewed")
	}

	// Completion wins at once (before its grace ends), revocation too.
	late := pass.ExpiresAt.Add(-time.Minute)
	if _, ok := r.e.RenewPass("show", pass, late); !ok {
		t.Fatal("a due pass was not renewed")
	}
	r.e.Complete("show", tickets[i].Visitor)
	if _, ok := r.e.RenewPass("show", pass, late); ok {
		t.Fatal("a pass was renewed after its origin said complete")
	}
	j := (i + 1) % len(tickets)
	_, other, _ := admitOne(t, r, "show", tickets[j:j+1], r.clk.Now().Sub(t0))
	if _, err := r.e.RevokeVisitor(ctx, "show", other.Visitor); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.e.RenewPass("show", other, other.ExpiresAt.Add(-time.Minute)); ok {
		t.Fatal("a revoked visitor's pass was renewed")
	}
}

func TestMaxSessionDefaults(t *testing.T) {
	for _, c := range []struct {
		session, max, want time.Duration
	}{
		{0, 0, admission.DefaultMaxSessionFactor * admission.DefaultSessionDuration},
		{time.Minute, 0, admission.DefaultMaxSessionFactor * time.Minute},
		{time.Minute, 30 * time.Second, time.Minute},
		{time.Minute, 90 * time.Second, 90 * time.Second},
	} {
		cfg := event("show")
		cfg.SessionDuration, cfg.MaxSession = c.session, c.max
		r := newRig(t, cfg)
		got, err := r.e.Config("show")
		if err != nil || got.MaxSession != c.want {
			t.Errorf("session %v, max %v: MaxSession = %v (%v), want %v", c.session, c.max, got.MaxSession, err, c.want)
		}
	}
}

func newEdKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return priv
}
