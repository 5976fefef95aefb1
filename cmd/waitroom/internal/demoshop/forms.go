package demoshop

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/waitroom/waitroom/inventory"
)

// maxFormBytes bounds a posted form; the largest real one (a hold of the
// most seats) is a few KiB.
const maxFormBytes = 64 << 10

// errInvalidForm is wrapped by every formError.
var errInvalidForm = errors.New("demoshop: invalid form")

// formError is a form the shop cannot use; public is what the visitor is
// told.
type formError struct{ public string }

func (e *formError) Error() string { return errInvalidForm.Error() + ": " + e.public }
func (e *formError) Unwrap() error { return errInvalidForm }

func badForm(public string) error { return &formError{public: public} }

// parseVisitor checks the visitor header the proxy set: exactly one value
// of 1 to inventory.MaxUserLen printable ASCII characters (it becomes the
// hold's user in the sidecar).
func parseVisitor(values []string) (string, bool) {
	if len(values) != 1 {
		return "", false
	}
	v := values[0]
	if len(v) == 0 || len(v) > inventory.MaxUserLen {
		return "", false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return "", false
		}
	}
	return v, true
}

// single returns the one value of a form field; a field given twice is
// as good as absent.
func single(f url.Values, name string) (string, bool) {
	v := f[name]
	if len(v) != 1 {
		return "", false
	}
	return v[0], true
}

// Form keys are rendered into every form that changes something; the
// sidecar idempotency keys are derived from them, so submitting one form
// twice does its work once.
const formKeyBytes = 16

// newFormKey returns a fresh random form key.
func newFormKey() string {
	var b [formKeyBytes]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// validFormKey reports whether k has the shape newFormKey makes.
func validFormKey(k string) bool {
	if len(k) != base64.RawURLEncoding.EncodedLen(formKeyBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(k)
	return err == nil
}

// sidecarKey derives an idempotency key for the sidecar from a form key
// and what the request is about. It is a plain hash (no secret), so that
// a retry after a restart of the shop still matches.
func sidecarKey(kind string, parts ...string) string {
	h := sha256.New()
	h.Write([]byte("demoshop\x00" + kind))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return "demoshop-" + kind + "-" + base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:24])
}

// csrfToken is the visitor's token for every form: an HMAC of the event
// and visitor id, which a page on another site cannot know.
func (s *Shop) csrfToken(visitor string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte("demoshop csrf\x00" + s.event + "\x00" + visitor))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (s *Shop) validCSRF(visitor, token string) bool {
	return hmac.Equal([]byte(token), []byte(s.csrfToken(visitor)))
}

// readForm reads a posted form of a gated page and checks that it came
// from this shop's page for this visitor. On failure it has answered.
func (s *Shop) readForm(w http.ResponseWriter, r *http.Request, visitor string) (url.Values, bool) {
	// Browsers say where a request comes from; a cross-site post is
	// refused even before the token is checked.
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		s.csrfFailed(w, r)
		return nil, false
	}
	if ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || ct != "application/x-www-form-urlencoded" {
		s.message(w, r, http.StatusUnsupportedMediaType, messagePage{
			Heading: "That form could not be read",
			Text:    []string{"Please go back, reload the page and try again."},
			Links:   []link{{Href: s.eventURL(), Text: "Back to the seat map", Primary: true}},
		})
		return nil, false
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		status := http.StatusBadRequest
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			status = http.StatusRequestEntityTooLarge
		}
		s.message(w, r, status, messagePage{
			Heading: "That form could not be read",
			Text:    []string{"Please go back, reload the page and try again."},
			Links:   []link{{Href: s.eventURL(), Text: "Back to the seat map", Primary: true}},
		})
		return nil, false
	}
	if tok, ok := single(r.PostForm, "csrf"); !ok || !s.validCSRF(visitor, tok) {
		s.csrfFailed(w, r)
		return nil, false
	}
	return r.PostForm, true
}

func (s *Shop) csrfFailed(w http.ResponseWriter, r *http.Request) {
	s.message(w, r, http.StatusForbidden, messagePage{
		Heading: "This form can't be used",
		Text: []string{
			"It was not sent from this shop's own page, or it is from before the shop restarted. Nothing was changed.",
			"Go back, reload the page and try again.",
		},
		Links: []link{{Href: s.eventURL(), Text: "Back to the seat map", Primary: true}},
	})
}

// Hold modes: the three ways to ask for tickets.
const (
	modeSeats = "seats" // the seats ticked on the map
	modeBest  = "best"  // best available N seats in a section
	modeGA    = "ga"    // N standing tickets of a pool
)

// holdForm is a parsed hold form.
type holdForm struct {
	mode     string
	seats    []string
	section  string // modeBest
	pool     string // modeGA
	quantity int    // modeBest, modeGA
	key      string // form key
}

// parseHoldForm reads a hold form against the event's definition. Seats
// are checked for shape only; the sidecar says whether they exist.
func parseHoldForm(f url.Values, ev *inventory.Event) (holdForm, error) {
	var h holdForm
	var ok bool
	if h.key, ok = single(f, "key"); !ok || !validFormKey(h.key) {
		return h, badForm("The form has expired; please choose again.")
	}
	h.mode, _ = single(f, "mode")
	switch h.mode {
	case modeSeats:
		h.seats = f["seat"]
		switch {
		case len(h.seats) == 0:
			return h, badForm("Tick at least one seat on the map, then press “Hold selected seats”.")
		case len(h.seats) > inventory.MaxHoldQuantity:
			return h, badForm("That is more seats than anyone may hold at once.")
		}
		seen := make(map[string]bool, len(h.seats))
		for _, id := range h.seats {
			if _, _, _, ok := inventory.ParseSeatID(id); !ok {
				return h, badForm("One of the chosen seats is not a seat of this venue.")
			}
			if seen[id] {
				return h, badForm("A seat was chosen twice.")
			}
			seen[id] = true
		}
	case modeBest:
		h.section, _ = single(f, "section")
		if !slices.ContainsFunc(ev.Sections, func(s inventory.Section) bool { return s.ID == h.section }) {
			return h, badForm("Choose a section.")
		}
		if h.quantity, ok = parseQuantity(f); !ok {
			return h, badForm("Choose how many seats you want.")
		}
	case modeGA:
		h.pool, _ = single(f, "pool")
		if !slices.ContainsFunc(ev.GA, func(p inventory.Pool) bool { return p.ID == h.pool }) {
			return h, badForm("Choose a standing area.")
		}
		if h.quantity, ok = parseQuantity(f); !ok {
			return h, badForm("Choose how many tickets you want.")
		}
	default:
		return h, badForm("Choose seats on the map, best available seats, or standing tickets.")
	}
	return h, nil
}

// parseQuantity reads the quantity field: 1 to inventory.MaxHoldQuantity.
func parseQuantity(f url.Values) (int, bool) {
	v, ok := single(f, "quantity")
	if !ok || len(v) > 3 {
		return 0, false
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > inventory.MaxHoldQuantity || v[0] == '+' || v[0] == '0' {
		return 0, false
	}
	return n, true
}

// request turns the form into the sidecar's hold request for visitor.
// The idempotency key covers the form key and everything asked for: a
// second submit of the same form with the same choice gets the first
// hold back, the same form sent with another choice makes a new hold.
func (h *holdForm) request(visitor string, ttl time.Duration) inventory.HoldRequest {
	req := inventory.HoldRequest{User: visitor, TTL: ttl, Actor: actor}
	switch h.mode {
	case modeSeats:
		req.Seats = h.seats
	case modeBest:
		req.Best = &inventory.BestRequest{Section: h.section, Quantity: h.quantity}
	case modeGA:
		req.GA = &inventory.GARequest{Pool: h.pool, Quantity: h.quantity}
	}
	req.IdempotencyKey = sidecarKey("hold", h.key, req.Fingerprint())
	return req
}

// area is the section or pool the form was about, to show its seat map
// again after a failure.
func (h *holdForm) area() string {
	switch h.mode {
	case modeBest:
		return h.section
	case modeSeats:
		if len(h.seats) == 0 {
			return ""
		}
		if sec, _, _, ok := inventory.ParseSeatID(h.seats[0]); ok {
			return sec
		}
	}
	return ""
}
