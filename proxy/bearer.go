package proxy

// Credentials without cookies, for native apps: the ticket and the pass
// as bearer tokens (Authorization: Bearer), the pass also in
// X-Waitroom-Pass for an app whose origin API needs Authorization for
// itself, and the tokens in the JSON answers for a client that asks
// (X-Waitroom-Tokens: body) or sent its ticket as a bearer token. A
// cookie, when there is one, always wins.

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/internal/ascii"
	"github.com/waitroom/waitroom/internal/jsonenc"
)

var (
	headerPass   = []byte("X-Waitroom-Pass")
	headerTokens = []byte("X-Waitroom-Tokens")
	headerAuthz  = []byte(fasthttp.HeaderAuthorization)
)

const (
	bearerScheme = "bearer "
	tokensInBody = "body" // X-Waitroom-Tokens' one value
)

// bearerToken returns the token of the request's one Authorization
// header when it is "Bearer <token>"; nil for none, for another scheme,
// and for an ambiguous header (sent twice, or a token with spaces).
func bearerToken(h *fasthttp.RequestHeader) []byte {
	v := h.PeekBytes(headerAuthz)
	if len(v) <= len(bearerScheme) || !ascii.HasPrefixFold(v, bearerScheme) {
		return nil
	}
	if len(h.PeekAll(fasthttp.HeaderAuthorization)) != 1 {
		return nil
	}
	tok := ascii.TrimOWS(v[len(bearerScheme):])
	if len(tok) == 0 || bytes.ContainsAny(tok, " \t,") {
		return nil
	}
	return tok
}

// passSource is where a request's pass came from.
type passSource uint8

const (
	passInCookie passSource = iota
	// passInHeader: X-Waitroom-Pass, which never reaches the origin
	// (X-Waitroom-* is stripped); a renewed pass goes back in it.
	passInHeader
	// passInBearer: Authorization: Bearer, which forward removes (the
	// pass was ours, not the origin's credential); a renewed pass goes
	// back in X-Waitroom-Pass.
	passInBearer
)

// passToken returns the request's pass for the event whose pass cookie is
// name, and where it came from: the cookie, else X-Waitroom-Pass, else a
// bearer token.
func passToken(h *fasthttp.RequestHeader, name []byte) ([]byte, passSource) {
	if tok := cookie(h, name); len(tok) > 0 {
		return tok, passInCookie
	}
	if tok := h.PeekBytes(headerPass); len(tok) > 0 {
		return tok, passInHeader
	}
	return bearerToken(h), passInBearer
}

// ticketToken returns the request's ticket for the event whose ticket
// cookie is name: the cookie, else a bearer token (bearer true).
func ticketToken(h *fasthttp.RequestHeader, name []byte) (tok []byte, bearer bool) {
	if tok = cookie(h, name); len(tok) > 0 {
		return tok, false
	}
	tok = bearerToken(h)
	return tok, tok != nil
}

// asksForTokens reports whether the client asked for its tokens in the
// JSON answers (X-Waitroom-Tokens: body).
func asksForTokens(h *fasthttp.RequestHeader) bool {
	return ascii.EqualFold(ascii.TrimOWS(h.PeekBytes(headerTokens)), tokensInBody)
}

// tokensIntoBody adds to a 200 JSON answer the tokens set in its cookies
// for ev: "ticket" and "ticket_expires_at", "pass" and "pass_expires_at"
// (RFC 3339), for a client that keeps them itself. Only for clients that
// asked: it copies the body.
func (p *Proxy) tokensIntoBody(ctx *fasthttp.RequestCtx, ev *event) {
	body := ctx.Response.Body()
	if ctx.Response.StatusCode() != fasthttp.StatusOK || len(body) < 2 || body[len(body)-1] != '}' {
		return
	}
	out := append([]byte(nil), body[:len(body)-1]...)
	for _, t := range []struct {
		name  []byte
		field string
	}{{ev.ticketCookie, "ticket"}, {ev.passCookie, "pass"}} {
		c := fasthttp.AcquireCookie()
		c.SetKeyBytes(t.name)
		if ctx.Response.Header.Cookie(c) && len(c.Value()) > 0 {
			out = append(out, `,"`...)
			out = append(out, t.field...)
			out = append(out, `":`...)
			out = jsonenc.String(out, string(c.Value()))
			out = append(out, `,"`...)
			out = append(out, t.field...)
			out = append(out, `_expires_at":"`...)
			out = c.Expire().UTC().AppendFormat(out, "2006-01-02T15:04:05Z07:00")
			out = append(out, '"')
		}
		fasthttp.ReleaseCookie(c)
	}
	ctx.Response.SetBody(append(out, '}'))
}
