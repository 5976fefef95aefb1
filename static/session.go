package static

import (
	"encoding/json"
	"strings"
)

// The session banner script (web/session.js), which an origin includes on
// its own pages so that an admitted visitor is warned a minute before their
// session ends. It is rendered once per event and language: the embedded
// function applied to the event's configuration and texts.

// ContentTypeJS is the Content-Type of SessionScript.
const ContentTypeJS = "text/javascript; charset=utf-8"

// sessionTextPrefix starts the keys of the texts the session script shows;
// the room page does not carry them.
const sessionTextPrefix = "session_"

// sessionConfig is what session.js is applied to.
type sessionConfig struct {
	Event  string            `json:"event"`
	Prefix string            `json:"prefix"`
	Lang   string            `json:"lang"`
	Dir    string            `json:"dir"`
	Texts  map[string]string `json:"texts"`
}

// sessionScript renders session.js for an event in one language.
// encoding/json escapes <, > and & (and U+2028, U+2029), so the
// configuration cannot end the script or break out of a JS expression.
func sessionScript(fn []byte, r resolved, lang string, texts map[string]string) ([]byte, error) {
	c := sessionConfig{Event: r.Event, Prefix: r.Prefix, Lang: lang, Dir: Direction(lang), Texts: map[string]string{}}
	for k, v := range texts {
		if strings.HasPrefix(k, sessionTextPrefix) {
			c.Texts[k] = v
		}
	}
	js, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(fn)+len(js)+4)
	out = append(out, fn...)
	for len(out) > 0 && (out[len(out)-1] == '\n' || out[len(out)-1] == ' ') {
		out = out[:len(out)-1]
	}
	out = append(out, '(')
	out = append(out, js...)
	return append(out, ");\n"...), nil
}

// SessionScript returns the session banner script of event in the
// language the Accept-Language header asks for, or nil when event has no
// page. Serve it with Content-Type ContentTypeJS; it is the same for
// every visitor of the event and language (Vary: Accept-Language). It
// does not allocate.
func (p *Pages) SessionScript(event string, acceptLanguage []byte) []byte {
	ev := p.events[event]
	if ev == nil || ev.session == nil {
		return nil
	}
	return ev.session[ev.lang(acceptLanguage)]
}
