package static

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
)

//go:embed web
var webFS embed.FS

// ContentTypeHTML is the Content-Type of every page.
const ContentTypeHTML = "text/html; charset=utf-8"

// contentTypeWasm is the Content-Type of the WebAssembly modules: the
// one WebAssembly.instantiateStreaming insists on.
const contentTypeWasm = "application/wasm"

// BusyRetrySeconds is how long the busy page waits on average before it
// retries by itself (between 0.6 and 1.4 times this, at random, so that
// shed visitors do not come back in step). Send it as Retry-After with
// the busy page.
const BusyRetrySeconds = 5

// MaintenanceRetrySeconds is what the maintenance page's Retry-After
// says, and how often the page reloads itself (a meta refresh).
const MaintenanceRetrySeconds = 60

// DownRetrySeconds is how long the origin-down page (Down) waits on
// average before it retries by itself, jittered as BusyRetrySeconds is.
// Send it as Retry-After with the page.
const DownRetrySeconds = 10

// TemplateData is what room.html, busy.html, blocked.html, down.html,
// draw.html and maintenance.html are executed with, for one event and one
// language. Override templates (PageConfig.TemplateDir) use the same
// fields; the embedded templates in web/ are the reference. A page must be
// the same for every visitor, so there is nothing per visitor here: the page script gets that from the JSON API.
type TemplateData struct {
	// Lang is the page's language ("en"): put it in <html lang>.
	Lang string
	// Dir is its writing direction, "ltr" or "rtl" (Direction): put it
	// in <html dir>.
	Dir string
	// Langs is the language switcher: every language, each with a link
	// to the same page in it (?lang=xx; the proxy keeps the choice in a
	// cookie). The built-in pages list it in a <nav> at their foot.
	Langs []LangLink
	// Event is the event id; empty on the busy page (which is site-wide)
	// and on the blocked page of paths outside any event.
	Event string
	// Name is the event's display name; empty where Event is.
	Name string
	// Prefix is the path prefix of waitroom's endpoints ("/_wr").
	Prefix string
	// LogoURL is the logo's URL or same-site path; empty for none.
	LogoURL string
	// JoinPath is where the blocked page's "join the queue" link goes.
	JoinPath string
	// PositionDisplay is exact, approximate or hidden.
	PositionDisplay string
	// Colors are the page colours with the defaults filled in.
	Colors Colors
	// T are the texts in Lang with the overrides applied, by key
	// (TextKeys): {{.T.h_waiting}}. A missing key is an execution error,
	// so New reports a typo.
	T map[string]string
	// Config is the page script's configuration. Write it as
	// <script type="application/json" id="wr-config">{{.Config}}</script>:
	// html/template encodes it as JSON there. Room pages only.
	Config *ScriptConfig
	// Vars are the colour custom properties (":root{--wr-bg:…}"): put them
	// in a <style> element before Style.
	Vars template.CSS
	// Style is the built-in stylesheet, for an inline <style> element.
	Style template.CSS
	// Script is the built-in script of this page, for an inline <script>
	// element: the queue client on room pages, the jittered retry on busy
	// pages (it reads the delay from its element's data-retry attribute:
	// <script data-retry="{{.RetrySeconds}}">), empty on blocked pages.
	Script template.JS
	// StyleURL and ScriptURL are the same stylesheet and room script under
	// Prefix/static/ with content-hashed names, for templates that would
	// rather link them (served by Asset, cacheable as immutable).
	StyleURL, ScriptURL string
	// PowJSURL and PowWorkerURL are the proof-of-work solver (pow.js) and
	// its Web Worker (pow-worker.js) under Prefix/static/ with
	// content-hashed names; see pow.go.
	PowJSURL, PowWorkerURL string
	// RetrySeconds is BusyRetrySeconds (DownRetrySeconds on the
	// origin-down page): the page's script retries after 0.6 to 1.4 times
	// it.
	RetrySeconds int
	// MaintenanceRefreshSeconds is MaintenanceRetrySeconds: the
	// maintenance page reloads itself this often (a meta refresh).
	MaintenanceRefreshSeconds int
	// RefreshSeconds is twice RetrySeconds, for the busy page's
	// <meta http-equiv="refresh"> fallback when scripts do not run.
	RefreshSeconds int
	// OGURL is the room's canonical URL for og:url (PageConfig.PublicURL
	// and JoinPath), empty without a public URL: the Host header a
	// request names is never used. Room pages only.
	OGURL string
	// OGImage is the logo as an absolute https URL for og:image and
	// twitter:image, empty without a logo (or with a same-site logo path
	// and no public URL). Room pages only.
	OGImage string
	// NoJSJoin says visitors without JavaScript may join with the form
	// in <noscript> (PageConfig.NoJSJoin); NoJSJoinURL is where it posts
	// (Prefix+NoJSJoinPath).
	NoJSJoin    bool
	NoJSJoinURL string
	// NoJS is one visitor's state on the no-JavaScript status page
	// (nojs.html); nil on every other page.
	NoJS *NoJSView
}

// ScriptConfig is the configuration the room page's script reads from the
// <script type="application/json" id="wr-config"> element.
type ScriptConfig struct {
	// Event is the event id sent with join and status.
	Event string `json:"event"`
	// Name is the display name, for the document title.
	Name string `json:"name"`
	// Prefix is the path prefix of the API (Prefix+"/api/join").
	Prefix string `json:"prefix"`
	// Lang is the page's language, for Intl number, plural and time
	// formatting.
	Lang string `json:"lang"`
	// PositionDisplay is exact, approximate or hidden; a status response's
	// position_display overrides it.
	PositionDisplay string `json:"position_display"`
	// Texts are the texts the script shows, by key, overrides applied.
	Texts map[string]string `json:"texts"`
	// PowJS is the URL of the proof-of-work solver (pow.js), to load with
	// a <script> element before calling waitroomSolve.
	PowJS string `json:"pow_js"`
	// PowWorker is the URL of its Web Worker (pow-worker.js), waitroomSolve's
	// worker option.
	PowWorker string `json:"pow_worker"`
	// Captcha says how to drive the event's CAPTCHA widget, whose site
	// key and script URL come with a challenge; absent without one.
	Captcha *WidgetScript `json:"captcha,omitempty"`
	// Invites: the event takes invite codes, the page shows a code field
	// (PageConfig.Invites).
	Invites bool `json:"invites,omitempty"`
}

// Pages are every event's pre-rendered waiting-room pages and the static
// assets. A Pages is immutable after New and safe for concurrent use; the
// returned byte slices are shared and must not be modified.
type Pages struct {
	events map[string]*eventPages
	site   *eventPages // busy pages; blocked pages outside any event
	assets map[string]asset
	csp    string
	pow    powScripts
}

// eventPages are one event's pages, indexed like languages.
type eventPages struct {
	def int // the default language
	// nojs is the no-JavaScript page's data in each language, but for
	// the visitor's state.
	nojs         []TemplateData
	csp          string // the room page's policy
	room, roomGz [][]byte
	draw, drawGz [][]byte // the draw page (draw.go)
	busy, busyGz [][]byte // site pages only
	down, downGz [][]byte // site pages only
	blocked      [][]byte
	session      [][]byte // the session banner script (session.go)
	maintenance  [][]byte // event pages only
}

// asset is one file served under Prefix/static/.
type asset struct {
	body        []byte
	contentType string
}

// templates are the three page templates of one template directory (or
// the embedded ones).
type templates struct {
	room, busy, blocked, down, draw, maintenance *template.Template
}

// builtin are the embedded assets, read once.
type builtin struct {
	roomJS, busyJS, css []byte
	drawJS              []byte
	sessionJS           []byte
	jsName, cssName     string
	pow                 powScripts
}

func loadBuiltin() builtin {
	read := func(name string) []byte {
		b, err := webFS.ReadFile("web/" + name)
		if err != nil {
			panic("static: embedded " + name + " missing: " + err.Error())
		}
		return b
	}
	b := builtin{roomJS: compactJS(read("room.js")), busyJS: compactJS(read("busy.js")), css: read("room.css"),
		drawJS: compactJS(read("draw.js")), sessionJS: compactJS(read("session.js"))}
	b.jsName = hashedName("room", ".js", b.roomJS)
	b.cssName = hashedName("room", ".css", b.css)
	b.pow = loadPow(read)
	return b
}

// compactJS drops what a browser does not need from the embedded scripts,
// which are written to be read: indentation, blank lines and lines that
// are only a // comment. It changes nothing else, so it is safe for
// scripts without multi-line string or template literals (ours; a test
// checks that).
func compactJS(src []byte) []byte {
	out := make([]byte, 0, len(src))
	for line := range bytes.Lines(src) {
		line = bytes.TrimLeft(line, " \t")
		if len(bytes.TrimSpace(line)) == 0 || bytes.HasPrefix(line, []byte("//")) {
			continue
		}
		out = append(out, line...)
	}
	return out
}

// hashedName is base.<first 16 hex digits of SHA-256>ext.
func hashedName(base, ext string, body []byte) string {
	sum := sha256.Sum256(body)
	return base + "." + hex.EncodeToString(sum[:8]) + ext
}

// New validates cfgs (one per event; event ids must be unique), parses
// the templates (the embedded ones and every TemplateDir) and renders
// every page of every event in every language once. Every problem comes
// back, as *ConfigError values joined with errors.Join (each matches
// ErrInvalidConfig). cfgs may be empty: then only Busy, Blocked (for no
// event) and Asset serve anything.
func New(cfgs []PageConfig) (*Pages, error) {
	b := loadBuiltin()
	var errs []error
	rs := make([]resolved, len(cfgs))
	seen := make(map[string]int, len(cfgs))
	for i, c := range cfgs {
		r, perrs := resolve(i, c)
		errs = append(errs, perrs...)
		if j, dup := seen[c.Event]; dup && c.Event != "" {
			errs = append(errs, &ConfigError{Index: i, Event: c.Event, Field: "event", Msg: fmt.Sprintf("duplicate: pages[%d] has the same event", j)})
		}
		seen[c.Event] = i
		rs[i] = r
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	embedded, err := parseTemplates(webFS, "web", true)
	if err != nil {
		panic("static: embedded templates: " + err.Error()) // a test covers it
	}
	byDir := map[string]*templates{}
	for i, r := range rs {
		if r.TemplateDir == "" {
			continue
		}
		if _, ok := byDir[r.TemplateDir]; ok {
			continue
		}
		t, err := parseTemplates(os.DirFS(r.TemplateDir), ".", false)
		if err != nil {
			errs = append(errs, &ConfigError{Index: i, Event: r.Event, Field: "template_dir", Msg: err.Error()})
			continue
		}
		t.fill(embedded)
		byDir[r.TemplateDir] = t
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	tmplFor := func(r resolved) *templates {
		if t := byDir[r.TemplateDir]; t != nil {
			return t
		}
		return embedded
	}

	p := &Pages{events: make(map[string]*eventPages, len(rs)), assets: map[string]asset{
		b.jsName:         {body: b.roomJS, contentType: "text/javascript; charset=utf-8"},
		b.cssName:        {body: b.css, contentType: "text/css; charset=utf-8"},
		b.pow.solverName: {body: b.pow.solver, contentType: "text/javascript; charset=utf-8"},
		b.pow.workerName: {body: b.pow.worker, contentType: "text/javascript; charset=utf-8"},
		b.pow.simdName:   {body: b.pow.simd, contentType: contentTypeWasm},
		b.pow.scalarName: {body: b.pow.scalar, contentType: contentTypeWasm},
	}, pow: b.pow}
	csp := newPolicy()
	for i, r := range rs {
		ev, err := render(r, tmplFor(r), b, false, csp)
		if err != nil {
			errs = append(errs, &ConfigError{Index: i, Event: r.Event, Field: "template_dir", Msg: err.Error()})
			continue
		}
		p.events[r.Event] = ev
	}
	// The site pages: the first event's branding without its name, or the
	// defaults.
	var site resolved
	if len(rs) > 0 {
		site = rs[0]
	} else {
		site, _ = resolve(0, PageConfig{Event: "site"})
	}
	siteTmpl := tmplFor(site)
	siteEvent := site.Event
	site.Event, site.Name, site.JoinPath = "", "", DefaultJoinPath
	ev, err := render(site, siteTmpl, b, true, csp)
	if err != nil { // only an override busy.html of the first event can fail here
		errs = append(errs, &ConfigError{Index: 0, Event: siteEvent, Field: "template_dir", Msg: err.Error()})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	p.site = ev
	// The hashes of every page are known only now.
	p.csp = csp.String()
	room := csp.room(CSPSources{})
	for _, r := range rs {
		ev := p.events[r.Event]
		ev.csp = room
		if !r.WidgetCSP.empty() {
			ev.csp = csp.room(r.WidgetCSP)
		}
	}
	return p, nil
}

// parseTemplates reads room.html (required) and busy.html, blocked.html
// down.html and draw.html (optional unless all) from dir of fsys.
func parseTemplates(fsys fs.FS, dir string, all bool) (*templates, error) {
	t := &templates{}
	for _, f := range []struct {
		name     string
		required bool
		dst      **template.Template
	}{
		{"room.html", true, &t.room},
		{"busy.html", all, &t.busy},
		{"blocked.html", all, &t.blocked},
		{"down.html", all, &t.down},
		{"draw.html", all, &t.draw},
		{"maintenance.html", all, &t.maintenance},
	} {
		path := f.name
		if dir != "." {
			path = dir + "/" + f.name
		}
		src, err := readLimited(fsys, path)
		if errors.Is(err, fs.ErrNotExist) && !f.required {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.name, err)
		}
		tm, err := template.New(f.name).Option("missingkey=error").Parse(string(src))
		if err != nil {
			return nil, err
		}
		*f.dst = tm
	}
	return t, nil
}

func readLimited(fsys fs.FS, path string) ([]byte, error) {
	st, err := fs.Stat(fsys, path)
	if err != nil {
		return nil, err
	}
	if st.Size() > MaxTemplateSize {
		return nil, fmt.Errorf("larger than %d bytes", MaxTemplateSize)
	}
	return fs.ReadFile(fsys, path)
}

// fill takes the templates t lacks from def.
func (t *templates) fill(def *templates) {
	if t.busy == nil {
		t.busy = def.busy
	}
	if t.blocked == nil {
		t.blocked = def.blocked
	}
	if t.down == nil {
		t.down = def.down
	}
	if t.draw == nil {
		t.draw = def.draw
	}
	if t.maintenance == nil {
		t.maintenance = def.maintenance
	}
}

// render executes r's pages in every language. The site pages (site)
// have no room page.
func render(r resolved, t *templates, b builtin, site bool, csp *policy) (*eventPages, error) {
	ev := &eventPages{def: r.defLang}
	n := len(languages)
	if !site {
		ev.room, ev.roomGz, ev.blocked = make([][]byte, n), make([][]byte, n), make([][]byte, n)
		ev.draw, ev.drawGz = make([][]byte, n), make([][]byte, n)
		ev.session = make([][]byte, n)
		ev.maintenance = make([][]byte, n)
	} else {
		ev.busy, ev.busyGz, ev.blocked = make([][]byte, n), make([][]byte, n), make([][]byte, n)
		ev.down, ev.downGz = make([][]byte, n), make([][]byte, n)
	}
	vars := template.CSS(":root{--wr-bg:" + r.colors.Background + ";--wr-fg:" + r.colors.Text +
		";--wr-accent:" + r.colors.Accent + ";--wr-on-accent:" + r.onAccent + "}")
	if r.LogoURL != "" && !strings.HasPrefix(r.LogoURL, "/") {
		if u, err := url.Parse(r.LogoURL); err == nil {
			csp.img[u.Scheme+"://"+u.Host] = true
		}
	}
	for li, lang := range languages {
		texts := withOverrides(builtinTexts[lang], r.Texts[lang])
		d := TemplateData{
			Lang: lang, Dir: Direction(lang), Langs: langLinks(lang), Event: r.Event, Name: r.Name, Prefix: r.Prefix, LogoURL: r.LogoURL,
			JoinPath: r.JoinPath, PositionDisplay: r.PositionDisplay, Colors: r.colors,
			T: texts, Vars: vars, Style: template.CSS(b.css),
			StyleURL:     r.Prefix + "/static/" + b.cssName,
			ScriptURL:    r.Prefix + "/static/" + b.jsName,
			PowJSURL:     r.Prefix + "/static/" + b.pow.solverName,
			PowWorkerURL: r.Prefix + "/static/" + b.pow.workerName,
			RetrySeconds: BusyRetrySeconds, RefreshSeconds: 2 * BusyRetrySeconds,
			NoJSJoin: r.NoJSJoin, NoJSJoinURL: r.Prefix + NoJSJoinPath,
			MaintenanceRefreshSeconds: MaintenanceRetrySeconds,
		}
		exec := func(tm *template.Template, script []byte) ([]byte, error) {
			d := d
			d.Script = template.JS(script)
			var buf bytes.Buffer
			if err := tm.Execute(&buf, &d); err != nil {
				return nil, err
			}
			out := buf.Bytes()
			if err := csp.note(out); err != nil {
				return nil, fmt.Errorf("%s: %w", tm.Name(), err)
			}
			return out, nil
		}
		var err error
		if !site {
			d.Config = scriptConfig(r, lang, texts)
			d.Config.PowJS, d.Config.PowWorker = d.PowJSURL, d.PowWorkerURL
			if r.Widget != (WidgetScript{}) {
				w := r.Widget
				d.Config.Captcha = &w
			}
			d.OGURL, d.OGImage = openGraph(r)
			if ev.room[li], err = exec(t.room, b.roomJS); err != nil {
				return nil, err
			}
			ev.roomGz[li] = gzipped(ev.room[li])
			d.Config = drawConfig(r, lang, texts)
			if ev.draw[li], err = exec(t.draw, b.drawJS); err != nil {
				return nil, err
			}
			ev.drawGz[li] = gzipped(ev.draw[li])
			d.Config, d.OGURL, d.OGImage = nil, "", ""
			if err := ev.noteNoJS(d, csp); err != nil {
				return nil, err
			}
			if ev.session[li], err = sessionScript(b.sessionJS, r, lang, texts); err != nil {
				return nil, err
			}
			if ev.maintenance[li], err = exec(t.maintenance, nil); err != nil {
				return nil, err
			}
		} else {
			if ev.busy[li], err = exec(t.busy, b.busyJS); err != nil {
				return nil, err
			}
			ev.busyGz[li] = gzipped(ev.busy[li])
			d.RetrySeconds, d.RefreshSeconds = DownRetrySeconds, 2*DownRetrySeconds
			if ev.down[li], err = exec(t.down, b.busyJS); err != nil {
				return nil, err
			}
			ev.downGz[li] = gzipped(ev.down[li])
		}
		if ev.blocked[li], err = exec(t.blocked, nil); err != nil {
			return nil, err
		}
	}
	return ev, nil
}

// withOverrides is a language's texts with an event's overrides applied.
// An override of a plural text (ahead_other) also drops the language's
// other plural forms of it (ahead_few) that the overrides do not give,
// so that the operator's text shows for every number.
func withOverrides(builtin, overrides map[string]string) map[string]string {
	texts := maps.Clone(builtin)
	for k := range overrides {
		base, ok := strings.CutSuffix(k, "_other")
		if !ok {
			continue
		}
		for _, f := range pluralForms {
			if _, given := overrides[base+"_"+f]; !given {
				delete(texts, base+"_"+f)
			}
		}
	}
	maps.Copy(texts, overrides)
	return texts
}

// otherPages are the prefixes of the texts only other pages (or the HTML
// the server writes) show; the room script is not sent them.
var otherPages = []string{"busy_", "blocked_", "down_", "nojs_", "og_", "dp_", sessionTextPrefix, "maintenance_"}

// forScript reports whether the room script shows the text named k.
func forScript(k string) bool {
	switch k {
	case "title", "noscript", "invite_label", "invite_hint", "invite_submit", "lang_label":
		return false
	}
	for _, p := range otherPages {
		if strings.HasPrefix(k, p) {
			return false
		}
	}
	return true
}

// scriptConfig is the room script's configuration: the texts it shows
// (not those of the other pages or the ones written into the HTML).
func scriptConfig(r resolved, lang string, texts map[string]string) *ScriptConfig {
	c := &ScriptConfig{Event: r.Event, Name: r.Name, Prefix: r.Prefix, Lang: lang,
		PositionDisplay: r.PositionDisplay, Texts: make(map[string]string, len(texts)), Invites: r.Invites}
	for k, v := range texts {
		if !forScript(k) {
			continue
		}
		c.Texts[k] = v
	}
	return c
}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// Room returns the waiting-room page of event in the language the
// Accept-Language header asks for (see Negotiate; the event's default
// language otherwise), or nil when event has no page. Serve it with
// status 200, Content-Type ContentTypeHTML, Cache-Control: no-store and
// Content-Security-Policy: RoomCSP(event). It does not allocate.
func (p *Pages) Room(event string, acceptLanguage []byte) []byte {
	ev := p.events[event]
	if ev == nil {
		return nil
	}
	return ev.room[ev.lang(acceptLanguage)]
}

// RoomGzip is Room compressed with gzip (best compression, done once in
// New), for clients that accept it: send it with Content-Encoding: gzip
// and Vary: Accept-Encoding. It does not allocate.
func (p *Pages) RoomGzip(event string, acceptLanguage []byte) []byte {
	ev := p.events[event]
	if ev == nil {
		return nil
	}
	return ev.roomGz[ev.lang(acceptLanguage)]
}

// Busy returns the page for requests shed under load (status 503 with
// Retry-After: BusyRetrySeconds): it says the site is busy and reloads
// itself after a jittered few seconds (by a GET of the same URL). It
// carries the branding of the first PageConfig given to New (the
// defaults when there was none) and no event name. It does not allocate.
func (p *Pages) Busy(acceptLanguage []byte) []byte {
	return p.site.busy[p.site.lang(acceptLanguage)]
}

// BusyGzip is Busy compressed with gzip. It does not allocate.
func (p *Pages) BusyGzip(acceptLanguage []byte) []byte {
	return p.site.busyGz[p.site.lang(acceptLanguage)]
}

// Down returns the page for requests the origin could not answer (status
// 502 or 504 with Retry-After: DownRetrySeconds): it says the site is not
// answering, that this is not the visitor's fault, and reloads itself
// after a jittered few seconds, as Busy does. Same branding as Busy. It
// does not allocate.
func (p *Pages) Down(acceptLanguage []byte) []byte {
	return p.site.down[p.site.lang(acceptLanguage)]
}

// DownGzip is Down compressed with gzip. It does not allocate.
func (p *Pages) DownGzip(acceptLanguage []byte) []byte {
	return p.site.downGz[p.site.lang(acceptLanguage)]
}

// Blocked returns the page for paths that need a pass when the request
// has none (status 403): it says so and links to the event's JoinPath.
// For an event without a page it returns the site's blocked page, which
// links to "/". It does not allocate.
func (p *Pages) Blocked(event string, acceptLanguage []byte) []byte {
	ev := p.events[event]
	if ev == nil {
		ev = p.site
	}
	return ev.blocked[ev.lang(acceptLanguage)]
}

// Maintenance returns event's maintenance page (status 503 with
// Retry-After: MaintenanceRetrySeconds): it says the site is down for
// maintenance, that nobody in the queue loses their place, and reloads
// itself every MaintenanceRetrySeconds. It carries the event's branding;
// nil for an event without pages. It does not allocate.
func (p *Pages) Maintenance(event string, acceptLanguage []byte) []byte {
	ev := p.events[event]
	if ev == nil {
		return nil
	}
	return ev.maintenance[ev.lang(acceptLanguage)]
}

// Asset returns the static file served at Prefix/static/<name>, its
// Content-Type, and whether there is one. Names carry a hash of the
// content, so serve them with Cache-Control: public, max-age=31536000,
// immutable. It does not allocate.
func (p *Pages) Asset(name []byte) (body []byte, contentType string, ok bool) {
	a, ok := p.assets[string(name)]
	return a.body, a.contentType, ok
}

// AssetNames returns the names Asset serves, sorted.
func (p *Pages) AssetNames() []string {
	return slices.Sorted(maps.Keys(p.assets))
}

// CSP returns the Content-Security-Policy for every page of p but the
// room pages of events with a widget (RoomCSP): no source but the pages'
// own inline script and style blocks (by SHA-256 hash), same-origin
// resources, same-origin fetches and Web Workers (the proof-of-work
// solver's), and the logos' https origins for images; no frames, no
// framing, no <base>, no plugins. It is the same for every page, so it
// can be set as a fixed header.
func (p *Pages) CSP() string { return p.csp }

// RoomCSP returns the Content-Security-Policy of event's room page: CSP
// with 'wasm-unsafe-eval' added to script-src (the proof-of-work solver
// compiles its WebAssembly in the page when it cannot start Workers; no
// JavaScript eval is allowed) and the sources of the event's widget
// (PageConfig.WidgetCSP) added to their directives, frame-src among
// them. It is CSP for an event without a page. It does not allocate.
func (p *Pages) RoomCSP(event string) string {
	if ev := p.events[event]; ev != nil {
		return ev.csp
	}
	return p.csp
}

// lang returns the index of the language to serve for an Accept-Language
// header.
func (ev *eventPages) lang(acceptLanguage []byte) int {
	if i := negotiate(acceptLanguage, languages, ev.def); i >= 0 {
		return i
	}
	return ev.def
}
