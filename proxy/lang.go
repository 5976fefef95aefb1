package proxy

import (
	"time"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/static"
)

// langCookieLife is how long the wr_lang cookie keeps a visitor's choice
// of language.
const langCookieLife = 365 * 24 * time.Hour

// langCookieName is static.LangCookie as the cookie functions take it.
var langCookieName = []byte(static.LangCookie)

// pageLanguage returns what picks the language of a page for ctx, as the
// static.Pages methods take it: the language the visitor chose with the
// page's switcher (the lang query parameter, kept in the wr_lang cookie)
// when it is one the pages have, else the Accept-Language header. rq is
// nil for answers whose query does not choose (busy, down, blocked,
// maintenance): the cookie and the header still do. It does not allocate
// unless the query chose (then it sets the cookie).
func (p *Proxy) pageLanguage(ctx *fasthttp.RequestCtx, rq *request) []byte {
	var q []byte
	if rq != nil {
		q = rq.query().Peek(static.LangQuery)
	}
	lang, fromQuery := static.Chosen(q, ctx.Request.Header.CookieBytes(langCookieName))
	if lang == nil {
		return ctx.Request.Header.Peek("Accept-Language")
	}
	if fromQuery && string(ctx.Request.Header.CookieBytes(langCookieName)) != string(lang) {
		p.setCookie(ctx, langCookieName, string(lang), p.clock().Add(langCookieLife))
	}
	return lang
}
