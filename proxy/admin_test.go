package proxy

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

const adminToken = "admin-token-0123456789"

func startAdmin(t *testing.T, r *rig) string {
	t.Helper()
	h, err := r.p.Admin(adminOptions(r))
	if err != nil {
		t.Fatal(err)
	}
	return serveAdmin(t, h)
}

func adminOptions(r *rig) AdminOptions {
	ev := &rigEvents{r: r, api: map[string]bool{}}
	return AdminOptions{Token: adminToken, Gatherer: prometheus.Gatherers{r.reg}, Reload: r.reloadSame,
		Origin: ev.origin, Events: ev}
}

// serveAdmin serves h on a loopback port until the test ends.
func serveAdmin(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

func adminDo(t *testing.T, method, url, token, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode, out
}

func TestAdminAPI(t *testing.T) {
	r := newRig(t)
	base := startAdmin(t, r)
	v := r.admit(t, "ua")
	pass := v.cookie(r.url, "wr_pass_show")

	// Authentication: everything but the health checks needs the token.
	for _, path := range []string{"/admin/v1/events", "/metrics", "/admin/v1/events/show"} {
		if code, _ := adminDo(t, "GET", base+path, "", ""); code != 401 {
			t.Errorf("%s without a token: %d", path, code)
		}
		if code, _ := adminDo(t, "GET", base+path, "wrong-token-wrong-token", ""); code != 401 {
			t.Errorf("%s with a wrong token: %d", path, code)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, _ := adminDo(t, "GET", base+path, "", ""); code != 200 {
			t.Errorf("%s: %d", path, code)
		}
	}

	code, list := adminDo(t, "GET", base+"/admin/v1/events", adminToken, "")
	events, _ := list["events"].([]any)
	if code != 200 || len(events) != 2 {
		t.Fatalf("list: %d %v", code, list)
	}
	code, ev := adminDo(t, "GET", base+"/admin/v1/events/show", adminToken, "")
	if code != 200 || ev["state"] != "selling" || ev["lanes"].(map[string]any)["public"].(map[string]any)["serving"].(float64) < 1 {
		t.Fatalf("event: %d %v", code, ev)
	}
	if code, _ := adminDo(t, "GET", base+"/admin/v1/events/nope", adminToken, ""); code != 404 {
		t.Fatalf("unknown event: %d", code)
	}

	// Pause, caps, resume: each read-modify-write keeps the others.
	if code, ev = adminDo(t, "POST", base+"/admin/v1/events/show/pause", adminToken, ""); code != 200 || ev["control"].(map[string]any)["paused"] != true {
		t.Fatalf("pause: %d %v", code, ev)
	}
	if code, ev = adminDo(t, "PUT", base+"/admin/v1/events/show/caps", adminToken, `{"max_active":3,"max_new_per_minute":60}`); code != 200 {
		t.Fatalf("caps: %d %v", code, ev)
	}
	if c := ev["control"].(map[string]any); c["paused"] != true || ev["caps"].(map[string]any)["max_active"].(float64) != 3 {
		t.Fatalf("caps undid the pause: %v", ev)
	}
	for _, bad := range []string{`{"max_active":-1,"max_new_per_minute":0}`, `{"max_active":1}`, `{"max_active":1,"max_new_per_minute":1,"x":1}`, `[]`,
		`{"max_active":1,"max_new_per_minute":1,"max_active":2}`, `{"max_active":1,"max_new_per_minute":1} {}`,
		`{"MAX_ACTIVE":1,"max_new_per_minute":1}`, `{"max_active":1.5,"max_new_per_minute":1}`} {
		if code, e := adminDo(t, "PUT", base+"/admin/v1/events/show/caps", adminToken, bad); code != 400 || e["error"] != "bad_request" {
			t.Errorf("caps %s: %d %v", bad, code, e)
		}
	}
	r.tick(t, 30*time.Second)
	if code, ev = adminDo(t, "GET", base+"/admin/v1/events/show", adminToken, ""); code != 200 || ev["state"] != "paused" {
		t.Fatalf("state after pause: %d %v", code, ev["state"])
	}
	if code, ev = adminDo(t, "POST", base+"/admin/v1/events/show/resume", adminToken, ""); code != 200 || ev["control"].(map[string]any)["paused"] != nil {
		t.Fatalf("resume: %d %v", code, ev)
	}
	if code, ev = adminDo(t, "DELETE", base+"/admin/v1/events/show/caps", adminToken, ""); code != 200 || ev["control"].(map[string]any)["caps"] != nil {
		t.Fatalf("caps reset: %d %v", code, ev)
	}

	// Revoke the visitor's pass: the gate refuses it at once.
	p, err := r.keys.VerifyPass(pass, "show", v.bindingFor(t), r.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := v.do(t, "GET", r.url+"/show/x", ""); got.body != "origin:/show/x" {
		t.Fatalf("before revocation: %s", got.body)
	}
	if code, out := adminDo(t, "POST", base+"/admin/v1/events/show/revoke", adminToken, `{"pass_id":"`+p.ID+`"}`); code != 200 || out["pass_id"] != p.ID {
		t.Fatalf("revoke: %d %v", code, out)
	}
	if got := v.do(t, "GET", r.url+"/show/x", ""); got.body == "origin:/show/x" {
		t.Fatal("a revoked pass still passes")
	}
	if code, _ := adminDo(t, "POST", base+"/admin/v1/events/show/revoke", adminToken, `{}`); code != 400 {
		t.Fatalf("revoke without an id: %d", code)
	}

	// Metrics: the proxy's series are there.
	r.tick(t, 31*time.Second)
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 1<<16)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	for _, want := range []string{`waitroom_requests_total{action="queue",outcome="forwarded"}`, `waitroom_passes_issued_total{event="show"}`,
		`waitroom_event_state{event="show",state="selling"} 1`, `waitroom_queue_serving{event="show",lane="public"}`,
		`waitroom_passes_refused_total{event="show",reason="revoked"} 1`} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestAdminNeedsToken(t *testing.T) {
	r := newRig(t)
	if _, err := r.p.Admin(AdminOptions{Token: "short"}); err == nil {
		t.Fatal("a short admin token was accepted")
	}
}
