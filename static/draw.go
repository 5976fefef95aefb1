package static

import "strings"

// The draw page, {prefix}/draw/{event}/{tranche}: the published draw of a
// tranche for a person to check (web/draw.html and web/draw.js). Like the
// room page it is rendered once per event and language, with the event's
// branding, and is the same for every tranche and visitor: its script
// reads the tranche from the path and everything else from the JSON API.
// An override TemplateDir may hold a draw.html; executed with
// TemplateData, whose Config then carries the draw texts (dp_…).

// drawConfig is the draw script's configuration: the dp_ texts only.
func drawConfig(r resolved, lang string, texts map[string]string) *ScriptConfig {
	c := &ScriptConfig{Event: r.Event, Name: r.Name, Prefix: r.Prefix, Lang: lang,
		PositionDisplay: r.PositionDisplay, Texts: map[string]string{}}
	for k, v := range texts {
		if strings.HasPrefix(k, "dp_") {
			c.Texts[k] = v
		}
	}
	return c
}

// Draw returns the draw page of event in the language Accept-Language
// asks for, or nil when event has no page. Serve it with status 200,
// Content-Type ContentTypeHTML and Content-Security-Policy CSP(). It does
// not allocate.
func (p *Pages) Draw(event string, acceptLanguage []byte) []byte {
	ev := p.events[event]
	if ev == nil {
		return nil
	}
	return ev.draw[ev.lang(acceptLanguage)]
}

// DrawGzip is Draw compressed with gzip. It does not allocate.
func (p *Pages) DrawGzip(event string, acceptLanguage []byte) []byte {
	ev := p.events[event]
	if ev == nil {
		return nil
	}
	return ev.drawGz[ev.lang(acceptLanguage)]
}
