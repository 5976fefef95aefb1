package static

// The waiting room without JavaScript: the status page a visitor whose
// browser runs no script sees after joining with the room page's
// <noscript> form. The proxy renders it per request (it holds the
// visitor's position); it reloads itself with <meta http-equiv=refresh>.

import (
	"bytes"
	"html/template"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// NoJSKind is what the no-JavaScript page shows: an admission status kind
// ("waiting", "sold_out", …; as admission.StatusKind spells them) or one
// of the kinds below.
type NoJSKind string

// The no-JavaScript page's own kinds.
const (
	// NoJSJoin: the visitor has no place (no ticket cookie, or it
	// expired): the join form.
	NoJSJoin NoJSKind = "join"
	// NoJSOpen: the queue a join found not yet open is open now: the
	// join form.
	NoJSOpen NoJSKind = "open"
	// NoJSScripts: the event's bot defence needs JavaScript, so the
	// visitor cannot join without it.
	NoJSScripts NoJSKind = "scripts"
	// NoJSSlowDown: rate limited; the page reloads after Refresh.
	NoJSSlowDown NoJSKind = "slow_down"
	// NoJSError: the waiting room could not answer; the page reloads
	// after Refresh.
	NoJSError NoJSKind = "error"
)

// NoJSState is one visitor's state, for NoJS.
type NoJSState struct {
	// Kind is what to show.
	Kind NoJSKind
	// Reason is the status's reason ("session_ended" with closed).
	Reason string
	// Position is how many people are ahead, already rounded or hidden
	// as the event's position display says; negative: not shown.
	Position int64
	// Approximate says Position is rounded ("about …").
	Approximate bool
	// ETASeconds, ETALow and ETAHigh are the estimate (ETASeconds < 0:
	// still estimating); shown for waiting, waiting_for_draw and paused.
	ETASeconds, ETALow, ETAHigh int64
	// OpensAt is when the queue opens (scheduled).
	OpensAt time.Time
	// Refresh is the seconds after which the page reloads itself (the
	// same URL); 0: it does not.
	Refresh int
	// Return is the same-site path the join form carries along, for the
	// visitor's way back once admitted; it must be one (the proxy checks
	// it with httpguard.SameSitePath).
	Return string
}

// NoJSView is what nojs.html shows, the texts already chosen and filled
// in (TemplateData.NoJS).
type NoJSView struct {
	Headline, Message string
	// Position and ETA are the formatted position and estimate; empty
	// when not shown.
	Position, ETA string
	// Refresh is the <meta http-equiv=refresh> delay in seconds; 0: none.
	Refresh int
	// RefreshNote says that the page reloads by itself.
	RefreshNote string
	// Form shows the join form, with Return as its return field.
	Form   bool
	Return string
}

// MaxNoJSRefresh bounds the reload delay of the no-JavaScript page.
const MaxNoJSRefresh = 300

// NoJSJoinPath is the path, after the prefix, the no-JavaScript join form
// posts to; NoJSStatusPath the status page's.
const (
	NoJSJoinPath   = "/nojs/join"
	NoJSStatusPath = "/nojs/status"
)

// nojsTemplate is the embedded nojs.html.
var nojsTemplate = template.Must(template.New("nojs.html").Option("missingkey=error").ParseFS(webFS, "web/nojs.html"))

// NoJS renders the no-JavaScript page of event for one visitor, in the
// language Accept-Language asks for, or returns nil when event has no
// page. Serve it with Content-Type ContentTypeHTML, Cache-Control:
// no-store and Content-Security-Policy CSP (it has no script, and its
// style blocks are the room page's). Safe for concurrent use.
func (p *Pages) NoJS(event string, acceptLanguage []byte, s *NoJSState) []byte {
	ev := p.events[event]
	if ev == nil {
		return nil
	}
	li := ev.lang(acceptLanguage)
	d := ev.nojs[li]
	d.NoJS = nojsView(d.Lang, d.T, s)
	d.Langs = nojsLangLinks(event, s.Return, d.Lang)
	var buf bytes.Buffer
	buf.Grow(8 << 10)
	if err := nojsTemplate.Execute(&buf, &d); err != nil {
		// The template and its data are ours, checked at New.
		panic("static: nojs.html: " + err.Error())
	}
	return buf.Bytes()
}

// nojsLangLinks is the no-JavaScript page's language switcher: its
// links keep the status page's event and return parameters (the page
// lives at NoJSStatusPath, which needs them), adding lang.
func nojsLangLinks(event, ret, lang string) []LangLink {
	q := "?event=" + url.QueryEscape(event)
	if ret != "" {
		q += "&return=" + url.QueryEscape(ret)
	}
	links := langLinks(lang)
	for i := range links {
		links[i].Href = q + "&" + LangQuery + "=" + links[i].Tag
	}
	return links
}

// nojsView chooses and fills in the texts of s in lang.
func nojsView(lang string, T map[string]string, s *NoJSState) *NoJSView {
	v := &NoJSView{Refresh: min(max(s.Refresh, 0), MaxNoJSRefresh)}
	key := string(s.Kind)
	if s.Kind == "closed" && s.Reason == "session_ended" {
		key = "session_ended"
	}
	switch s.Kind {
	case NoJSJoin:
		v.Headline, v.Message, v.Form = T["blocked_title"], T["nojs_no_ticket"], true
	case NoJSOpen:
		v.Headline, v.Message, v.Form = T["title"], T["nojs_open"], true
	case NoJSScripts:
		v.Headline, v.Message = T["nojs_scripts_title"], T["noscript"]
	case NoJSSlowDown:
		v.Headline, v.Message = T["busy_title"], T["nojs_slow_down"]
	case NoJSError:
		v.Headline, v.Message = T["h_error"], T["msg_offline"]
	case "scheduled":
		v.Headline, v.Form = T["h_scheduled"], true
		v.Message = fill(T["nojs_scheduled"], "{time}", s.OpensAt.UTC().Format("2006-01-02 15:04 UTC"))
	default:
		v.Headline, v.Message = T["h_"+key], T["msg_"+key]
		if v.Headline == "" {
			v.Headline, v.Message = T["h_error"], T["msg_error"]
		}
		v.Form = key == "session_ended"
	}
	if v.Form {
		v.Return = s.Return
	}
	switch s.Kind {
	case "waiting", "paused":
		v.Position = positionText(lang, T, s)
		v.ETA = etaText(lang, T, s)
	case "waiting_for_draw":
		v.ETA = etaText(lang, T, s)
	}
	if v.Refresh > 0 {
		v.RefreshNote = fill(T["nojs_refresh"], "{n}", formatInt(lang, int64(v.Refresh)))
	}
	return v
}

// positionText is the room script's positionText.
func positionText(lang string, T map[string]string, s *NoJSState) string {
	switch p := s.Position; {
	case p < 0:
		return ""
	case p == 0:
		return T["ahead_none"]
	case s.Approximate:
		return fill(T["ahead_approx"], "{n}", formatInt(lang, p))
	default:
		return plural(lang, T, "ahead", p, "{n}", formatInt(lang, p))
	}
}

// etaText is the room script's etaText: an honest range, the low end
// rounded down, the high end up.
func etaText(lang string, T map[string]string, s *NoJSState) string {
	if s.ETASeconds < 0 {
		return T["eta_estimating"]
	}
	lo, hi := s.ETALow, s.ETAHigh
	if lo < 0 || hi < 0 {
		lo, hi = s.ETASeconds, s.ETASeconds
	}
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi < 60 {
		return T["eta_soon"]
	}
	unit, base, rng := int64(60), "eta_min", "eta_range_min"
	if hi >= 7200 {
		unit, base, rng = 3600, "eta_hour", "eta_range_hours"
	}
	a := max(1, lo/unit)
	b := max(a, (hi+unit-1)/unit)
	if a == b {
		return plural(lang, T, base, a, "{n}", formatInt(lang, a))
	}
	return fill(fill(T[rng], "{low}", formatInt(lang, a)), "{high}", formatInt(lang, b))
}

// plural picks the form of key for n in lang, as the room script's
// plural does: key_<category> when the language has that form (ahead_few
// in Polish), else key_one for "one", else key_other; and fills in the
// placeholder.
func plural(lang string, T map[string]string, key string, n int64, ph, val string) string {
	return fill(pluralText(lang, T, key, n), ph, val)
}

// pluralText is the text of key's plural form for n in lang.
func pluralText(lang string, T map[string]string, key string, n int64) string {
	cat := pluralCategory(lang, n)
	if s, ok := T[key+"_"+cat]; ok {
		return s
	}
	return T[key+"_other"]
}

func fill(s, ph, val string) string { return strings.ReplaceAll(s, ph, val) }

// formatInt writes n with the digit grouping of lang, as Chromium's
// Intl.NumberFormat does for the page's languages: 12,345 (en, ar, ja,
// ko, zh), 12.345 (de, nl, pt, tr; es and it group from five digits on),
// 12 345 with a no-break space (sv; pl from five digits on) or a narrow
// no-break space (fr).
func formatInt(lang string, n int64) string {
	s := strconv.FormatInt(n, 10)
	sep, from := "", 4
	switch lang {
	case "en", "ar", "ja", "ko", "zh":
		sep = ","
	case "de", "nl", "pt", "tr":
		sep = "."
	case "es", "it":
		sep, from = ".", 5
	case "fr":
		sep = "\u202f"
	case "sv":
		sep = "\u00a0"
	case "pl":
		sep, from = "\u00a0", 5
	}
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(s, "-")
	if sep == "" || len(digits) < from {
		return s
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(c)
	}
	return b.String()
}

// openGraph returns the room page's og:url and og:image: the public URL
// with the join path, and the logo made absolute with it (an https logo
// as it is). Both come from the configuration only, never from a request.
func openGraph(r resolved) (ogURL, ogImage string) {
	base := strings.TrimSuffix(r.PublicURL, "/")
	if base != "" {
		ogURL = base + r.JoinPath
	}
	switch {
	case r.LogoURL == "":
	case strings.HasPrefix(r.LogoURL, "/"):
		if base != "" {
			ogImage = base + r.LogoURL
		}
	default:
		ogImage = r.LogoURL // validLogoURL: https only
	}
	return ogURL, ogImage
}

// noteNoJS keeps d as the event's no-JavaScript page data in its
// language and renders the page once in every shape, so that its inline
// blocks are in the policy and a broken template fails New, not a
// visitor.
func (ev *eventPages) noteNoJS(d TemplateData, csp *policy) error {
	d.Script, d.Config = "", nil
	if ev.nojs == nil {
		ev.nojs = make([]TemplateData, len(languages))
	}
	ev.nojs[languageIndex(d.Lang)] = d
	for _, s := range []NoJSState{
		{Kind: "waiting", Position: 12, ETASeconds: 300, ETALow: 200, ETAHigh: 400, Refresh: 5},
		{Kind: NoJSJoin, Return: "/"}, {Kind: "scheduled", Refresh: 30},
	} {
		d.NoJS = nojsView(d.Lang, d.T, &s)
		d.Langs = nojsLangLinks(d.Event, s.Return, d.Lang)
		var buf bytes.Buffer
		if err := nojsTemplate.Execute(&buf, &d); err != nil {
			return err
		}
		if err := csp.note(buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
