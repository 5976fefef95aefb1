package webhooktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Verify checks a request's headers and body the way the Standard
// Webhooks specification tells a receiver to: the key is the base64 after
// "whsec_"; the signed content is "<webhook-id>.<webhook-timestamp>.<body>";
// webhook-signature is a space-delimited list of
// "<version>,<base64 signature>" of which a v1 one must be the
// HMAC-SHA256 of the content under the key; the timestamp must be within
// five minutes of now.
func Verify(whsec string, h http.Header, body []byte, now time.Time) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(whsec, "whsec_"))
	if err != nil {
		return err
	}
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("webhooktest: a Standard Webhooks header is missing")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return err
	}
	if d := now.Sub(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return errors.New("webhooktest: timestamp not within five minutes")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, s := range strings.Split(sigs, " ") {
		if v, sig, _ := strings.Cut(s, ","); v == "v1" && hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return errors.New("webhooktest: no v1 signature matches")
}

// Whsec returns the whsec_ form of a plain secret, as a Standard Webhooks
// library is given it; a whsec_ secret is returned as it is.
func Whsec(secret string) string {
	if strings.HasPrefix(secret, "whsec_") {
		return secret
	}
	return "whsec_" + base64.StdEncoding.EncodeToString([]byte(secret))
}

// Request is one delivery attempt the receiver got.
type Request struct {
	At     time.Time
	ID     string // webhook-id
	Header http.Header
	Body   []byte
	// Event is the body decoded; Kind its "kind".
	Event map[string]any
	Kind  string
	// Err is the signature check's error (nil: verified).
	Err error
	// Status is what the receiver answered.
	Status int
}

// Receiver is a webhook endpoint on a local server. Safe for concurrent
// use.
type Receiver struct {
	// URL is where to deliver.
	URL string

	whsec string
	fails int // first attempts of each id answered 500

	mu   sync.Mutex
	got  []Request
	seen map[string]int // attempts by id
}

// Start starts a receiver for the given secret (whsec_ or plain) that
// answers the first fails attempts of every message id with 500 and the
// rest with 204 (a request whose signature fails gets 401). It stops at
// the test's end.
func Start(t testing.TB, secret string, fails int) *Receiver {
	r := &Receiver{whsec: Whsec(secret), fails: fails, seen: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/hook"
	return r
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	rq := Request{At: time.Now(), ID: req.Header.Get("webhook-id"), Header: req.Header.Clone(), Body: body}
	rq.Err = Verify(r.whsec, req.Header, body, rq.At)
	if err := json.Unmarshal(body, &rq.Event); err != nil && rq.Err == nil {
		rq.Err = err
	}
	rq.Kind, _ = rq.Event["kind"].(string)
	r.mu.Lock()
	r.seen[rq.ID]++
	switch {
	case rq.Err != nil:
		rq.Status = http.StatusUnauthorized
	case r.seen[rq.ID] <= r.fails:
		rq.Status = http.StatusInternalServerError
	default:
		rq.Status = http.StatusNoContent
	}
	r.got = append(r.got, rq)
	r.mu.Unlock()
	w.WriteHeader(rq.Status)
}

// Requests returns every attempt so far, in arrival order.
func (r *Receiver) Requests() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// Accepted returns the events of one kind accepted so far (answered 2xx),
// one per message id.
func (r *Receiver) Accepted(kind string) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []map[string]any
	ids := map[string]bool{}
	for _, rq := range r.got {
		if rq.Kind == kind && rq.Status < 300 && !ids[rq.ID] {
			ids[rq.ID] = true
			out = append(out, rq.Event)
		}
	}
	return out
}
