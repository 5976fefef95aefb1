package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission/redisstore"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// eventsConfig is a replica with the admission store in Redis and the
// admin API on; %[1]s a secret, %[2]s the Redis URL, %[3]s the origin.
const eventsConfig = `
log: {level: warn}
serve:
  listen: 127.0.0.1:0
  keys:
    signing: {secret: %[1]s}
  cookies: {secure: never}
admin:
  listen: 127.0.0.1:0
  token: %[1]s
admission:
  store: redis
  redis: {url: %[2]s}
` + showEvent

// eventsReplica is one running replica of eventsConfig.
type eventsReplica struct {
	w      *Waitroom
	base   string // the visitors' listener
	admin  string // the admin listener
	token  string
	stop   func()
	client *http.Client
}

func startEventsReplica(t *testing.T, file, token string) *eventsReplica {
	t.Helper()
	cfg, err := config.Check(file, config.RoleProxy)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewServe(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), Listeners{})
	if err != nil {
		t.Fatal(err)
	}
	w.ConfigFile = file
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("a replica stopped with %v", err)
			}
		}
	}
	t.Cleanup(stop)
	return &eventsReplica{w: w, base: "http://" + w.Addr().String(), admin: "http://" + w.AdminAddr().String(),
		token: token, stop: stop, client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}}
}

// do sends an admin request and returns the status and the JSON answer.
func (r *eventsReplica) do(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, r.admin+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+r.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// visit GETs a visitor's path and returns the status and body.
func (r *eventsReplica) visit(t *testing.T, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", r.base+path, nil)
	req.Header.Set("User-Agent", "Mozilla/5.0 (events test)")
	req.Header.Set("Accept", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func maxActive(v map[string]any) any {
	caps, _ := v["caps"].(map[string]any)
	return caps["max_active"]
}

// TestEventsAPIReplicas: two replicas over one Redis. An event made at
// replica a gates its path and answers its status at b; a change of its
// caps shows at both; a reload of the file (SIGHUP's) and a restart keep
// it; deleted, it is gone at both. A file event cannot be deleted, and
// a patch of it is an override record both see.
func TestEventsAPIReplicas(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "origin:"+r.URL.Path)
	}))
	defer origin.Close()
	token := randomHex(32)
	file := filepath.Join(t.TempDir(), "waitroom.yaml")
	if err := os.WriteFile(file, fmt.Appendf(nil, eventsConfig, token, srv.URL(),
		strings.TrimPrefix(origin.URL, "http://")), 0o600); err != nil {
		t.Fatal(err)
	}
	a, b := startEventsReplica(t, file, token), startEventsReplica(t, file, token)

	const statusPath = "/_wr/api/status?event=encore"
	if code, body := b.visit(t, "/encore/"); code != 200 || body != "origin:/encore/" {
		t.Fatalf("before: /encore/ at b: %d %q, want the origin's answer", code, body)
	}
	if code, _ := b.visit(t, statusPath); code != 404 {
		t.Fatalf("before: status at b: %d, want 404", code)
	}

	code, got := a.do(t, "POST", "/admin/v1/events", `{"event":{"id":"encore","name":"Encore",
		"queue_opens_at":"2020-01-01T10:00:00Z","on_sale_at":"2030-01-01T10:00:00Z","landing_path":"/encore/",
		"caps":{"max_active":40}},"routes":[{"prefix":"/encore/"}]}`)
	if code != 201 || got["id"] != "encore" || got["config_origin"] != "api" || maxActive(got) != 40.0 {
		t.Fatalf("POST at a: %d %v", code, got)
	}
	// At a at once (the answer is the state after the change).
	if code, body := a.visit(t, "/encore/"); body == "origin:/encore/" {
		t.Fatalf("/encore/ at a after POST: %d %q: not gated", code, body)
	}
	waitFor(t, "the event at b", func() bool {
		code, body := b.visit(t, "/encore/")
		return code != 200 || body != "origin:/encore/"
	})
	// Known now: a visitor without a ticket is asked to join.
	if code, body := b.visit(t, statusPath); code != 401 || !strings.Contains(body, "no_ticket") {
		t.Fatalf("status at b: %d %s, want 401 no_ticket", code, body)
	}
	if code, v := b.do(t, "GET", "/admin/v1/events/encore", ""); code != 200 || v["config_origin"] != "api" {
		t.Fatalf("GET at b: %d %v", code, v)
	}
	if code, v := a.do(t, "POST", "/admin/v1/events", `{"event":{"id":"encore"}}`); code != 409 || v["error"] != "event_exists" {
		t.Fatalf("POST again: %d %v", code, v)
	}
	// A route naming another event, a bad cap: refused whole, with every
	// problem, named as the request names them.
	code, got = a.do(t, "POST", "/admin/v1/events", `{"event":{"id":"bad","caps":{"max_active":-1}},
		"routes":[{"prefix":"/show/"}]}`)
	if ps := fmt.Sprint(got["problems"]); code != 422 || got["error"] != "invalid_event" ||
		!strings.Contains(ps, "event.caps.max_active") || !strings.Contains(ps, "routes[0]") {
		t.Fatalf("invalid POST: %d %v", code, got)
	}
	if code, _ := a.do(t, "GET", "/admin/v1/events/bad", ""); code != 404 {
		t.Fatalf("the refused event exists: %d", code)
	}

	// Caps, at b this time; a sees it.
	if code, v := b.do(t, "PATCH", "/admin/v1/events/encore", `{"event":{"caps":{"max_active":77}}}`); code != 200 || maxActive(v) != 77.0 {
		t.Fatalf("PATCH at b: %d %v", code, v)
	}
	waitFor(t, "the caps at a", func() bool {
		_, v := a.do(t, "GET", "/admin/v1/events/encore", "")
		return maxActive(v) == 77.0
	})
	// The file's event: an override record, seen at both; its queue is
	// open, so its times stay.
	if code, v := a.do(t, "PATCH", "/admin/v1/events/show", `{"event":{"caps":{"max_active":12}}}`); code != 200 ||
		maxActive(v) != 12.0 || v["config_origin"] != "api" {
		t.Fatalf("PATCH show: %d %v", code, v)
	}
	waitFor(t, "show's override at b", func() bool {
		_, v := b.do(t, "GET", "/admin/v1/events/show", "")
		return maxActive(v) == 12.0 && v["config_origin"] == "api"
	})
	if code, v := a.do(t, "PATCH", "/admin/v1/events/show", `{"event":{"queue_opens_at":"2021-01-01T10:00:00Z"}}`); code != 409 || v["error"] != "event_running" {
		t.Fatalf("PATCH show's opening: %d %v", code, v)
	}
	if code, v := a.do(t, "DELETE", "/admin/v1/events/show", ""); code != 409 || v["error"] != "file_event" {
		t.Fatalf("DELETE show: %d %v", code, v)
	}

	// A reload of the file (what SIGHUP does) keeps the API's events.
	if _, err := b.w.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if code, v := b.do(t, "GET", "/admin/v1/events/encore", ""); code != 200 || maxActive(v) != 77.0 {
		t.Fatalf("encore after a reload: %d %v", code, v)
	}
	if _, v := b.do(t, "GET", "/admin/v1/events/show", ""); maxActive(v) != 12.0 {
		t.Fatalf("show after a reload: %v", v)
	}
	// A restart too.
	a.stop()
	a = startEventsReplica(t, file, token)
	if code, v := a.do(t, "GET", "/admin/v1/events/encore", ""); code != 200 || maxActive(v) != 77.0 || v["config_origin"] != "api" {
		t.Fatalf("encore after a restart: %d %v", code, v)
	}
	if code, body := a.visit(t, "/encore/"); body == "origin:/encore/" {
		t.Fatalf("/encore/ after a restart: %d %q: not gated", code, body)
	}

	// Deleted at a: gone at both.
	if code, v := a.do(t, "DELETE", "/admin/v1/events/encore", ""); code != 200 || v["deleted"] != true {
		t.Fatalf("DELETE: %d %v", code, v)
	}
	if code, _ := a.visit(t, statusPath); code != 404 {
		t.Fatalf("status at a after DELETE: %d", code)
	}
	waitFor(t, "the deletion at b", func() bool {
		code, _ := b.visit(t, statusPath)
		return code == 404
	})
	if code, body := b.visit(t, "/encore/"); code != 200 || body != "origin:/encore/" {
		t.Fatalf("/encore/ at b after DELETE: %d %q, want the origin's", code, body)
	}
	if code, v := b.do(t, "DELETE", "/admin/v1/events/encore", ""); code != 404 {
		t.Fatalf("DELETE again: %d %v", code, v)
	}
}

// TestStartFromRecords: a replica starts from the file overlaid with the
// event records. A record that moved a file event's on-sale while its
// queue had not opened, and one event made through the API, are in force
// at once after a restart, although the queue has opened since (a
// schedule may no longer change live, so applying the record on top of
// the file's event would be refused).
func TestStartFromRecords(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	secret := randomHex(32)
	origin := httptest.NewServer(http.NotFoundHandler())
	defer origin.Close()
	file := filepath.Join(t.TempDir(), "waitroom.yaml")
	if err := os.WriteFile(file, fmt.Appendf(nil, eventsConfig, secret, srv.URL(), strings.TrimPrefix(origin.URL, "http://")), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := redisstore.New(context.Background(), redisstore.Options{Client: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for id, body := range map[string]string{
		"show":  `{"event":{"id":"show","on_sale_at":"2031-01-01T10:00:00Z","queue_opens_at":"2020-01-01T10:00:00Z","landing_path":"/show/"}}`,
		"fresh": `{"event":{"id":"fresh","on_sale_at":"2031-01-01T10:00:00Z","landing_path":"/fresh/"},"routes":[{"prefix":"/fresh/"}]}`,
	} {
		if _, err := s.PutEventRecord(context.Background(), id, []byte(body), 0); err != nil {
			t.Fatal(err)
		}
	}
	r := startEventsReplica(t, file, secret)
	show, err := r.w.Engine.Config("show")
	if err != nil || !show.OnSaleAt.Equal(time.Date(2031, 1, 1, 10, 0, 0, 0, time.UTC)) || r.w.eventOrigin("show") != originAPI {
		t.Fatalf("show after a restart: on sale %v (%v), from %q; want the record's 2031, from the API", show.OnSaleAt, err, r.w.eventOrigin("show"))
	}
	if _, err := r.w.Engine.Config("fresh"); err != nil || r.w.eventOrigin("fresh") != originAPI {
		t.Fatalf("fresh after a restart: %v, from %q", err, r.w.eventOrigin("fresh"))
	}
}
