package client

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/waitroom/waitroom/inventory"
)

// ErrUnauthorized is the Kind of a 401: the sidecar refused the token.
var ErrUnauthorized = errors.New("client: the sidecar refused the token")

// ErrReapNotSupported is Reap's error: reaping is not an HTTP endpoint,
// the sidecar runs its own reaper.
var ErrReapNotSupported = errors.New("client: Reap is not available over HTTP; the sidecar reaps expired holds on its own")

// ResponseError is an error answer that carries no inventory code: one of
// the HTTP layer's own (unauthorized, not_found, method_not_allowed,
// payload_too_large, unsupported_media_type, …) or a non-JSON answer from
// something between the client and the sidecar.
type ResponseError struct {
	StatusCode int
	// Code is the body's "error" field; empty when the body was not the
	// sidecar's JSON.
	Code    string
	Message string
}

func (e *ResponseError) Error() string {
	switch {
	case e.Code != "" && e.Message != "":
		return fmt.Sprintf("client: sidecar answered %d %s: %s", e.StatusCode, e.Code, e.Message)
	case e.Code != "":
		return fmt.Sprintf("client: sidecar answered %d %s", e.StatusCode, e.Code)
	}
	return fmt.Sprintf("client: unexpected answer %d %s", e.StatusCode, http.StatusText(e.StatusCode))
}

// Unwrap returns ErrUnauthorized for a 401 and inventory.ErrInvalid for a
// request the HTTP layer refused before the store saw it (400, 413, 415).
// Other answers wrap nothing: in particular a 502 or 504 from a proxy
// says nothing about whether the request was applied.
func (e *ResponseError) Unwrap() error {
	switch e.StatusCode {
	case http.StatusUnauthorized:
		return ErrUnauthorized
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
		return inventory.ErrInvalid
	}
	return nil
}

// TransportError means the sidecar could not be reached or its answer not
// read. The request may have been applied: retry with the same
// idempotency key.
type TransportError struct {
	Method, Path string
	Err          error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("client: %s %s: %v", e.Method, e.Path, e.Err)
}

func (e *TransportError) Unwrap() error { return e.Err }

// wireError is the body of every error answer.
type wireError struct {
	Error       string   `json:"error"`
	Message     string   `json:"message"`
	Unavailable []string `json:"unavailable"`
	Unknown     []string `json:"unknown"`
	Pools       []string `json:"pools"`
	Limit       int      `json:"limit"`
	Current     int      `json:"current"`
	Available   int      `json:"available"`
}

// toError maps an error answer to an *inventory.Error when its code is a
// sentinel's, else to a *ResponseError.
func (w *wireError) toError(status int) error {
	kind := inventory.FromCode(w.Error)
	if kind == nil {
		return &ResponseError{StatusCode: status, Code: w.Error, Message: w.Message}
	}
	seats := w.Unavailable
	if len(seats) == 0 {
		seats = w.Unknown
	}
	return &inventory.Error{Kind: kind, Message: w.Message, Seats: seats, Pools: w.Pools,
		Limit: w.Limit, Current: w.Current, Available: w.Available}
}
