package config

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/inventory"
)

// MaxEventNameLength bounds events[].name, in characters.
const MaxEventNameLength = 200

func (v *validator) events(p string, c *Config) {
	ids := make(map[string]int, len(c.Events))
	for i := range c.Events {
		ep := fmt.Sprintf("%s[%d]", p, i)
		e := &c.Events[i]
		if !validName(e.ID) {
			v.fail(ep+".id", "must be 1 to %d characters from [a-z0-9_-] (got %q)", MaxNameLength, e.ID)
		} else if j, dup := ids[e.ID]; dup {
			v.fail(ep+".id", "repeats events[%d].id", j)
		} else {
			ids[e.ID] = i
		}
		v.event(ep, e, c)
	}
}

func (v *validator) event(p string, e *Event, c *Config) {
	if utf8.RuneCountInString(e.Name) > MaxEventNameLength || !utf8.ValidString(e.Name) ||
		strings.IndexFunc(e.Name, unicode.IsControl) >= 0 {
		v.fail(p+".name", "must be at most %d characters of text, without control characters", MaxEventNameLength)
	}
	switch e.Mode {
	case ModeAlways, ModeThreshold, ModeScheduled:
	default:
		v.fail(p+".mode", "must be always, threshold or scheduled (got %q)", e.Mode)
	}
	v.schedule(p, e, sharedAdmission(c))
	if err := sitePath(e.LandingPath); err != nil {
		v.fail(p+".landing_path", "must be a path on this site, such as /events/summer (%v)", err)
	}
	v.positive(p+".tranche", e.Tranche)
	v.positive(p+".session_duration", e.SessionDuration)
	if e.MaxSession != 0 && e.MaxSession < e.SessionDuration {
		v.fail(p+".max_session", "must be 0 (3 × session_duration) or at least session_duration (%s), got %s", e.SessionDuration, e.MaxSession)
	}
	v.positive(p+".no_show_grace", e.NoShowGrace)
	v.positive(p+".complete_grace", e.CompleteGrace)
	switch e.PositionDisplay {
	case PositionExact, PositionApproximate, PositionHidden:
	default:
		v.fail(p+".position_display", "must be exact, approximate or hidden (got %q)", e.PositionDisplay)
	}
	if e.InventoryEvent != "" {
		if !inventory.ValidEventID(e.InventoryEvent) {
			v.fail(p+".inventory_event", "must be a sidecar event id: 1 to %d characters from [A-Za-z0-9_.-], starting with a letter or digit (got %q)", inventory.MaxEventIDLen, e.InventoryEvent)
		} else if c.Serve.Inventory.URL == "" && !c.Serve.WithInventory {
			v.fail(p+".inventory_event", "needs a sidecar to read remaining seats from: set serve.inventory.url, or serve.with_inventory: true")
		}
	}
	if !(e.VisitorsPerSeat > 0) || !finite(e.VisitorsPerSeat) {
		v.fail(p+".visitors_per_seat", "must be more than 0, such as %s (got %s)", fmtFloat(admission.DefaultVisitorsPerSeat), fmtFloat(e.VisitorsPerSeat))
	}
	v.atLeast(p+".caps.max_active", int64(e.Caps.MaxActive), 0)
	v.atLeast(p+".caps.max_new_per_minute", int64(e.Caps.MaxNewPerMinute), 0)
	v.controller(p+".controller", &e.Controller)
	v.lanes(p+".lanes", e.Lanes)
	v.page(p+".page", &e.Page)
}

// schedule checks an event's times: on_sale_at is required for mode:
// scheduled and with queue_opens_at (empty, the event is open from the
// start), and the order
// queue_opens_at <= on_sale_at < closes_at holds wherever two times are of
// the same kind. An absolute and a relative time can be ordered only once
// the start is known: Event.AdmissionConfig checks them then.
func (v *validator) schedule(p string, e *Event, shared bool) {
	switch {
	case !e.OnSaleAt.IsZero():
	case e.Mode == ModeScheduled:
		v.fail(p+".on_sale_at", "must be set for mode: scheduled: when the pre-queue is drawn and the sale starts (an RFC 3339 time such as 2027-03-01T10:00:00Z, or now+30s)")
	case !e.QueueOpensAt.IsZero():
		v.fail(p+".on_sale_at", "must be set with queue_opens_at: when the pre-queue is drawn (an RFC 3339 time such as 2027-03-01T10:00:00Z, or now+30s), or remove queue_opens_at to be open from the start")
	}
	if c, ok := e.QueueOpensAt.Compare(e.OnSaleAt); ok && c > 0 {
		v.fail(p+".queue_opens_at", "is after on_sale_at (%s): the queue must open before the sale, or at it", e.OnSaleAt)
	}
	if c, ok := e.ClosesAt.Compare(e.OnSaleAt); ok && c <= 0 {
		v.fail(p+".closes_at", "must be after on_sale_at (%s)", e.OnSaleAt)
	}
	if !shared {
		return
	}
	for _, t := range []struct {
		key string
		at  Instant
	}{{"queue_opens_at", e.QueueOpensAt}, {"on_sale_at", e.OnSaleAt}, {"closes_at", e.ClosesAt}} {
		if t.at.IsRelative() {
			v.fail(p+"."+t.key, "is relative to the process start (%s), which differs on every replica sharing Redis: use an RFC 3339 time", t.at)
		}
	}
}

func (v *validator) controller(p string, c *Controller) {
	v.positive(p+".tick", c.Tick)
	v.positive(p+".target_p95", c.TargetP95)
	v.fraction(p+".target_error_rate", c.TargetErrorRate)
	v.atLeast(p+".initial_active", int64(c.InitialActive), 1)
	v.atLeast(p+".min_active", int64(c.MinActive), 1)
	if c.MinActive > c.InitialActive && c.InitialActive >= 1 {
		v.fail(p+".min_active", "must not be more than initial_active (%d) (got %d)", c.InitialActive, c.MinActive)
	}
	if c.Increase < 0 {
		v.fail(p+".increase", "must be 0 (no bound) or more (got %d)", c.Increase)
	}
	v.fraction(p+".decrease", c.Decrease)
	if !(c.ExpectedRate >= 0) || !finite(c.ExpectedRate) {
		v.fail(p+".expected_rate", "must be 0 (unknown) or the visitors a minute the origin is expected to take, such as 200 (got %s)", fmtFloat(c.ExpectedRate))
	}
}

func (v *validator) lanes(p string, lanes []Lane) {
	names := make(map[string]int, len(lanes))
	for i := range lanes {
		l := &lanes[i]
		lp := fmt.Sprintf("%s[%d]", p, i)
		if !validName(l.Name) {
			v.fail(lp+".name", "must be 1 to %d characters from [a-z0-9_-] (got %q)", MaxNameLength, l.Name)
		} else if j, dup := names[l.Name]; dup {
			v.fail(lp+".name", "repeats lanes[%d].name", j)
		} else {
			names[l.Name] = i
		}
		if !(l.Share >= 0 && l.Share <= 1) {
			v.fail(lp+".share", "must be between 0 and 1 (got %s)", fmtFloat(l.Share))
		} else if l.Priority && l.Share != 0 {
			v.fail(lp+".share", "is set on a priority lane, which is served before the others: share applies to non-priority lanes only")
		}
		if l.Name == admission.PublicLane {
			for _, f := range []struct{ key, val string }{
				{"invite_secret", l.InviteSecret}, {"account_secret", l.AccountSecret}, {"allowlist_file", l.AllowlistFile},
			} {
				if f.val != "" {
					v.fail(lp+"."+f.key, "is set on the public lane, which everyone may join")
				}
			}
			continue
		}
		if l.InviteSecret == "" && l.AccountSecret == "" {
			v.fail(lp, "has no way in: set invite_secret (invite codes) or account_secret (account proofs from the origin)")
		}
		if l.InviteSecret != "" {
			v.secret(lp+".invite_secret", l.InviteSecret, MinSecretLength)
		}
		if l.AccountSecret != "" {
			v.secret(lp+".account_secret", l.AccountSecret, MinSecretLength)
		}
		if l.AllowlistFile != "" && l.AccountSecret == "" {
			v.fail(lp+".allowlist_file", "needs account_secret: the allowlist is checked against proven account ids")
		}
	}
}

var (
	cssColor = regexp.MustCompile(`^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)
	textKey  = regexp.MustCompile(`^[a-z0-9_.]{1,64}$`)
)

func (v *validator) page(p string, pg *Page) {
	if pg.LogoURL != "" {
		if err := logoURL(pg.LogoURL); err != nil {
			v.fail(p+".logo_url", "must be an https:// URL or a path on this site (%v)", err)
		}
	}
	for _, c := range []struct{ key, val string }{
		{"background", pg.Colors.Background}, {"text", pg.Colors.Text}, {"accent", pg.Colors.Accent},
	} {
		if c.val != "" && !cssColor.MatchString(c.val) {
			v.fail(p+".colors."+c.key, "must be a colour such as #1a2b3c or #abc (got %q)", c.val)
		}
	}
	if !knownLanguage(pg.DefaultLanguage) {
		v.fail(p+".default_language", "must be %s (got %q)", languageList(), pg.DefaultLanguage)
	}
	for _, lang := range sortedKeys(pg.Texts) {
		lp := p + ".texts." + string(lang)
		if !knownLanguage(lang) {
			v.fail(lp, "is not a language of the page: use %s", languageList())
			continue
		}
		for _, key := range sortedKeys(pg.Texts[lang]) {
			if !textKey.MatchString(key) {
				v.fail(lp, "has the key %q: text keys are 1 to 64 characters from [a-z0-9_.]", key)
			}
			if !utf8.ValidString(pg.Texts[lang][key]) {
				v.fail(lp+"."+key, "must be valid UTF-8 text")
			}
		}
	}
}

// logoURL checks a logo address: https with a host, or a same-site path;
// without characters that could break out of an HTML attribute or CSS.
func logoURL(s string) error {
	if strings.ContainsAny(s, "\"'()<>\\` ") || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return fmt.Errorf("%q holds a quote, bracket, backslash, space or control character", s)
	}
	if strings.HasPrefix(s, "/") {
		return sitePath(s)
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
		return fmt.Errorf("got %q", s)
	}
	return nil
}

func knownLanguage(l Language) bool {
	for _, k := range Languages() {
		if l == k {
			return true
		}
	}
	return false
}

func languageList() string {
	langs := Languages()
	parts := make([]string, len(langs))
	for i, l := range langs {
		parts[i] = string(l)
	}
	return orList(parts)
}
