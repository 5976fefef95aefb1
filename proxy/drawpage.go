package proxy

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// drawPage serves GET {prefix}/draw/{event}/{tranche}: the draw page of
// the event, in the visitor's language, for a person to check a draw (its
// script reads the tranche from the path and the rest from the JSON);
// ?lang= picks the language, as on the room page.
// Anything but an event with a page and a tranche number is 404.
func (p *Proxy) drawPage(ctx *fasthttp.RequestCtx, rest []byte, rq *request) {
	if !readOnly(ctx) {
		return
	}
	id, _, ok := parseDrawPath(rest)
	ev := p.events[string(id)]
	al := p.pageLanguage(ctx, rq)
	var page []byte
	if ok && ev != nil {
		page = p.opts.Pages.Draw(ev.ID, al)
	}
	if page == nil {
		writeError(ctx, fasthttp.StatusNotFound, errNotFound)
		return
	}
	p.writePage(ctx, fasthttp.StatusOK, p.csp, page, p.opts.Pages.DrawGzip(ev.ID, al))
}

// parseDrawPath reads "{event}/{tranche}" (what follows {prefix}/draw/):
// an event id of 1 to 64 characters without a slash and a tranche number
// of at most nine digits without a leading zero, nothing else.
func parseDrawPath(rest []byte) (event []byte, tranche int, ok bool) {
	i := bytes.IndexByte(rest, '/')
	if i <= 0 || i > 64 {
		return nil, 0, false
	}
	num := rest[i+1:]
	tranche, ok = parseSmallInt(num)
	if !ok || len(num) > 1 && num[0] == '0' { // one spelling per tranche
		return nil, 0, false
	}
	return rest[:i], tranche, true
}
