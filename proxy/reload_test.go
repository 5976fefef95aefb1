package proxy

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/static"
)

// kidOf returns a JWT's key id.
func kidOf(t *testing.T, token string) string {
	t.Helper()
	head, _, _ := strings.Cut(token, ".")
	b, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		t.Fatal(err)
	}
	var h struct{ Kid string }
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	return h.Kid
}

// TestReloadLive reloads the proxy (and the engine's event set) while a
// visitor holds a pass and another a ticket: the pass keeps working
// across a key rotation, the new route table and page texts apply, the
// removed event's paths follow the new table, and a refused reload
// changes nothing.
func TestReloadLive(t *testing.T) {
	r := newRig(t)
	admitted := newVisitor(t, "Mozilla/5.0 admitted")
	admitted.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`)
	var st statusJSON
	for d := 11 * time.Second; d < 20*time.Second && st.Status != "admitted"; d += time.Second {
		r.tick(t, d)
		st = decodeStatus(t, admitted.do(t, "GET", r.url+"/_wr/api/status?event=show", ""))
	}
	pass := admitted.cookie(r.url, "wr_pass_show")
	if st.Status != "admitted" || pass == "" || kidOf(t, pass) != "k1" {
		t.Fatalf("not admitted: %+v", st)
	}
	waiting := newVisitor(t, "Mozilla/5.0 waiting")
	before := decodeStatus(t, waiting.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`))
	ticket := waiting.cookie(r.url, "wr_ticket_show")

	// The new configuration: k2 signs, k1 still verifies; "other" is
	// gone and its paths pass; a new route; new page texts.
	keys, err := admission.NewKeyring(admission.Key{ID: "k2", Alg: "HS256", Secret: []byte(testSecret + "-2")},
		admission.Key{ID: "k1", Alg: "HS256", Secret: []byte(testSecret)})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := static.New([]static.PageConfig{{Event: "show", Name: "The Big Show", Prefix: "/_wr"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.engine.Apply([]admission.EventConfig{showEvent()}); err != nil {
		t.Fatal(err)
	}
	next := r.opts
	next.Keys, next.Pages = keys, pages
	next.Routes = []Route{{Prefix: "/show/", Event: "show", Action: ActionQueue},
		{Prefix: "/tickets/", Event: "show", Action: ActionQueue}, {Glob: "/static/**", Action: ActionPass}}
	next.Events = next.Events[:1]
	if err := r.p.Reload(next); err != nil {
		t.Fatal(err)
	}

	if got := admitted.do(t, "GET", r.url+"/show/seats", ""); got.body != "origin:/show/seats" {
		t.Fatalf("the k1 pass after the rotation: %d %s", got.status, got.body)
	}
	if got := admitted.do(t, "GET", r.url+"/tickets/1", ""); got.body != "origin:/tickets/1" {
		t.Fatalf("the pass on the new route: %d %s", got.status, got.body)
	}
	after := decodeStatus(t, waiting.do(t, "GET", r.url+"/_wr/api/status?event=show", ""))
	if after.Tranche == nil || before.Tranche == nil || *after.Tranche != *before.Tranche || waiting.cookie(r.url, "wr_ticket_show") != ticket {
		t.Fatalf("the waiting visitor's place changed: before %+v, after %+v", before, after)
	}
	if page := newVisitor(t, "Mozilla/5.0 new").do(t, "GET", r.url+"/tickets/x", ""); !strings.Contains(page.body, "The Big Show") {
		t.Fatalf("the new page texts are not served: %d %.200s", page.status, page.body)
	}
	fresh := newVisitor(t, "Mozilla/5.0 fresh")
	fresh.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`)
	if kid := kidOf(t, fresh.cookie(r.url, "wr_ticket_show")); kid != "k2" {
		t.Fatalf("a ticket issued after the rotation is signed by %q", kid)
	}
	// The removed event: its status fails, its old path follows the new
	// table (unmatched: passed to the origin).
	if res := fresh.do(t, "GET", r.url+"/_wr/api/status?event=other", ""); res.status != 404 {
		t.Fatalf("status of the removed event: %d %s", res.status, res.body)
	}
	if got := fresh.do(t, "GET", r.url+"/other/x", ""); got.body != "origin:/other/x" {
		t.Fatalf("the removed event's path: %d %s", got.status, got.body)
	}

	// Retiring k1 stops its pass at once, though it was verified (and
	// cached) before.
	retired := next
	if retired.Keys, err = admission.NewKeyring(admission.Key{ID: "k2", Alg: "HS256", Secret: []byte(testSecret + "-2")}); err != nil {
		t.Fatal(err)
	}
	if err := r.p.Reload(retired); err != nil {
		t.Fatal(err)
	}
	if got := admitted.do(t, "GET", r.url+"/show/seats", ""); got.body == "origin:/show/seats" {
		t.Fatal("a pass of a retired key still opens the gate")
	}
	if got := fresh.do(t, "GET", r.url+"/_wr/api/status?event=show", ""); got.status != 200 {
		t.Fatalf("a k2 ticket after k1 retired: %d %s", got.status, got.body)
	}

	// A reload naming an unknown event is refused whole.
	bad := next
	bad.Routes = append([]Route{{Prefix: "/gone/", Event: "other", Action: ActionQueue}}, next.Routes...)
	bad.Pages = r.opts.Pages
	if err := r.p.Reload(bad); err == nil || !strings.Contains(err.Error(), `unknown event "other"`) {
		t.Fatalf("a reload naming an unknown event: %v", err)
	}
	if page := newVisitor(t, "Mozilla/5.0 new").do(t, "GET", r.url+"/tickets/x", ""); !strings.Contains(page.body, "The Big Show") {
		t.Fatal("a refused reload changed the pages")
	}
}

// reloadSame is the admin API's reload in these tests: the proxy
// reloads the options it runs on, and answers as the wiring does.
func (r *rig) reloadSame(context.Context) (any, []string, error) {
	if err := r.p.Reload(r.opts); err != nil {
		return nil, strings.Split(err.Error(), "\n"), nil
	}
	none := map[string][]string{"added": {}, "changed": {}, "removed": {}}
	return map[string]any{"result": "applied", "events": none, "origins": none,
		"changed": []string{}, "needs_restart": []string{}}, nil, nil
}

// TestAdminReload: POST /admin/v1/reload needs the token, answers the
// reload's report, and every problem of a refused one with 422.
func TestAdminReload(t *testing.T) {
	r := newRig(t)
	var refuse atomic.Bool
	opts := adminOptions(r)
	opts.Reload = func(ctx context.Context) (any, []string, error) {
		if refuse.Load() {
			bad := r.opts
			bad.Routes = []Route{{Prefix: "/x/", Event: "nope", Action: ActionQueue}, {Prefix: "y", Action: ActionPass}}
			if err := r.p.Reload(bad); err != nil {
				return nil, strings.Split(err.Error(), "\n"), nil
			}
		}
		return r.reloadSame(ctx)
	}
	h, err := r.p.Admin(opts)
	if err != nil {
		t.Fatal(err)
	}
	base := serveAdmin(t, h)
	if code, _ := adminRaw(t, "POST", base+"/admin/v1/reload", "", "", ""); code != 401 {
		t.Fatalf("without a token: %d", code)
	}
	code, body := adminRaw(t, "POST", base+"/admin/v1/reload", adminToken, "", "")
	if code != 200 || !strings.Contains(string(body), `"result":"applied"`) {
		t.Fatalf("reload: %d %s", code, body)
	}
	refuse.Store(true)
	code, body = adminRaw(t, "POST", base+"/admin/v1/reload", adminToken, "", "")
	var out struct {
		Error    string
		Problems []string
	}
	json.Unmarshal(body, &out)
	if code != 422 || out.Error != "config_refused" || len(out.Problems) != 2 {
		t.Fatalf("a refused reload: %d %s", code, body)
	}
}

// TestServerAfterReload: the front server may be made after a reload
// (the record watcher and SIGHUP start first); the streamed-body policy
// it sets holds for the generation in force, not only the first.
func TestServerAfterReload(t *testing.T) {
	r := newRig(t)
	o := r.p.opts
	o.Registerer = nil
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Reload(o); err != nil {
		t.Fatal(err)
	}
	p.Server(ServerConfig{BodyTimeout: 3 * time.Second, BodyMinRate: 512})
	pol := p.gen.Load().body.Load()
	if p.gen.Load() == p || pol == nil || pol.rate != 512 || pol.grace != 3*time.Second {
		t.Fatalf("the generation in force after a reload has body policy %+v", pol)
	}
}
