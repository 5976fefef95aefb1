package console

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/waitroom/waitroom/admission"
)

// contentSecurityPolicy allows the page its own assets and nothing else:
// no inline script or style, no other origin, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// MaxNotice bounds a notice's length in characters (as the admin API
// does).
const MaxNotice = admission.MaxNoticeRunes

// maxForm bounds a form's body.
const maxForm = 8 << 10

func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// loginPage is what the login template shows.
type loginPage struct {
	Message string
}

// dashPage is what the dashboard template shows.
type dashPage struct {
	CSRF      string
	Events    []eventView
	Modes     []admission.Mode
	MaxNotice int
	Done      string // the message of the change just made
	Failed    string // the message of the change just refused
	Focus     string // the event it concerned
	Expires   string
}

func (c *Console) render(w http.ResponseWriter, status int, name string, data any) {
	var b bytes.Buffer
	if err := c.pages.ExecuteTemplate(&b, name, data); err != nil {
		c.opts.Log.Error("console: rendering a page failed", "page", name, "err", err)
		http.Error(w, "something went wrong on our side", http.StatusInternalServerError)
		return
	}
	pageHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// refuse answers a request the console will not serve with the login
// page and a message.
func (c *Console) refuse(w http.ResponseWriter, status int, msg string) {
	c.render(w, status, "login.html", loginPage{Message: msg})
}

func (c *Console) dashboard(w http.ResponseWriter, r *http.Request) {
	ss, ok := c.sessions.fromRequest(r)
	if !ok {
		c.render(w, http.StatusOK, "login.html", loginPage{})
		return
	}
	views, _ := c.snapshot()
	q := r.URL.Query()
	p := dashPage{CSRF: c.sessions.csrf(ss), Events: views, MaxNotice: MaxNotice,
		Modes: []admission.Mode{admission.ModeAlways, admission.ModeThreshold, admission.ModeScheduled},
		Done:  doneText[q.Get("done")], Failed: failText[q.Get("failed")], Focus: q.Get("event"),
		Expires: ss.expires.UTC().Format("15:04 UTC")}
	c.render(w, http.StatusOK, "dashboard.html", p)
}

func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	now, addr := c.opts.Clock(), clientAddr(r)
	if wait := c.logins.WaitAt(addr, now); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds()+1)))
		c.refuse(w, http.StatusTooManyRequests, fmt.Sprintf("Too many wrong tokens from your address: try again in %d s.", int(wait.Seconds()+1)))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		c.refuse(w, http.StatusBadRequest, "The form could not be read; try again.")
		return
	}
	if !c.sessions.tokenOK(r.PostForm.Get("token")) {
		c.logins.AllowAt(addr, now) // a failure costs a token of the budget
		c.opts.Log.Warn("console: login refused", "from", r.RemoteAddr)
		c.refuse(w, http.StatusUnauthorized, "That is not the admin token.")
		return
	}
	v, ss := c.sessions.issue()
	http.SetCookie(w, cookie(r, v, ss.expires, int(ss.expires.Sub(c.opts.Clock()).Seconds())))
	c.opts.Log.Info("console: operator signed in", "from", r.RemoteAddr)
	http.Redirect(w, r, "/admin/", http.StatusSeeOther)
}

type sessionKey struct{}

// session passes on only requests with a valid session (the session in
// the context) and, for POSTs, its CSRF token.
func (c *Console) session(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ss, ok := c.sessions.fromRequest(r)
		if !ok {
			http.SetCookie(w, cookie(r, "", time.Unix(0, 0), -1))
			c.refuse(w, http.StatusUnauthorized, "Your session ended; sign in again.")
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxForm)
			if err := r.ParseForm(); err != nil || !c.sessions.csrfOK(ss, r.PostForm.Get("csrf")) {
				c.refuse(w, http.StatusForbidden, "This form is stale or was not sent by the console; reload the page.")
				return
			}
		}
		next(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, ss)))
	})
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	c.sessions.end(r.Context().Value(sessionKey{}).(session))
	http.SetCookie(w, cookie(r, "", time.Unix(0, 0), -1))
	c.render(w, http.StatusOK, "login.html", loginPage{Message: "Signed out."})
}

// The messages after an action, by its code.
var (
	doneText = map[string]string{
		"pause": "Admission paused.", "resume": "Admission resumed.", "sold-out": "Marked sold out.",
		"on-sale": "On sale again.", "caps": "Caps set; they apply from the next tick.",
		"caps-reset": "Caps back to the configuration's.", "mode": "Mode switched.",
		"mode-reset": "Mode back to the configuration's.", "notice": "Notice posted.",
		"notice-clear": "Notice removed.",
	}
	failText = map[string]string{
		"caps":        "Caps must be whole numbers ≥ 0 (0: no cap).",
		"mode":        "Pick always, threshold or scheduled.",
		"no_on_sale":  "This event has no on_sale_at to schedule a draw at.",
		"notice":      fmt.Sprintf("A notice is plain text of at most %d characters.", MaxNotice),
		"action":      "There is no such action.",
		"unavailable": "The admission store did not take the change; try again.",
		"unknown":     "There is no such event.",
	}
)

// controls are the actions that set one field of an event's control, as
// the admin API's verbs of the same names do.
var controls = map[string]func(c *admission.Control){
	"pause":      func(c *admission.Control) { c.Paused = true },
	"resume":     func(c *admission.Control) { c.Paused = false },
	"sold-out":   func(c *admission.Control) { c.SoldOut = true },
	"on-sale":    func(c *admission.Control) { c.SoldOut = false },
	"caps-reset": func(c *admission.Control) { c.Caps = nil },
	"mode-reset": func(c *admission.Control) { c.Mode = "" },
}

func (c *Console) action(w http.ResponseWriter, r *http.Request) {
	id, act := r.PathValue("id"), r.PathValue("action")
	back := func(key, code string) {
		http.Redirect(w, r, "/admin/?"+key+"="+url.QueryEscape(code)+"&event="+url.QueryEscape(id)+"#ev-"+url.PathEscape(id),
			http.StatusSeeOther)
	}
	cfg, err := c.opts.Engine.Config(id)
	if err != nil {
		back("failed", "unknown")
		return
	}
	fn, attrs := controls[act], []any{}
	done := act
	switch act {
	case "caps":
		ma, err1 := strconv.Atoi(strings.TrimSpace(r.PostForm.Get("max_active")))
		mn, err2 := strconv.Atoi(strings.TrimSpace(r.PostForm.Get("max_new_per_minute")))
		if err1 != nil || err2 != nil || ma < 0 || mn < 0 {
			back("failed", "caps")
			return
		}
		caps := admission.Caps{MaxActive: ma, MaxNewPerMinute: mn}
		fn, attrs = func(c *admission.Control) { c.Caps = &caps }, []any{"max_active", ma, "max_new_per_minute", mn}
	case "mode":
		mode := admission.Mode(r.PostForm.Get("mode"))
		if !mode.Valid() {
			back("failed", "mode")
			return
		}
		if mode == admission.ModeScheduled && cfg.OpenFromStart() {
			back("failed", "no_on_sale")
			return
		}
		fn, attrs = func(c *admission.Control) { c.Mode = mode }, []any{"mode", mode}
	case "notice":
		// A textarea sends CRLF line ends; the notice keeps LF.
		text := strings.TrimSpace(strings.ReplaceAll(r.PostForm.Get("notice"), "\r\n", "\n"))
		if text == "" {
			fn, done = func(c *admission.Control) { c.Notice = nil }, "notice-clear"
			break
		}
		// The text alone: translations of an earlier text (posted through
		// the admin API) would say something else.
		n := admission.Notice{Text: text}
		if n.Check() != nil {
			back("failed", "notice")
			return
		}
		fn, attrs = func(c *admission.Control) { c.Notice = &n }, []any{"notice", text}
	}
	if fn == nil {
		back("failed", "action")
		return
	}
	if _, err := c.opts.Engine.UpdateControl(r.Context(), id, fn); err != nil {
		c.opts.Log.Error("console: operator change failed", "event", id, "change", act, "err", err)
		back("failed", "unavailable")
		return
	}
	c.opts.Log.Info("console: operator change", append([]any{"event", id, "change", act, "from", r.RemoteAddr}, attrs...)...)
	c.Sample() // the pages show the change at once
	back("done", done)
}

// stream sends the charts' history, then each sample's figures, as
// server-sent events, until the client goes, the session expires or the
// console stops.
func (c *Console) stream(w http.ResponseWriter, r *http.Request) {
	ss := r.Context().Value(sessionKey{}).(session)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event string, v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			c.opts.Log.Error("console: encoding a stream event failed", "err", err)
			return false
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if _, err := fmt.Fprint(w, "retry: 3000\n\n"); err != nil {
		return
	}
	if !send("history", map[string]any{"history": c.history(), "span_ms": History.Milliseconds(),
		"sample_ms": c.opts.Sample.Milliseconds()}) {
		return
	}
	expiry := time.NewTimer(ss.expires.Sub(c.opts.Clock()))
	defer expiry.Stop()
	for {
		views, next := c.snapshot()
		points := make(map[string]map[string]any, len(views))
		for _, v := range views {
			points[v.ID] = c.last(v.ID)
		}
		if !send("figures", map[string]any{"at": c.opts.Clock().UTC(), "events": views, "points": points}) {
			return
		}
		select {
		case <-next:
		case <-r.Context().Done():
			return
		case <-c.stopped:
			return
		case <-expiry.C:
			send("expired", map[string]string{"message": "Your session ended; sign in again."})
			return
		}
	}
}

func (c *Console) asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if path.Ext(name) == ".html" {
		http.NotFound(w, r)
		return
	}
	b, err := fs.ReadFile(c.assets, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	pageHeaders(w)
	w.Header().Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}
