package webhook

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/bits"
	mrand "math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/waitroom/waitroom/plugins"
	"github.com/waitroom/waitroom/plugins/internal/httpc"
	"github.com/waitroom/waitroom/plugins/internal/signature"
)

// Headers of a delivery: the Standard Webhooks three, and waitroom's own
// (kept for receivers written against them).
const (
	IDHeader          = signature.IDHeader
	TimestampHeader   = signature.TimestampHeader
	StandardHeader    = signature.StandardHeader
	SignatureHeader   = signature.Header
	EventHeader       = "X-Waitroom-Event"
	IdempotencyHeader = "Idempotency-Key"
	// AttemptHeader numbers the attempt, 1 for the first.
	AttemptHeader = "X-Waitroom-Attempt"
)

// discardLimit bounds how much of a receiver's answer is read (and
// dropped) to keep the connection reusable.
const discardLimit = 64 << 10

// Sink delivers events to one URL. Safe for concurrent use.
type Sink struct {
	cfg    Config          // resolved
	secret []byte          // the HMAC key (signature.Key of the configured secret)
	kinds  map[string]bool // nil: every kind
	client *http.Client
	log    *slog.Logger
	now    func() time.Time

	mu     sync.RWMutex // guards closed and sends on queue against close(queue)
	closed bool
	queue  chan delivery

	// ctx is canceled when Close gives up waiting, aborting deliveries in
	// flight and backoff waits.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	delivered, dropped, failed atomic.Uint64
}

// delivery is one event, encoded once, as it is sent on every attempt.
type delivery struct {
	id, kind string
	body     []byte
}

// Stats counts a sink's events since it was made: a snapshot, plain data.
type Stats struct {
	// Delivered: answered 2xx.
	Delivered uint64
	// Dropped: not attempted, because the queue was full, the sink was
	// closed, or Close's context ended first.
	Dropped uint64
	// Failed: given up on after a final answer, max_attempts attempts, or
	// Close's context ending mid-delivery; or not encodable as JSON.
	Failed uint64
	// Queued: waiting for a worker now.
	Queued int
}

// New validates cfg and returns a sink with its delivery workers started.
// env.Log gets delivery failures (nil: discarded). Close stops it.
func New(cfg Config, env plugins.Env) (*Sink, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.resolved()
	key, err := signature.Key(cfg.Secret)
	if err != nil {
		return nil, err // Validate refused it already
	}
	log := env.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Sink{
		cfg:    cfg,
		secret: key,
		client: httpc.NewClient(cfg.Workers),
		log:    log.With("sink", "webhook"),
		now:    time.Now,
		queue:  make(chan delivery, cfg.QueueSize),
	}
	if len(cfg.Kinds) > 0 {
		s.kinds = map[string]bool{}
		for _, k := range cfg.Kinds {
			s.kinds[k] = true
		}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Add(cfg.Workers)
	for range cfg.Workers {
		go s.work()
	}
	return s, nil
}

// Publish queues e for delivery, unless its kind is filtered out. It
// never blocks: when the queue is full or the sink closed, e is dropped
// and counted. e is encoded before Publish returns, so the caller may
// reuse e.Data afterwards. An e without an ID (or with one a Standard
// Webhooks receiver would refuse) gets a random one.
func (s *Sink) Publish(e plugins.Event) {
	if s.kinds != nil && !s.kinds[e.Kind] {
		return
	}
	if !validID(e.ID) {
		var id [16]byte
		_, _ = rand.Read(id[:]) // never fails (crypto/rand, Go 1.24+)
		e.ID = "msg_" + hex.EncodeToString(id[:])
	}
	d := delivery{id: e.ID, kind: e.Kind}
	body, err := json.Marshal(e)
	if err != nil {
		s.failed.Add(1)
		s.log.Error("webhook: event not encodable as JSON; dropped", "kind", e.Kind, "err", err)
		return
	}
	d.body = body

	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		s.drop("closed")
		return
	}
	select {
	case s.queue <- d:
	default:
		s.drop("queue full")
	}
}

// validID tells whether id can name a message: 1 to 128 bytes of
// letters, digits, '_' and '-'.
func validID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := range len(id) {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// drop counts a dropped event, logging the 1st, 2nd, 4th, 8th... so that
// a flood of drops cannot flood the log.
func (s *Sink) drop(why string) {
	if n := s.dropped.Add(1); bits.OnesCount64(n) == 1 {
		s.log.Warn("webhook: events dropped", "why", why, "dropped_total", n, "queue_size", s.cfg.QueueSize)
	}
}

// Stats returns the sink's counters.
func (s *Sink) Stats() Stats {
	return Stats{
		Delivered: s.delivered.Load(),
		Dropped:   s.dropped.Load(),
		Failed:    s.failed.Load(),
		Queued:    len(s.queue),
	}
}

// Close stops accepting events and delivers what is queued (with its
// retries) until ctx ends. Then it aborts what is left, counts it, and
// returns ctx's error. It returns once every worker has stopped. Calling
// it again waits the same way.
func (s *Sink) Close(ctx context.Context) error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.queue)
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		s.cancel()
		return nil
	case <-ctx.Done():
		s.cancel()
		<-done
		return fmt.Errorf("webhook: close: %w; undelivered events dropped", ctx.Err())
	}
}

func (s *Sink) work() {
	defer s.wg.Done()
	for d := range s.queue {
		if s.ctx.Err() != nil {
			s.dropped.Add(1)
			continue
		}
		s.deliver(d)
	}
}

// deliver sends d, retrying as configured.
func (s *Sink) deliver(d delivery) {
	for attempt := 1; ; attempt++ {
		retry, after, err := s.attempt(d, attempt)
		if err == nil {
			s.delivered.Add(1)
			return
		}
		if !retry || attempt >= s.cfg.MaxAttempts || s.ctx.Err() != nil {
			s.failed.Add(1)
			s.log.Warn("webhook: delivery failed", "id", d.id, "kind", d.kind, "attempts", attempt, "err", err)
			return
		}
		wait := s.backoff(attempt)
		if after > 0 {
			wait = min(after, s.cfg.MaxBackoff)
		}
		s.log.Debug("webhook: delivery will be retried", "id", d.id, "attempt", attempt, "in", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-s.ctx.Done():
			t.Stop()
			s.failed.Add(1)
			s.log.Warn("webhook: delivery abandoned at close", "id", d.id, "kind", d.kind, "attempts", attempt, "err", err)
			return
		}
	}
}

// backoff is the wait after failed attempt n (1-based): backoff·2^(n-1),
// at most max_backoff, jittered down by up to half so that workers
// retrying together spread out.
func (s *Sink) backoff(n int) time.Duration {
	d := s.cfg.Backoff
	for i := 1; i < n && d < s.cfg.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, s.cfg.MaxBackoff)
	return d/2 + mrand.N(d/2+1)
}

// errStatus is a non-2xx answer.
type errStatus int

func (e errStatus) Error() string { return "webhook: receiver answered HTTP " + strconv.Itoa(int(e)) }

// attempt makes one delivery attempt. It returns nil on a 2xx answer;
// else whether to retry, and the wait a Retry-After header asked for.
func (s *Sink) attempt(d delivery, n int) (retry bool, after time.Duration, err error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.URL, bytes.NewReader(d.body))
	if err != nil {
		return false, 0, err
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "waitroom-webhook")
	h.Set(EventHeader, d.kind)
	h.Set(IdempotencyHeader, d.id)
	h.Set(AttemptHeader, strconv.Itoa(n))
	now := s.now()
	ts, sig := signature.SignStandard(s.secret, d.id, now, d.body)
	h[IDHeader] = []string{d.id} // the spec's lower-case names, as they are
	h[TimestampHeader] = []string{ts}
	h[StandardHeader] = []string{sig}
	h.Set(SignatureHeader, signature.Sign(s.secret, now, d.body))
	resp, err := s.client.Do(req)
	if err != nil {
		// Network errors and timeouts are worth another try; Close
		// aborting is checked by the caller.
		return true, 0, fmt.Errorf("webhook: %w", err)
	}
	httpc.Discard(resp.Body, discardLimit)
	code := resp.StatusCode
	switch {
	case code >= 200 && code <= 299:
		return false, 0, nil
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
		return true, retryAfter(resp.Header.Get("Retry-After"), s.now()), errStatus(code)
	}
	return false, 0, errStatus(code)
}

// retryAfter reads a Retry-After header, delay-seconds or an HTTP date
// (RFC 9110 §10.2.3); 0 when absent, invalid or past.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Verify checks a delivery the Standard Webhooks way, for receivers
// written in Go: h is the request's headers, body its raw body, secret
// the configured secret (whsec_ or plain). It fails unless a v1
// signature in webhook-signature is the HMAC of "id.timestamp.body" and
// webhook-timestamp is within tolerance of now (5 minutes when tolerance
// is 0 or less). A receiver deduplicates by webhook-id. Errors wrap
// ErrSignatureMalformed, ErrSignatureMismatch or ErrSignatureStale.
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := signature.Key(secret)
	if err != nil {
		return err
	}
	return signature.VerifyStandard(key, h.Get(IDHeader), h.Get(TimestampHeader), h.Get(StandardHeader), body, now, tolerance)
}

// VerifySignature checks a delivery, for receivers: header is the
// X-Waitroom-Signature value, body the raw request body, secret the
// shared secret. It fails unless a v1 value is the body's HMAC and the
// signed time is within tolerance of now (5 minutes when tolerance is 0
// or less). A receiver should also deduplicate by Idempotency-Key, since
// a retry carries a fresh signature. Errors wrap ErrSignatureMalformed,
// ErrSignatureMismatch or ErrSignatureStale.
func VerifySignature(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	key, err := signature.Key(secret)
	if err != nil {
		return err
	}
	return signature.Verify(key, header, body, now, tolerance)
}

// Errors of VerifySignature, for errors.Is.
var (
	ErrSignatureMalformed = signature.ErrMalformed
	ErrSignatureMismatch  = signature.ErrMismatch
	ErrSignatureStale     = signature.ErrStale
)

var _ plugins.Sink = (*Sink)(nil)
