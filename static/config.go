package static

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Defaults of a PageConfig's empty fields.
const (
	DefaultPrefix          = "/_wr"
	DefaultLanguage        = "en"
	DefaultPositionDisplay = "exact"
	DefaultJoinPath        = "/"
	// DefaultBackground, DefaultText and DefaultAccent are the default
	// colours: dark text on white (16:1) and an accent blue that has 6.4:1
	// against the background, so links, the progress bar and white button
	// text on it pass WCAG AA.
	DefaultBackground = "#ffffff"
	DefaultText       = "#1b1f24"
	DefaultAccent     = "#0b57d0"
)

// Limits on a PageConfig.
const (
	// MaxNameLen is the longest display name, in bytes.
	MaxNameLen = 200
	// MaxTextLen is the longest text override, in bytes.
	MaxTextLen = 1000
	// MaxTemplateSize is the largest template file TemplateDir may hold.
	MaxTemplateSize = 1 << 20
)

// Position displays (PageConfig.PositionDisplay).
const (
	PositionExact       = "exact"
	PositionApproximate = "approximate"
	PositionHidden      = "hidden"
)

// Colors are an event's page colours as CSS colours: #rgb, #rrggbb or a
// CSS named colour ("navy"). An empty field keeps its default
// (DefaultBackground, DefaultText, DefaultAccent). The page uses them as
// CSS custom properties (--wr-bg, --wr-fg, --wr-accent, and
// --wr-on-accent, black or white, whichever reads better on the accent).
type Colors struct {
	// Background is the page background.
	Background string
	// Text is the colour of all text.
	Text string
	// Accent colours links, buttons, the focus ring and the progress bar.
	Accent string
}

// PageConfig is one event's waiting-room page: what it is called, where
// its API lives, and its branding. New validates it without changing it.
type PageConfig struct {
	// Event is the event id the page joins (1-64 characters from
	// [A-Za-z0-9_.-], starting with a letter or digit).
	Event string
	// Name is the display name ("Summer Tour 2027"); the event id when
	// empty.
	Name string
	// Prefix is the path prefix of waitroom's endpoints (DefaultPrefix
	// when empty): the page calls Prefix+"/api/join" and
	// Prefix+"/api/status".
	Prefix string
	// PositionDisplay is how the page shows a position the server sends:
	// exact ("4,812 people ahead of you"), approximate ("about 4,800
	// people ahead of you", rounded by the server) or hidden (ETA only).
	// DefaultPositionDisplay when empty; the position_display of a status
	// response overrides it.
	PositionDisplay string
	// LogoURL is the logo shown above the event name: an https URL or a
	// same-site path ("/img/logo.svg"); no logo when empty.
	LogoURL string
	// Colors are the page colours; empty fields keep the defaults.
	Colors Colors
	// Texts override built-in texts: language → text key (TextKeys) →
	// plain text, keeping the built-in text's {placeholders}.
	Texts map[string]map[string]string
	// DefaultLanguage is the language for visitors whose Accept-Language
	// names none of Languages(); DefaultLanguage when empty.
	DefaultLanguage string
	// TemplateDir, when set, is a directory with room.html and optionally
	// busy.html, blocked.html, down.html, draw.html and maintenance.html:
	// html/template files executed with TemplateData in place of the
	// embedded ones. Empty: embedded.
	TemplateDir string
	// JoinPath is the same-site path the blocked page's "join the queue"
	// link goes to, normally the event's landing page; DefaultJoinPath
	// when empty.
	JoinPath string
	// WidgetCSP are the sources the event's CAPTCHA widget needs in the
	// room page's Content-Security-Policy (challenge.Widget.CSP): RoomCSP
	// is CSP with them added. Empty (no CAPTCHA): the room page has the
	// strict policy of CSP.
	WidgetCSP CSPSources
	// PublicURL is the URL visitors reach the site at, scheme and host
	// only (https://tickets.example.com): the room page's og:url is it
	// followed by JoinPath, and a same-site LogoURL becomes an absolute
	// og:image. Empty: no og:url (the Host header of a request is never
	// trusted for it).
	PublicURL string
	// NoJSJoin lets visitors without JavaScript join with a plain form
	// and wait on a page that reloads itself; false: the page tells them
	// JavaScript is needed. Turn it on only where joining needs no proof
	// of work (no challenge), so it is never cheaper than the scripted
	// way (docs/bot-defence.md).
	NoJSJoin bool
	// Widget says how the room script drives the event's CAPTCHA widget
	// (challenge.WidgetScript, filled in by the provider); the zero value
	// for an event without one.
	Widget WidgetScript
	// Invites tells the room page that the event has lanes that take
	// invite codes: it shows a code field (and reads a code from a link's
	// #invite=CODE). Without it the page shows none.
	Invites bool
}

// WidgetScript is how the room script drives a CAPTCHA widget, as its
// provider describes it (see challenge.WidgetScript): the script names no
// provider. The provider's script (its URL comes with the challenge)
// defines the global object API with render(element, {sitekey, callback,
// action}) and reset(id), and execute(sitekey, {action}) for invisible
// score widgets. Plain data; the JSON names are what the script reads.
type WidgetScript struct {
	// API is the global object the provider's script defines
	// ("turnstile"): a JavaScript identifier.
	API string `json:"api"`
	// WaitReady: call API.ready(fn) before rendering.
	WaitReady bool `json:"wait_ready,omitempty"`
	// Execute: call API.execute(sitekey, {action}) for a token instead
	// of rendering a widget.
	Execute bool `json:"execute,omitempty"`
}

// CSPSources are Content-Security-Policy sources by directive, for a
// third-party widget on the room page. Each is a host source:
// https://host, https://*.host or https://host/path/ with an optional
// port, or the same with http to a loopback address (localhost,
// 127.0.0.0/8, [::1]) for a local test. No keywords, hashes or schemes
// alone: the page's own scripts and styles stay allowed by hash only.
type CSPSources struct {
	// Script are added to script-src.
	Script []string
	// Frame make up frame-src (no frames are allowed otherwise).
	Frame []string
	// Style are added to style-src.
	Style []string
	// Connect are added to connect-src.
	Connect []string
}

// empty reports whether s adds nothing.
func (s CSPSources) empty() bool {
	return len(s.Script)+len(s.Frame)+len(s.Style)+len(s.Connect) == 0
}

// ErrInvalidConfig is what every error of New about a PageConfig matches
// with errors.Is; each problem is a *ConfigError.
var ErrInvalidConfig = errors.New("static: invalid page configuration")

// ConfigError is one problem with a PageConfig given to New. New returns
// every problem it finds, joined with errors.Join. It is plain data, safe
// to share between goroutines.
type ConfigError struct {
	// Index is the PageConfig's position in New's argument.
	Index int
	// Event is the PageConfig's Event (possibly the invalid value).
	Event string
	// Field is the field's path in snake_case, as the configuration file
	// spells it: "colors.background", "texts.de.ahead_other",
	// "template_dir".
	Field string
	// Msg says what is wrong.
	Msg string
}

// Error returns `static: pages[i] (event "e"): field: msg`.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("static: pages[%d] (event %q): %s: %s", e.Index, e.Event, e.Field, e.Msg)
}

// Is makes every ConfigError match ErrInvalidConfig.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// resolved is a validated PageConfig with its defaults filled in.
type resolved struct {
	PageConfig
	colors   Colors // canonical spellings
	onAccent string // "#000000" or "#ffffff"
	defLang  int    // index in languages
}

// problems collects the ConfigErrors of one PageConfig.
type problems struct {
	index int
	event string
	errs  []error
}

func (p *problems) add(field, format string, args ...any) {
	p.errs = append(p.errs, &ConfigError{Index: p.index, Event: p.event, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// resolve validates c (the index-th config) and fills in its defaults.
func resolve(index int, c PageConfig) (resolved, []error) {
	p := &problems{index: index, event: c.Event}
	r := resolved{PageConfig: c}
	if !validEventID(c.Event) {
		p.add("event", "must be 1-64 characters from [A-Za-z0-9_.-], starting with a letter or digit")
	}
	if r.Name == "" {
		r.Name = c.Event
	} else if msg := checkText(c.Name, MaxNameLen); msg != "" {
		p.add("name", "%s", msg)
	}
	if r.Prefix == "" {
		r.Prefix = DefaultPrefix
	} else if !validPrefix(c.Prefix) {
		p.add("prefix", "must be a path such as /_wr: a single leading slash, no trailing slash, characters from [A-Za-z0-9._~/-]")
	}
	switch c.PositionDisplay {
	case "":
		r.PositionDisplay = DefaultPositionDisplay
	case PositionExact, PositionApproximate, PositionHidden:
	default:
		p.add("position_display", "%q is not one of exact, approximate, hidden", c.PositionDisplay)
	}
	if c.LogoURL != "" && !validLogoURL(c.LogoURL) {
		p.add("logo_url", "must be an https URL or a same-site path starting with a single /")
	}
	r.colors = Colors{Background: DefaultBackground, Text: DefaultText, Accent: DefaultAccent}
	for _, f := range []struct {
		field string
		in    string
		out   *string
	}{
		{"colors.background", c.Colors.Background, &r.colors.Background},
		{"colors.text", c.Colors.Text, &r.colors.Text},
		{"colors.accent", c.Colors.Accent, &r.colors.Accent},
	} {
		if f.in == "" {
			continue
		}
		_, canon, ok := parseColor(f.in)
		if !ok {
			p.add(f.field, "%q is not a colour: use #rgb, #rrggbb or a CSS colour name", f.in)
			continue
		}
		*f.out = canon
	}
	accent, _, _ := parseColor(r.colors.Accent)
	if contrast(accent, 0x000000) > contrast(accent, 0xffffff) {
		r.onAccent = "#000000"
	} else {
		r.onAccent = "#ffffff"
	}
	if r.DefaultLanguage == "" {
		r.DefaultLanguage = DefaultLanguage
	}
	if r.defLang = languageIndex(r.DefaultLanguage); r.defLang < 0 {
		p.add("default_language", "%q is not one of %s", c.DefaultLanguage, strings.Join(languages, ", "))
		r.defLang = 0
	}
	for lang, texts := range c.Texts {
		if languageIndex(lang) < 0 {
			p.add("texts."+lang, "unknown language: the pages come in %s", strings.Join(languages, ", "))
			continue
		}
		for key, s := range texts {
			field := "texts." + lang + "." + key
			builtin, ok := builtinTexts[lang][key]
			if !ok {
				p.add(field, "unknown text key (see static.TextKeys)")
				continue
			}
			if msg := checkText(s, MaxTextLen); msg != "" {
				p.add(field, "%s", msg)
				continue
			}
			want := placeholderRe.FindAllString(builtin, -1)
			for _, ph := range placeholderRe.FindAllString(s, -1) {
				if !contains(want, ph) {
					p.add(field, "placeholder %s is not one of this text's (%s)", ph, strings.Join(want, " "))
				}
			}
		}
	}
	if r.JoinPath == "" {
		r.JoinPath = DefaultJoinPath
	} else if !validSitePath(c.JoinPath) {
		p.add("join_path", "must be a same-site path starting with a single /")
	}
	if c.PublicURL != "" && !validPublicURL(c.PublicURL) {
		p.add("public_url", "must be an http or https URL of a host, without path, query or credentials, such as https://tickets.example.com")
	}
	for _, d := range []struct {
		field string
		list  []string
	}{
		{"widget_csp.script", c.WidgetCSP.Script}, {"widget_csp.frame", c.WidgetCSP.Frame},
		{"widget_csp.style", c.WidgetCSP.Style}, {"widget_csp.connect", c.WidgetCSP.Connect},
	} {
		for i, src := range d.list {
			if msg := checkSource(src); msg != "" {
				p.add(fmt.Sprintf("%s[%d]", d.field, i), "%s", msg)
			}
		}
	}
	if w := c.Widget; w != (WidgetScript{}) && !validJSIdent(w.API) {
		p.add("widget.api", "must be the name of the widget script's global object, a JavaScript identifier such as turnstile (got %q)", w.API)
	}
	if c.TemplateDir != "" {
		st, err := os.Stat(c.TemplateDir)
		switch {
		case err != nil:
			p.add("template_dir", "%v", err)
		case !st.IsDir():
			p.add("template_dir", "%s is not a directory", c.TemplateDir)
		default:
			if _, err := os.Stat(filepath.Join(c.TemplateDir, "room.html")); err != nil {
				p.add("template_dir", "must contain room.html: %v", err)
			}
		}
	}
	return r, p.errs
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// checkText checks display text: non-empty, valid UTF-8, no control
// characters, at most max bytes. It returns what is wrong, or "".
func checkText(s string, max int) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "must not be empty"
	case len(s) > max:
		return fmt.Sprintf("longer than %d bytes", max)
	case !utf8.ValidString(s):
		return "not valid UTF-8"
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return "contains a control character"
		}
	}
	return ""
}

// validEventID mirrors the event ids of the engine and the sidecar: 1-64
// characters from [A-Za-z0-9_.-], the first a letter or digit.
// validJSIdent reports whether s is an ASCII JavaScript identifier of at
// most 64 characters.
func validJSIdent(s string) bool {
	if len(s) == 0 || len(s) > 64 || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '$' {
			return false
		}
	}
	return true
}

func validEventID(id string) bool {
	if len(id) == 0 || len(id) > 64 || !isAlnum(id[0]) {
		return false
	}
	for i := 1; i < len(id); i++ {
		if c := id[i]; !isAlnum(c) && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// validPrefix accepts "/x" or "/x/y": a leading slash, no trailing or
// doubled slash, and characters that need no escaping in a URL path.
func validPrefix(p string) bool {
	if len(p) < 2 || p[0] != '/' || p[len(p)-1] == '/' || strings.Contains(p, "//") {
		return false
	}
	for i := 1; i < len(p); i++ {
		if c := p[i]; !isAlnum(c) && !strings.ContainsRune("._~/-", rune(c)) {
			return false
		}
	}
	return !strings.Contains(p, "/./") && !strings.Contains(p, "/../") &&
		!strings.HasSuffix(p, "/.") && !strings.HasSuffix(p, "/..")
}

// validPublicURL checks PageConfig.PublicURL: scheme and host only.
func validPublicURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" && u.Scheme != "http" || u.Host == "" || u.User != nil || u.Opaque != "" ||
		u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '\\' || c == '"' || c == '\'' || c == '<' || c == '>' {
			return false
		}
	}
	return true
}

// validSitePath is the page script's same-site check in Go: a path that
// starts with exactly one slash and has no backslash, whitespace or
// control character, so that no browser reads it as another host.
func validSitePath(p string) bool {
	if len(p) == 0 || p[0] != '/' || len(p) > 1 && (p[1] == '/' || p[1] == '\\') {
		return false
	}
	if !utf8.ValidString(p) {
		return false
	}
	for _, r := range p {
		if r == '\\' || unicode.IsSpace(r) || unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// validLogoURL accepts a same-site path or an absolute https URL with a
// host and no user information.
func validLogoURL(s string) bool {
	if strings.HasPrefix(s, "/") {
		return validSitePath(s)
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Opaque != "" {
		return false
	}
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '\\' {
			return false
		}
	}
	return true
}

// checkSource says what is wrong with src as a CSPSources entry, or "".
// Anything that could end the source list or the directive (white space,
// ';', ',', quotes) is refused.
func checkSource(src string) string {
	const rule = "must be a host source such as https://example.com, https://*.example.com or https://example.com/path/ (http only to a loopback address)"
	for i := 0; i < len(src); i++ {
		if c := src[i]; !isAlnum(c) && !strings.ContainsRune("-._~:/*%[]", rune(c)) {
			return fmt.Sprintf("%q: %s", src, rule)
		}
	}
	scheme, rest, ok := strings.Cut(src, "://")
	if !ok || scheme != "https" && scheme != "http" {
		return fmt.Sprintf("%q: %s", src, rule)
	}
	hostport, path, _ := strings.Cut(rest, "/")
	if strings.Contains(path, "*") {
		return fmt.Sprintf("%q: a wildcard is only allowed as the host's first label", src)
	}
	host, port := hostport, ""
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.HasSuffix(hostport, "]") {
		host, port = hostport[:i], hostport[i+1:]
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || port[0] == '0' {
			return fmt.Sprintf("%q: the port must be 1 to 65535", src)
		}
	}
	loopback := false
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")); err == nil {
		if a.Is6() != strings.HasPrefix(host, "[") || a.Zone() != "" {
			return fmt.Sprintf("%q: %s", src, rule)
		}
		loopback = a.IsLoopback()
	} else if !validSourceHost(host) {
		return fmt.Sprintf("%q: %s", src, rule)
	} else {
		loopback = strings.EqualFold(host, "localhost")
	}
	if scheme == "http" && !loopback {
		return fmt.Sprintf("%q: must be https (plain http only to a loopback address)", src)
	}
	return ""
}

// validSourceHost accepts a DNS name, optionally with a leading "*."
// label.
func validSourceHost(h string) bool {
	h = strings.TrimPrefix(h, "*.")
	if h == "" || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if !isAlnum(label[i]) && label[i] != '-' {
				return false
			}
		}
	}
	return true
}
