package api

import (
	"errors"
	"fmt"

	"github.com/waitroom/waitroom/internal/jsonenc"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/inventory"
)

// Codes of errors the HTTP layer itself answers with, before or around the
// store. The store's codes are inventory.Code's.
const (
	CodeUnauthorized         = "unauthorized"
	CodeNotFound             = "not_found"
	CodeMethodNotAllowed     = "method_not_allowed"
	CodePayloadTooLarge      = "payload_too_large"
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodeRequestTimeout       = "request_timeout"
	CodeHeadersTooLarge      = "headers_too_large"
	CodeInternal             = "internal_error"
	// CodeInvalid and CodeUnavailable are the store's codes, used by the
	// HTTP layer too (malformed input, storage failure).
	CodeInvalid     = "invalid_request"
	CodeUnavailable = "unavailable"
)

// errorStatus is the one table of error code → HTTP status. Every code the
// API can answer with is here; the tests hold the table to every sentinel
// in inventory/errors.go.
var errorStatus = []struct {
	code   string
	status int
}{
	// The store's codes.
	{"invalid_request", fasthttp.StatusBadRequest},
	{"event_not_found", fasthttp.StatusNotFound},
	{"section_not_found", fasthttp.StatusNotFound},
	{"tier_not_found", fasthttp.StatusNotFound},
	{"pool_not_found", fasthttp.StatusNotFound},
	{"seat_not_found", fasthttp.StatusNotFound},
	{"hold_not_found", fasthttp.StatusNotFound},
	{"order_not_found", fasthttp.StatusNotFound},
	{"seat_unavailable", fasthttp.StatusConflict},
	{"sold_out", fasthttp.StatusConflict},
	{"not_enough_seats", fasthttp.StatusConflict},
	{"user_limit", fasthttp.StatusUnprocessableEntity},
	{"hold_expired", fasthttp.StatusGone},
	{"hold_released", fasthttp.StatusConflict},
	{"hold_confirmed", fasthttp.StatusConflict},
	{"order_cancelled", fasthttp.StatusConflict},
	{"idempotency_mismatch", fasthttp.StatusUnprocessableEntity},
	{"definition_conflict", fasthttp.StatusConflict},
	{"unavailable", fasthttp.StatusServiceUnavailable},
	// The HTTP layer's codes.
	{CodeUnauthorized, fasthttp.StatusUnauthorized},
	{CodeNotFound, fasthttp.StatusNotFound},
	{CodeMethodNotAllowed, fasthttp.StatusMethodNotAllowed},
	{CodePayloadTooLarge, fasthttp.StatusRequestEntityTooLarge},
	{CodeUnsupportedMediaType, fasthttp.StatusUnsupportedMediaType},
	{CodeRequestTimeout, fasthttp.StatusRequestTimeout},
	{CodeHeadersTooLarge, fasthttp.StatusRequestHeaderFieldsTooLarge},
	{CodeInternal, fasthttp.StatusInternalServerError},
}

// statusOf returns the HTTP status of an error code; an unknown code is a
// bug and answers 500.
func statusOf(code string) int {
	for _, e := range errorStatus {
		if e.code == code {
			return e.status
		}
	}
	return fasthttp.StatusInternalServerError
}

// unavailableMessage is all a client learns of a storage failure.
const unavailableMessage = "the inventory store is unavailable"

// apiError is an error response: a code, a message and the details of the
// code (which fields apply depends on the code).
type apiError struct {
	code    string
	message string
	seats   []string // unavailable, unknown or blocking seats
	pools   []string
	limit   int
	current int
	avail   int
	allow   string // Allow header of a 405
}

// storeError turns an error from the store into what the client may see.
// ok is false for storage failures and errors the store should never
// return (no sentinel): those must be logged, and the client gets only
// "unavailable".
func storeError(err error) (e apiError, ok bool) {
	code := inventory.Code(err)
	if code == "" || code == CodeUnavailable {
		return apiError{code: CodeUnavailable, message: unavailableMessage}, false
	}
	d := inventory.Details(err)
	e = apiError{code: code, message: d.Message, seats: d.Seats, pools: d.Pools,
		limit: d.Limit, current: d.Current, avail: d.Available}
	var ie *inventory.Error
	if !errors.As(err, &ie) || e.message == "" {
		// A bare or wrapped sentinel: its own text, never the wrapper's.
		e.message = defaultMessage(code)
	}
	return e, true
}

// defaultMessage is the text of a code's sentinel, without the package
// prefix ("seat unavailable").
func defaultMessage(code string) string {
	if s := inventory.FromCode(code); s != nil {
		msg := s.Error()
		const prefix = "inventory: "
		if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
			return msg[len(prefix):]
		}
		return msg
	}
	return code
}

// writeError writes e as the response. The body is appended by hand: the
// error path must not cost an encoder per request.
func writeError(ctx *fasthttp.RequestCtx, e apiError) {
	status := statusOf(e.code)
	ctx.Response.Reset()
	ctx.SetStatusCode(status)
	setJSONHeaders(ctx)
	if e.allow != "" {
		ctx.Response.Header.Set("Allow", e.allow)
	}
	if status == fasthttp.StatusUnauthorized {
		ctx.Response.Header.Set("WWW-Authenticate", "Bearer")
	}
	var arr [512]byte
	b := arr[:0]
	b = append(b, `{"error":`...)
	b = jsonenc.String(b, e.code)
	b = append(b, `,"message":`...)
	b = jsonenc.String(b, e.message)
	switch e.code {
	case "seat_unavailable":
		b = jsonenc.Strings(append(b, `,"unavailable":`...), e.seats)
	case "seat_not_found":
		b = jsonenc.Strings(append(b, `,"unknown":`...), e.seats)
	case "definition_conflict":
		b = jsonenc.Strings(append(b, `,"unavailable":`...), e.seats)
		b = jsonenc.Strings(append(b, `,"pools":`...), e.pools)
	case "user_limit":
		b = strconv.AppendInt(append(b, `,"limit":`...), int64(e.limit), 10)
		b = strconv.AppendInt(append(b, `,"current":`...), int64(e.current), 10)
	case "not_enough_seats":
		b = strconv.AppendInt(append(b, `,"available":`...), int64(e.avail), 10)
	}
	b = append(b, "}\n"...)
	ctx.Response.SetBody(b)
}

func invalid(message string) apiError { return apiError{code: CodeInvalid, message: message} }

// requestError is a problem with a request that the client may read: its
// text is written by this package (the decoders and checks of the
// request), never taken from an error of Go or a library.
type requestError struct{ msg string }

func (e *requestError) Error() string { return e.msg }

func badRequest(msg string) error { return &requestError{msg: msg} }

func badRequestf(format string, args ...any) error {
	return &requestError{msg: fmt.Sprintf(format, args...)}
}

// invalidRequest is the invalid_request answer to err: err's own text
// when it is a *requestError, else a fixed message, with err logged (it
// may hold internals that are nobody else's business).
func (s *Server) invalidRequest(err error) apiError {
	var re *requestError
	if errors.As(err, &re) {
		return invalid(re.msg)
	}
	s.log.Warn("inventory api: request refused for an unexpected reason", "err", err)
	return invalid("the request is not valid")
}

var (
	headerCacheControl = []byte("Cache-Control")
	headerNoSniff      = []byte("X-Content-Type-Options")
	valueNoStore       = []byte("no-store")
	valueNoSniff       = []byte("nosniff")
	contentTypeJSON    = []byte("application/json")
)

func setJSONHeaders(ctx *fasthttp.RequestCtx) {
	ctx.Response.Header.SetContentTypeBytes(contentTypeJSON)
	ctx.Response.Header.SetCanonical(headerCacheControl, valueNoStore)
	ctx.Response.Header.SetCanonical(headerNoSniff, valueNoSniff)
}
