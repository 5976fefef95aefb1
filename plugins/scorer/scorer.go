package scorer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/waitroom/waitroom/challenge"
	"github.com/waitroom/waitroom/plugins"
	"github.com/waitroom/waitroom/plugins/internal/httpc"
	"github.com/waitroom/waitroom/plugins/internal/signature"
)

// ErrBadAnswer is wrapped by Check's error when the scorer answered, but
// not with a usable score: a non-200 status, not JSON, no score, or a
// score outside 0 to 100.
var ErrBadAnswer = errors.New("scorer: unusable answer")

const (
	// MaxResponseBytes bounds the answer read.
	MaxResponseBytes = 16 << 10
	// MaxReasonLen bounds the reason word after "external:".
	MaxReasonLen = 40
	// idleConns kept to the scorer: every scored join calls it.
	idleConns = 128
)

// Scorer asks an external service to score requests. Safe for concurrent
// use.
type Scorer struct {
	cfg    Config
	omit   map[string]bool // lower-case header names
	secret []byte
	auth   string // Authorization header value, "" for none
	client *http.Client
	now    func() time.Time
}

// New validates cfg and returns a scorer. env is not used: errors go to
// the caller, which logs them.
func New(cfg Config, _ plugins.Env) (*Scorer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	omit := cfg.OmitHeaders
	if omit == nil {
		omit = DefaultOmitHeaders
	}
	s := &Scorer{
		cfg:    cfg,
		omit:   map[string]bool{},
		client: httpc.NewClient(idleConns),
		now:    time.Now,
	}
	for _, h := range omit {
		s.omit[strings.ToLower(h)] = true
	}
	if cfg.Secret != "" {
		s.secret = []byte(cfg.Secret)
	}
	if cfg.BearerToken != "" {
		s.auth = "Bearer " + cfg.BearerToken
	}
	return s, nil
}

// wireRequest is the JSON the scorer is sent.
type wireRequest struct {
	Event   string      `json:"event"`
	IP      string      `json:"ip"`
	Headers [][2]string `json:"headers"`
	JA4     string      `json:"ja4"`
	Visitor string      `json:"visitor"`
}

// Check asks the scorer about r. On any failure (timeout, network error,
// an unusable answer) it returns a zero Finding and an error; a scorer
// that answers 0 gives a zero Finding and nil.
func (s *Scorer) Check(ctx context.Context, r *challenge.Request) (challenge.Finding, error) {
	body, err := s.encode(r)
	if err != nil {
		return challenge.Finding{}, fmt.Errorf("scorer: encoding the request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return challenge.Finding{}, fmt.Errorf("scorer: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "waitroom-scorer")
	if s.auth != "" {
		req.Header.Set("Authorization", s.auth)
	}
	if s.secret != nil {
		req.Header.Set(signature.Header, signature.Sign(s.secret, s.now(), body))
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return challenge.Finding{}, fmt.Errorf("scorer: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return challenge.Finding{}, fmt.Errorf("%w: HTTP %d", ErrBadAnswer, resp.StatusCode)
	}
	answer, err := httpc.ReadAll(resp.Body, MaxResponseBytes)
	if err != nil {
		if errors.Is(err, httpc.ErrTooLarge) {
			return challenge.Finding{}, fmt.Errorf("%w: %w", ErrBadAnswer, err)
		}
		return challenge.Finding{}, fmt.Errorf("scorer: reading the answer: %w", err)
	}
	return parseAnswer(answer)
}

func (s *Scorer) encode(r *challenge.Request) ([]byte, error) {
	w := wireRequest{Event: r.Event, JA4: r.JA4, Visitor: r.Visitor, Headers: make([][2]string, 0, len(r.Headers))}
	if r.IP.IsValid() {
		w.IP = r.IP.Unmap().String()
	}
	for _, h := range r.Headers {
		if !s.omit[strings.ToLower(h.Name)] {
			w.Headers = append(w.Headers, [2]string{h.Name, h.Value})
		}
	}
	return json.Marshal(w)
}

// wireAnswer is the JSON the scorer answers.
type wireAnswer struct {
	Score  *float64 `json:"score"`
	Reason string   `json:"reason"`
}

// parseAnswer reads the scorer's answer into a finding.
func parseAnswer(b []byte) (challenge.Finding, error) {
	var a wireAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		return challenge.Finding{}, fmt.Errorf("%w: %w", ErrBadAnswer, err)
	}
	switch {
	case a.Score == nil:
		return challenge.Finding{}, fmt.Errorf("%w: no score", ErrBadAnswer)
	case !(*a.Score >= 0 && *a.Score <= 100):
		return challenge.Finding{}, fmt.Errorf("%w: score %g outside 0 to 100", ErrBadAnswer, *a.Score)
	case *a.Score == 0:
		return challenge.Finding{}, nil
	}
	return challenge.Finding{Suspicion: *a.Score / 100, Reason: "external:" + sanitize(a.Reason)}, nil
}

// sanitize reduces a scorer's reason to at most MaxReasonLen characters
// of [a-z0-9_]: letters lower-cased, every run of anything else one "_",
// none leading or trailing. Nothing left is "unspecified".
func sanitize(reason string) string {
	b := make([]byte, 0, min(len(reason), MaxReasonLen))
	under := false
	for i := 0; i < len(reason) && len(b) < MaxReasonLen; i++ {
		c := reason[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		default:
			under = len(b) > 0
			continue
		}
		if under {
			if len(b)+1 >= MaxReasonLen {
				break
			}
			b = append(b, '_')
			under = false
		}
		b = append(b, c)
	}
	if len(b) == 0 {
		return "unspecified"
	}
	return string(b)
}

var _ challenge.Signal = (*Scorer)(nil)
