package proxy

import (
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/admission"
)

// admitAll joins visitors before the on-sale and polls until each is
// admitted.
func (r *rig) admitAll(t *testing.T, uas ...string) []*visitor {
	t.Helper()
	vs := make([]*visitor, len(uas))
	for i, ua := range uas {
		vs[i] = newVisitor(t, ua)
		decodeStatus(t, vs[i].do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`))
	}
	in := map[int]bool{}
	for d := 11 * time.Second; d < 30*time.Second && len(in) < len(vs); d += time.Second {
		r.tick(t, d)
		for i, v := range vs {
			if !in[i] && decodeStatus(t, v.do(t, "GET", r.url+"/_wr/api/status?event=show", "")).Status == "admitted" {
				in[i] = true
			}
		}
	}
	if len(in) != len(vs) {
		t.Fatalf("%d of %d admitted", len(in), len(vs))
	}
	return vs
}

// pass is the visitor's verified pass.
func (r *rig) pass(t *testing.T, v *visitor) admission.Pass {
	t.Helper()
	p, err := r.keys.VerifyPass(v.cookie(r.url, "wr_pass_show"), "show", v.bindingFor(t), r.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// passes reports whether the visitor's pass gets them to the origin.
func passes(t *testing.T, r *rig, v *visitor) bool {
	t.Helper()
	return v.do(t, "GET", r.url+"/show/x", "").body == "origin:/show/x"
}

// pollMints polls the visitor's status and reports whether it set a pass
// cookie, with the status.
func pollMints(t *testing.T, r *rig, v *visitor) (bool, statusJSON) {
	t.Helper()
	resp := v.do(t, "GET", r.url+"/_wr/api/status?event=show", "")
	minted := false
	for _, c := range resp.header.Values("Set-Cookie") {
		if strings.HasPrefix(c, "wr_pass_show=") {
			minted = true
		}
	}
	return minted, decodeStatus(t, resp)
}

func TestRevokeSticks(t *testing.T) {
	r := newRig(t)
	base := startAdmin(t, r)
	vs := r.admitAll(t, "ua-a", "ua-b", "ua-c")
	a, b, c := vs[0], vs[1], vs[2]
	if minted, st := pollMints(t, r, a); !minted || st.Status != "admitted" {
		t.Fatalf("an admitted visitor's poll: minted %v, %+v", minted, st)
	}
	pa, pb := r.pass(t, a), r.pass(t, b)

	// By visitor id: every pass of theirs stops, and no poll mints another.
	code, out := adminDo(t, "POST", base+"/admin/v1/events/show/revoke", adminToken, `{"visitor_id":"`+pa.Visitor.String()+`"}`)
	if code != 200 || out["visitor_id"] != pa.Visitor.String() || out["revoked_until"] == nil {
		t.Fatalf("revoke a visitor: %d %v", code, out)
	}
	if passes(t, r, a) {
		t.Fatal("a revoked visitor's pass still passes")
	}
	if minted, st := pollMints(t, r, a); minted || st.Status != "closed" || st.Reason != "revoked" {
		t.Fatalf("a revoked visitor's poll: minted %v, %+v", minted, st)
	}
	if passes(t, r, a) {
		t.Fatal("a revoked visitor got back in")
	}
	if !passes(t, r, b) || !passes(t, r, c) {
		t.Fatal("revoking one visitor stopped others")
	}

	// By pass id: the pass stops, and its holder gets no new one.
	code, out = adminDo(t, "POST", base+"/admin/v1/events/show/revoke", adminToken, `{"pass_id":"`+pb.ID+`"}`)
	if code != 200 || out["pass_id"] != pb.ID || out["visitor_id"] != pb.Visitor.String() {
		t.Fatalf("revoke a pass: %d %v", code, out)
	}
	if passes(t, r, b) {
		t.Fatal("a revoked pass still passes")
	}
	if minted, st := pollMints(t, r, b); minted || st.Reason != "revoked" {
		t.Fatalf("a revoked pass's holder's poll: minted %v, %+v", minted, st)
	}
	// After a tick (reading the bars back from the store) it still holds.
	r.tick(t, 40*time.Second)
	if passes(t, r, a) || passes(t, r, b) || !passes(t, r, c) {
		t.Fatal("revocations did not survive a tick")
	}

	// Unknown and malformed ids.
	for _, tc := range []struct {
		body string
		code int
		err  string
	}{
		{`{"visitor_id":"` + admission.NewVisitorID().String() + `"}`, 404, "unknown_visitor"},
		{`{"pass_id":"` + admission.NewPassIDFor(admission.NewVisitorID()) + `"}`, 404, "unknown_pass"},
		{`{"pass_id":"` + admission.NewPassID() + `"}`, 404, "unknown_pass"},
		{`{"pass_id":"nope"}`, 404, "unknown_pass"},
		{`{"visitor_id":"nope"}`, 400, "bad_request"},
		{`{"visitor_id":"` + strings.ToUpper(pa.Visitor.String()) + `"}`, 400, "bad_request"},
		{`{"visitor_id":"` + pa.Visitor.String() + `","pass_id":"` + pb.ID + `"}`, 400, "bad_request"},
		{`{"pass_id":"` + strings.Repeat("a", 65) + `"}`, 400, "bad_request"},
		{`{}`, 400, "bad_request"},
		{`{"pass_id":"` + pb.ID + `","pass_id":"` + pb.ID + `"}`, 400, "bad_request"},
		{`{"pass_id":"` + pb.ID + `"} x`, 400, "bad_request"},
	} {
		if code, out := adminDo(t, "POST", base+"/admin/v1/events/show/revoke", adminToken, tc.body); code != tc.code || out["error"] != tc.err {
			t.Errorf("revoke %s: %d %v, want %d %s", tc.body, code, out, tc.code, tc.err)
		}
	}
	if code, out := adminDo(t, "POST", base+"/admin/v1/events/nope/revoke", adminToken, `{"visitor_id":"`+pa.Visitor.String()+`"}`); code != 404 || out["error"] != "unknown_event" {
		t.Errorf("revoke in an unknown event: %d %v", code, out)
	}
}

func TestCompleteEndsThePass(t *testing.T) {
	r := newRig(t)
	r.origin.handler = func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/show/paid" {
			ctx.Response.Header.Set("X-Waitroom-Complete", "1")
		}
		ctx.SetContentType("text/plain")
		ctx.WriteString("origin:" + string(ctx.Path()))
	}
	vs := r.admitAll(t, "ua-a", "ua-b")
	a, b := vs[0], vs[1]
	if got := a.do(t, "GET", r.url+"/show/paid", ""); got.body != "origin:/show/paid" || got.header.Get("X-Waitroom-Complete") != "" {
		t.Fatalf("the completing request: %d %q %v", got.status, got.body, got.header)
	}
	// Done: no new pass from the next poll on.
	if minted, st := pollMints(t, r, a); minted || st.Status != "closed" || st.Reason != "completed" {
		t.Fatalf("a completed visitor's poll: minted %v, %+v", minted, st)
	}
	// The pass they hold keeps working for the grace, then stops.
	now := r.clk.Now().Sub(t0)
	r.tick(t, now+admission.DefaultCompleteGrace-time.Second)
	if !passes(t, r, a) {
		t.Fatal("a completed visitor's pass stopped before the grace was over")
	}
	r.tick(t, now+admission.DefaultCompleteGrace)
	if passes(t, r, a) {
		t.Fatal("a completed visitor's pass still passes after the grace")
	}
	if minted, _ := pollMints(t, r, a); minted {
		t.Fatal("a completed visitor got a new pass after the grace")
	}
	if !passes(t, r, b) {
		t.Fatal("another visitor's pass stopped")
	}
}
