// Package static is the waiting room's page: the HTML a visitor without a
// pass sees, its script and stylesheet, the "too busy" page for shed
// requests, the "site not answering" page for an origin that is down and
// the "join the queue" page for blocked paths, all embedded
// (go:embed) with an override directory for custom templates.
//
// New validates one PageConfig per event and renders every page of every
// event in every language once. The languages (Languages) are the text
// files under lang/, one JSON object of text key to text per language
// (en.json, ar.json, de.json and eleven more; Arabic is written right to
// left, and its pages carry dir="rtl"): adding a language is adding a file
// with every key of en.json (and the further plural forms the language
// has) and its name in languages.go. The room, draw and no-JavaScript
// pages end in a language switcher whose links add ?lang=xx (LangQuery);
// the server keeps the choice in a cookie (LangCookie) and Chosen turns
// either into the page's language. Serving is then a map lookup and an
// Accept-Language negotiation
// (Negotiate) that returns shared bytes without allocating: the page is
// the same for every visitor of an event and language, and everything per
// visitor (position, ETA, state, the redirect) comes from the waiting-room
// JSON API (P/api/join and P/api/status, P being the prefix, /_wr by
// default) that the page script calls. RoomGzip and BusyGzip are the
// same pages compressed once.
//
// The one page rendered per request is NoJS (nojs.go, web/nojs.html): the
// status page of a visitor whose browser runs no script, who joined with
// the room page's <noscript> form; it holds their position and reloads
// itself. The room page's head carries OpenGraph and Twitter card tags
// whose URLs come from PageConfig.PublicURL only.
//
// # Inline, not linked
//
// The default page inlines its script and stylesheet instead of linking
// them under P/static/. In a stampede of phones on a slow, lossy network
// every extra request is another round trip (hundreds of milliseconds on
// 3G, more on a congested cell) before the page can join the queue, and
// another request per visitor for the proxy to answer at the peak; a
// linked file also breaks when a rolling deployment serves the page from
// one version and the hashed asset from another. Inline, one response of
// 10.4 to 11.1 KB gzipped (30.2 to 32.8 KB raw, by language; the tests print
// the figures and hold a budget of 11 KiB gzipped) renders the page and
// starts joining. The cost is that a reload
// fetches those bytes again, because the page lives at the gated URL and
// must be no-store. The same files are still served by Asset under
// content-hashed names (cacheable as immutable), for override templates
// that prefer to link them and for scripts such as a proof-of-work worker
// that must be separate files.
//
// CSP is a Content-Security-Policy for every page: it allows their inline
// blocks by hash, same-origin resources and fetches, and the logos'
// origins, and nothing else; the server sends it with each page. The
// room page's differs (RoomCSP): it may compile WebAssembly
// ('wasm-unsafe-eval', for the proof-of-work search when Workers are
// refused; JavaScript eval stays refused), and for an event with a
// CAPTCHA it adds the sources its provider documents for the widget
// (PageConfig.WidgetCSP), only for that event.
//
// The script names no CAPTCHA provider: how it drives a widget (the global
// object the provider's script defines, whether to wait for its ready(),
// whether to execute it for an action instead of rendering it) is the
// provider's own description, PageConfig.Widget (a WidgetScript, which
// the wiring copies from challenge.WidgetScript), written into the room
// page's ScriptConfig.
//
// # The page script
//
// web/room.js (vanilla JavaScript, no dependencies, no external requests
// but the CAPTCHA provider's widget when the bot defence asks for it)
// reads its configuration (ScriptConfig) from the JSON in #wr-config,
// POSTs P/api/join with the event and return path (location.pathname +
// location.search), then polls P/api/status every refresh_seconds (at
// least 0.2 s, ±20% jitter), backing off exponentially on network errors
// and 5xx, honouring Retry-After on 429, and joining again on 401
// no_ticket (three in a row: it asks the visitor to allow cookies). It
// shows the state, the position (exact, "about", or hidden), an ETA range
// rounded outwards, a progress bar from the first position seen (kept in
// sessionStorage), countdowns to the opening, the sale and the draw (on
// the server's clock when the visitor's is off), one sentence about the
// draw with a link to its audit, and moves on with location.replace when
// admitted — only to a same-site path (a single leading "/", no
// backslash or whitespace), else to its own path. An aria-live region
// announces state changes at once and position changes at most every
// 30 s. It is one file on purpose (inlined, one closure); its top says
// why and lists its sections, as web/pow-worker.js's does.
//
// # Templates
//
// web/room.html, web/busy.html, web/blocked.html, web/down.html,
// web/draw.html and web/maintenance.html are html/template
// files executed with TemplateData; PageConfig.TemplateDir replaces them
// per event (room.html required, the others optional). A replacement
// room.html keeps the element ids the script fills in (wr-headline,
// wr-message, wr-position, wr-bar/wr-fill, wr-eta/wr-eta-value,
// wr-countdown/wr-countdown-label/wr-countdown-value/wr-when,
// wr-draw/wr-draw-text/wr-audit, wr-note, wr-actions/wr-continue/wr-retry,
// wr-live, and wr-captcha for a CAPTCHA widget, added before wr-note when
// missing); the script skips any others that are missing. Templates may use
// inline <script> and <style> elements (their hashes go into CSP) but no
// style or on… attributes, and no third-party resources: a waiting room
// must not depend on someone else's server at its peak.
//
// It is not the server: package proxy decides which page a request gets,
// sets the status code and headers, and implements the JSON API.
package static
