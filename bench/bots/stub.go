package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// stubPaths are the endpoints of the CAPTCHA stub per provider kind, as
// the providers' real URLs spell them.
var stubPaths = map[string]struct{ script, verify string }{
	"turnstile": {"/turnstile/v0/api.js", "/turnstile/v0/siteverify"},
	"hcaptcha":  {"/1/api.js", "/siteverify"},
	"recaptcha": {"/recaptcha/api.js", "/recaptcha/api/siteverify"},
}

// stubJS is the widget script of the stub: it defines the globals the
// page drives (render, reset, remove, ready, execute) and renders a box
// that never yields a token, since nobody solves CAPTCHAs in the
// benchmark. A visitor sent to the CAPTCHA band is stuck there, as a bot
// without a CAPTCHA farm is.
const stubJS = `(function () {
  var api = {
    render: function (el, opts) {
      if (typeof el === "string") el = document.querySelector(el);
      var d = document.createElement("div");
      d.textContent = "CAPTCHA (benchmark stub: not solved)";
      el.appendChild(d);
      return "stub-widget";
    },
    reset: function () {},
    remove: function () {},
    ready: function (cb) { cb(); },
    execute: function () { return new Promise(function () {}); }
  };
  window.turnstile = api; window.hcaptcha = api; window.grecaptcha = api;
})();
`

// services are the loopback servers around the waiting room: the
// recording origin, the CAPTCHA provider stub and the webhook receiver.
type services struct {
	origin, captcha, hooks *http.Server
	originAddr             string
	captchaBase, hookURL   string

	originRequests atomic.Int64 // requests other than health checks
	originHealth   atomic.Int64
	verifyCalls    atomic.Int64
	scriptLoads    atomic.Int64
	mu             sync.Mutex
	hookKinds      map[string]int
	paths          map[string]int // origin paths, other than health checks
}

func startServices() (*services, error) {
	s := &services{hookKinds: map[string]int{}, paths: map[string]int{}}
	origin := http.NewServeMux()
	origin.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			s.originHealth.Add(1)
			io.WriteString(w, "ok\n")
			return
		}
		s.originRequests.Add(1)
		s.mu.Lock()
		s.paths[r.Method+" "+r.URL.Path]++
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><html><head><title>shop</title></head><body><p>The shop.</p></body></html>\n")
	})
	captcha := http.NewServeMux()
	for _, p := range stubPaths {
		captcha.HandleFunc("GET "+p.script, func(w http.ResponseWriter, r *http.Request) {
			s.scriptLoads.Add(1)
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			io.WriteString(w, stubJS)
		})
		captcha.HandleFunc("POST "+p.verify, func(w http.ResponseWriter, r *http.Request) {
			// The providers' wire format: a form post of secret and
			// response, a JSON answer. The stub issued no token, so
			// every response is refused as the providers refuse an
			// unknown one.
			s.verifyCalls.Add(1)
			r.ParseForm()
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"success":false,"error-codes":["invalid-input-response"],"messages":[]}`)
		})
	}
	hooks := http.NewServeMux()
	hooks.HandleFunc("POST /hook", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		kind := "?"
		if i := strings.Index(string(b), `"kind":"`); i >= 0 {
			kind, _, _ = strings.Cut(string(b[i+8:]), `"`)
		}
		s.mu.Lock()
		s.hookKinds[kind]++
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	var err error
	if s.origin, s.originAddr, err = serveLoopback(origin); err != nil {
		return nil, err
	}
	var addr string
	if s.captcha, addr, err = serveLoopback(captcha); err != nil {
		return nil, err
	}
	s.captchaBase = "http://" + addr
	if s.hooks, addr, err = serveLoopback(hooks); err != nil {
		return nil, err
	}
	s.hookURL = "http://" + addr + "/hook"
	return s, nil
}

func serveLoopback(h http.Handler) (*http.Server, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return srv, ln.Addr().String(), nil
}

func (s *services) close() {
	for _, srv := range []*http.Server{s.origin, s.captcha, s.hooks} {
		if srv != nil {
			srv.Close()
		}
	}
}

// summary says what the services saw.
func (s *services) summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("origin: %d requests besides %d health checks %v; CAPTCHA stub: widget script loaded %d times, siteverify called %d times; webhook: %v",
		s.originRequests.Load(), s.originHealth.Load(), s.paths, s.scriptLoads.Load(), s.verifyCalls.Load(), s.hookKinds)
}
