package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/internal/testkit/webhooktest"
	"github.com/waitroom/waitroom/plugins"
	"github.com/waitroom/waitroom/plugins/webhook"
)

const secret = "0123456789abcdef0123456789abcdef-test"

// received is one request the receiver got.
type received struct {
	at      time.Time
	header  http.Header
	body    []byte
	sigErr  error
	stdErr  error // the Standard Webhooks check, by webhooktest.Verify
	payload map[string]any
}

// receiver is a webhook endpoint as a local server. It answers each
// request with the next status of script (200 once the script runs out),
// after waiting on gate when gate is not nil.
type receiver struct {
	srv *httptest.Server

	mu      sync.Mutex
	script  []int
	headers []http.Header // extra answer headers, parallel to script
	got     []received
	gate    chan struct{}
}

func newReceiver(t *testing.T, script ...int) *receiver {
	r := &receiver{script: script}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	// Reading the body first lets the server notice a client that hangs
	// up while the handler waits at the gate.
	body, _ := io.ReadAll(req.Body)
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-req.Context().Done():
			return
		}
	}
	rec := received{at: time.Now(), header: req.Header.Clone(), body: body}
	rec.sigErr = webhook.VerifySignature(secret, req.Header.Get(webhook.SignatureHeader), body, time.Now(), time.Minute)
	rec.stdErr = webhooktest.Verify(webhooktest.Whsec(secret), req.Header, body, time.Now())
	_ = json.Unmarshal(body, &rec.payload)
	r.mu.Lock()
	n := len(r.got)
	r.got = append(r.got, rec)
	status := http.StatusOK
	if n < len(r.script) {
		status = r.script[n]
		if n < len(r.headers) {
			for k, v := range r.headers[n] {
				w.Header()[k] = v
			}
		}
	}
	r.mu.Unlock()
	if req.Method != http.MethodPost {
		status = http.StatusMethodNotAllowed
	}
	w.WriteHeader(status)
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

func newSink(t *testing.T, section string) *webhook.Sink {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(section), &doc); err != nil {
		t.Fatal(err)
	}
	s, err := plugins.Sinks.Build(context.Background(), "webhook", doc.Content[0], plugins.Env{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s.(*webhook.Sink)
}

// cfg is a section for a sink delivering to r with quick retries; lines
// in more add keys or override these.
func cfg(r *receiver, more string) string {
	base := fmt.Sprintf("url: %s/hook\nsecret: %s\nbackoff: 10ms\nmax_backoff: 50ms\ntimeout: 2s\n", r.srv.URL, secret)
	var out strings.Builder
	for line := range strings.Lines(base) {
		key, _, _ := strings.Cut(line, ":")
		if !strings.Contains(more, key+":") {
			out.WriteString(line)
		}
	}
	return out.String() + more
}

func closeSink(t *testing.T, s *webhook.Sink) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

var sold = plugins.Event{
	Kind: plugins.KindSold, Event: "tour-2026", Visitor: "v-123",
	At:   time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC),
	Data: map[string]any{"order": "o-9", "seats": []string{"A1", "A2"}},
}

func TestDeliverySigned(t *testing.T) {
	r := newReceiver(t)
	s := newSink(t, cfg(r, ""))
	s.Publish(sold)
	closeSink(t, s)

	got := r.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	req := got[0]
	if req.sigErr != nil {
		t.Errorf("VerifySignature: %v", req.sigErr)
	}
	if req.stdErr != nil {
		t.Errorf("Standard Webhooks signature: %v", req.stdErr)
	}
	if err := webhook.Verify(secret, req.header, req.body, time.Now(), time.Minute); err != nil {
		t.Errorf("webhook.Verify: %v", err)
	}
	if h := req.header.Get(webhook.EventHeader); h != "sold" {
		t.Errorf("%s = %q", webhook.EventHeader, h)
	}
	if ct := req.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	id := req.header.Get(webhook.IdempotencyHeader)
	if len(id) != 36 || !strings.HasPrefix(id, "msg_") || req.payload["id"] != id || req.header.Get(webhook.IDHeader) != id {
		t.Errorf("Idempotency-Key %q, webhook-id %q, body id %v", id, req.header.Get(webhook.IDHeader), req.payload["id"])
	}
	want := map[string]any{
		"id": id, "kind": "sold", "event": "tour-2026", "visitor": "v-123", "at": "2026-03-01T10:00:00Z",
		"data": map[string]any{"order": "o-9", "seats": []any{"A1", "A2"}},
	}
	if g, w := fmt.Sprint(req.payload), fmt.Sprint(want); g != w {
		t.Errorf("body %s\nwant %s", g, w)
	}
	// The signature covers the body: any change breaks it.
	tampered := strings.Replace(string(req.body), "o-9", "o-8", 1)
	if err := webhook.VerifySignature(secret, req.header.Get(webhook.SignatureHeader), []byte(tampered), time.Now(), time.Minute); !errors.Is(err, webhook.ErrSignatureMismatch) {
		t.Errorf("tampered body: %v, want ErrSignatureMismatch", err)
	}
	if st := s.Stats(); st != (webhook.Stats{Delivered: 1}) {
		t.Errorf("Stats = %+v", st)
	}
}

func TestDeliveryIDsUnique(t *testing.T) {
	r := newReceiver(t)
	s := newSink(t, cfg(r, ""))
	for range 50 {
		s.Publish(sold)
	}
	closeSink(t, s)
	ids := map[string]bool{}
	for _, req := range r.requests() {
		ids[req.header.Get(webhook.IdempotencyHeader)] = true
	}
	if len(ids) != 50 {
		t.Errorf("%d distinct ids over 50 events", len(ids))
	}
}

func TestRetries(t *testing.T) {
	tests := []struct {
		name      string
		script    []int
		attempts  int
		delivered bool
	}{
		{"500 then success", []int{500, 503, 200}, 3, true},
		{"408 retried", []int{408, 204}, 2, true},
		{"400 final", []int{400}, 1, false},
		{"404 final", []int{404}, 1, false},
		{"301 final", []int{301}, 1, false},
		{"gives up after max_attempts", []int{500, 500, 500, 500, 500, 500}, 3, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newReceiver(t, tc.script...)
			s := newSink(t, cfg(r, "max_attempts: 3\n"))
			s.Publish(sold)
			closeSink(t, s)
			got := r.requests()
			if len(got) != tc.attempts {
				t.Fatalf("%d attempts, want %d", len(got), tc.attempts)
			}
			for i, req := range got {
				if req.sigErr != nil {
					t.Errorf("attempt %d: %v", i+1, req.sigErr)
				}
				if req.stdErr != nil {
					t.Errorf("attempt %d: Standard Webhooks signature: %v", i+1, req.stdErr)
				}
				if req.header.Get(webhook.IdempotencyHeader) != got[0].header.Get(webhook.IdempotencyHeader) ||
					req.header.Get(webhook.IDHeader) != got[0].header.Get(webhook.IDHeader) {
					t.Errorf("attempt %d has another Idempotency-Key or webhook-id", i+1)
				}
				if a := req.header.Get(webhook.AttemptHeader); a != fmt.Sprint(i+1) {
					t.Errorf("attempt %d: %s = %q", i+1, webhook.AttemptHeader, a)
				}
				if string(req.body) != string(got[0].body) {
					t.Errorf("attempt %d sent another body", i+1)
				}
			}
			want := webhook.Stats{Failed: 1}
			if tc.delivered {
				want = webhook.Stats{Delivered: 1}
			}
			if st := s.Stats(); st != want {
				t.Errorf("Stats = %+v, want %+v", st, want)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	r := newReceiver(t, 429, 200)
	r.headers = []http.Header{{"Retry-After": {"1"}}}
	s := newSink(t, cfg(r, "max_backoff: 5s\n"))
	s.Publish(sold)
	closeSink(t, s)
	got := r.requests()
	if len(got) != 2 {
		t.Fatalf("%d attempts, want 2", len(got))
	}
	if gap := got[1].at.Sub(got[0].at); gap < 900*time.Millisecond {
		t.Errorf("retried after %s, Retry-After asked for 1s", gap)
	}
	if st := s.Stats(); st.Delivered != 1 {
		t.Errorf("Stats = %+v", st)
	}
}

func TestNetworkErrorRetried(t *testing.T) {
	r := newReceiver(t)
	r.srv.Close() // nothing listens at the URL any more
	s := newSink(t, cfg(r, "max_attempts: 3\n"))
	s.Publish(sold)
	closeSink(t, s)
	if st := s.Stats(); st != (webhook.Stats{Failed: 1}) {
		t.Errorf("Stats = %+v", st)
	}
}

func TestQueueOverflow(t *testing.T) {
	r := newReceiver(t)
	r.gate = make(chan struct{})
	s := newSink(t, cfg(r, "queue_size: 2\nworkers: 1\n"))
	const n = 100
	start := time.Now()
	for range n {
		s.Publish(sold)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Publish blocked: %d events took %s", n, d)
	}
	// One in flight (held at the gate) and two queued at most.
	if st := s.Stats(); st.Dropped < n-3 || st.Queued > 2 {
		t.Errorf("Stats = %+v, want at least %d dropped", st, n-3)
	}
	close(r.gate)
	closeSink(t, s)
	st := s.Stats()
	if st.Delivered+st.Dropped != n || st.Failed != 0 {
		t.Errorf("Stats = %+v: delivered and dropped should add up to %d", st, n)
	}
	if len(r.requests()) != int(st.Delivered) {
		t.Errorf("%d requests, %d delivered", len(r.requests()), st.Delivered)
	}
}

func TestCloseDrains(t *testing.T) {
	r := newReceiver(t, 500) // the first delivery is retried during the drain
	s := newSink(t, cfg(r, "workers: 1\n"))
	const n = 20
	for range n {
		s.Publish(sold)
	}
	closeSink(t, s)
	if st := s.Stats(); st != (webhook.Stats{Delivered: n}) {
		t.Errorf("Stats = %+v, want all %d delivered", st, n)
	}
	// Closed: further events are dropped, not sent, and nothing panics.
	s.Publish(sold)
	if st := s.Stats(); st.Dropped != 1 {
		t.Errorf("after Close, Stats = %+v", st)
	}
	closeSink(t, s) // twice is fine
}

func TestCloseDeadline(t *testing.T) {
	r := newReceiver(t)
	r.gate = make(chan struct{}) // never opened: the receiver hangs
	s := newSink(t, cfg(r, "workers: 1\ntimeout: 1m\n"))
	for range 5 {
		s.Publish(sold)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := s.Close(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v, want the context's error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %s past its deadline", d)
	}
	if st := s.Stats(); st.Failed+st.Dropped != 5 || st.Delivered != 0 {
		t.Errorf("Stats = %+v, want all 5 failed or dropped", st)
	}
}

func TestKindsFilter(t *testing.T) {
	r := newReceiver(t)
	s := newSink(t, cfg(r, "kinds: [sold, sold_out]\n"))
	for _, k := range []string{plugins.KindJoined, plugins.KindSold, plugins.KindAdmitted, plugins.KindSoldOut, plugins.KindHold} {
		e := sold
		e.Kind = k
		s.Publish(e)
	}
	closeSink(t, s)
	var kinds []string
	for _, req := range r.requests() {
		kinds = append(kinds, req.header.Get(webhook.EventHeader))
	}
	slices.Sort(kinds)
	if !slices.Equal(kinds, []string{"sold", "sold_out"}) {
		t.Errorf("delivered kinds %q", kinds)
	}
	if st := s.Stats(); st != (webhook.Stats{Delivered: 2}) {
		t.Errorf("Stats = %+v (filtered events are neither dropped nor failed)", st)
	}
}

func TestUnencodableEvent(t *testing.T) {
	r := newReceiver(t)
	s := newSink(t, cfg(r, ""))
	e := sold
	e.Data = map[string]any{"f": func() {}}
	s.Publish(e)
	closeSink(t, s)
	if st := s.Stats(); st != (webhook.Stats{Failed: 1}) {
		t.Errorf("Stats = %+v", st)
	}
}

func TestValidate(t *testing.T) {
	base := "url: https://hooks.example.com/waitroom\nsecret: " + secret + "\n"
	tests := []struct {
		name, section string
		paths         []string
	}{
		{"minimal", base, nil},
		{"http", "url: http://10.0.0.5:9000/\nsecret: " + secret + "\n", nil},
		{"everything", base + "timeout: 2s\nmax_attempts: 10\nbackoff: 500ms\nmax_backoff: 30s\nqueue_size: 100\nworkers: 4\nkinds: [joined, admitted, no_show, hold, sold, released, sold_out, paused, resumed, mode_changed]\n", nil},
		{"empty", "{}", []string{"url", "secret"}},
		{"unknown key", base + "retries: 3\n", []string{""}},
		{"every problem", "url: ftp://example.com/\nsecret: short\ntimeout: 1ms\nmax_attempts: 21\nbackoff: 2h\nmax_backoff: 2h\nqueue_size: -1\nworkers: 65\nkinds: [sold, refund, sold]\n",
			[]string{"url", "secret", "timeout", "max_attempts", "backoff", "max_backoff", "queue_size", "workers", "kinds[1]", "kinds[2]"}},
		{"max_backoff below backoff", base + "backoff: 10s\nmax_backoff: 5s\n", []string{"max_backoff"}},
		{"unexpanded secret", "url: https://h.example.com/\nsecret: ${WEBHOOK_SECRET_THAT_IS_LONG_ENOUGH_X}\n", []string{"secret"}},
		{"guessable secret", "url: https://h.example.com/\nsecret: " + strings.Repeat("hook-", 8) + "\n", []string{"secret"}},
		{"whsec secret", "url: https://h.example.com/\nsecret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n", nil},
		{"whsec secret guessable", "url: https://h.example.com/\nsecret: whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n", []string{"secret"}},
		{"whsec secret not base64", "url: https://h.example.com/\nsecret: whsec_!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n", []string{"secret"}},
		{"whsec secret of 12 bytes", "url: https://h.example.com/\nsecret: whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n", []string{"secret"}},
		{"url with credentials", "url: https://u:p@h.example.com/\nsecret: " + secret + "\n", []string{"url"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tc.section), &doc); err != nil {
				t.Fatal(err)
			}
			err := plugins.Sinks.Validate("webhook", doc.Content[0])
			var got []string
			for _, fe := range plugins.FieldErrors(err) {
				got = append(got, fe.Path)
			}
			if !slices.Equal(got, tc.paths) {
				t.Errorf("error paths %q, want %q\n%v", got, tc.paths, err)
			}
		})
	}
}

func TestVerifySignature(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{"id":"x","kind":"sold"}`)
	// Recorded with the scheme: hex HMAC-SHA256 of "1700000000." + body.
	sign := func(key string, ts int64, b []byte) string {
		return signHeader(key, ts, b)
	}
	valid := sign(secret, now.Unix(), body)
	tests := []struct {
		name   string
		header string
		body   []byte
		now    time.Time
		want   error
	}{
		{"valid", valid, body, now, nil},
		{"within tolerance", valid, body, now.Add(4 * time.Minute), nil},
		{"rotation: second v1 matches", valid[:strings.Index(valid, ",")] + ",v1=" + strings.Repeat("0", 64) + valid[strings.Index(valid, ","):], body, now, nil},
		{"spaces and unknown keys", "t=1700000000 , v0=abc, " + valid[strings.Index(valid, ",")+1:], body, now, nil},
		{"stale", valid, body, now.Add(6 * time.Minute), webhook.ErrSignatureStale},
		{"from the future", valid, body, now.Add(-6 * time.Minute), webhook.ErrSignatureStale},
		{"other body", valid, []byte(`{"id":"y","kind":"sold"}`), now, webhook.ErrSignatureMismatch},
		{"other secret", sign("another-secret-another-secret-xx", now.Unix(), body), body, now, webhook.ErrSignatureMismatch},
		{"time changed", strings.Replace(valid, "t=1700000000", "t=1700000001", 1), body, now, webhook.ErrSignatureMismatch},
		{"empty", "", body, now, webhook.ErrSignatureMalformed},
		{"no t", valid[strings.Index(valid, ",")+1:], body, now, webhook.ErrSignatureMalformed},
		{"no v1", "t=1700000000", body, now, webhook.ErrSignatureMalformed},
		{"bad hex", "t=1700000000,v1=zz", body, now, webhook.ErrSignatureMalformed},
		{"bad t", "t=+1700000000,v1=" + strings.Repeat("0", 64), body, now, webhook.ErrSignatureMalformed},
		{"two t", "t=1,t=2,v1=" + strings.Repeat("0", 64), body, now, webhook.ErrSignatureMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := webhook.VerifySignature(secret, tc.header, tc.body, tc.now, 5*time.Minute)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("VerifySignature = %v, want %v", err, tc.want)
			}
		})
	}
}
