// The event lifecycle through the operator API: POST /admin/v1/events,
// PATCH and DELETE /admin/v1/events/{id}. The proxy reads the request
// and answers; building and applying the configuration is the caller's
// (EventsAdmin), since the proxy does not know the configuration format.

package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// EventsAdmin makes, changes and removes events at run time; the
// serving program implements it (package app: records in the admission
// store, applied through the reload path). Each method returns when the
// change is in force on this replica, or changes nothing and returns an
// error: *EventProblems (the body is not a valid event),
// admission.ErrUnknownEvent, or one of the Err*Event errors below.
type EventsAdmin interface {
	// Create makes the event body describes ({"event":{...},
	// "routes":[...]}) and returns its id.
	Create(ctx context.Context, body []byte) (id string, err error)
	// Patch applies a JSON merge patch (RFC 7396) to the event's record.
	Patch(ctx context.Context, id string, patch []byte) error
	// Delete removes an event made through the API.
	Delete(ctx context.Context, id string) error
}

// EventsAdmin's errors, each a 409.
var (
	// ErrEventExists: Create of an id that is taken.
	ErrEventExists = errors.New("proxy: an event of this id exists")
	// ErrFileEvent: Delete of an event of the configuration file.
	ErrFileEvent = errors.New("proxy: the event comes from the configuration file")
	// ErrEventChanged: the event's record changed meanwhile (another
	// replica's change won the race).
	ErrEventChanged = errors.New("proxy: the event changed meanwhile")
	// ErrEventTimesPassed: a change to a running event's queue (its
	// queue_opens_at or on_sale_at has passed).
	ErrEventTimesPassed = errors.New("proxy: the event's queue is running")
)

// EventProblems is an invalid event: every problem, each naming its key
// ("event.caps.max_active: ...").
type EventProblems struct{ Problems []string }

func (e *EventProblems) Error() string {
	return "proxy: invalid event: " + strings.Join(e.Problems, "; ")
}

// mountEvents registers the lifecycle routes.
func (a *admin) mountEvents(mux *routeMux, ev EventsAdmin) {
	mux.Handle("POST /admin/v1/events", a.auth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := readEventBody(w, r)
		if !ok {
			return
		}
		id, err := ev.Create(r.Context(), body)
		if err != nil {
			a.eventFailed(w, id, err)
			return
		}
		a.p.log.Info("proxy: event created", "event", id, "from", r.RemoteAddr)
		a.answerEvent(w, id, http.StatusCreated)
	})))
	mux.Handle("PATCH /admin/v1/events/{id}", a.auth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		body, ok := readEventBody(w, r)
		if !ok {
			return
		}
		if err := ev.Patch(r.Context(), id, body); err != nil {
			a.eventFailed(w, id, err)
			return
		}
		a.p.log.Info("proxy: event changed", "event", id, "from", r.RemoteAddr)
		a.answerEvent(w, id, http.StatusOK)
	})))
	mux.Handle("DELETE /admin/v1/events/{id}", a.auth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if err := ev.Delete(r.Context(), id); err != nil {
			a.eventFailed(w, id, err)
			return
		}
		a.p.log.Info("proxy: event deleted", "event", id, "from", r.RemoteAddr)
		adminJSON(w, http.StatusOK, struct {
			ID      string `json:"id"`
			Deleted bool   `json:"deleted"`
		}{id, true})
	})))
}

// readEventBody reads a body that must be one JSON object of members
// event and routes (400 otherwise); application/merge-patch+json is
// taken as JSON.
func readEventBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/merge-patch+json") {
		r.Header.Set("Content-Type", "application/json")
	}
	body, ok := readAdminBody(w, r)
	if !ok {
		return nil, false
	}
	// The record's members are checked here, what is in them by the
	// EventsAdmin (422 with every problem).
	var obj map[string]json.RawMessage
	ok = json.Unmarshal(body, &obj) == nil && obj != nil
	for k := range obj {
		ok = ok && (k == "event" || k == "routes")
	}
	if !ok {
		adminError(w, http.StatusBadRequest, "bad_request", "the body must be one JSON object with event and routes")
		return nil, false
	}
	return body, true
}

// answerEvent answers with the event as it is now.
func (a *admin) answerEvent(w http.ResponseWriter, id string, status int) {
	v, err := a.view(id)
	if err != nil {
		a.failed(w, id, err)
		return
	}
	adminJSON(w, status, v)
}

func (a *admin) eventFailed(w http.ResponseWriter, id string, err error) {
	var ep *EventProblems
	switch {
	case errors.As(err, &ep):
		adminJSON(w, http.StatusUnprocessableEntity, struct {
			Error    string   `json:"error"`
			Message  string   `json:"message"`
			Problems []string `json:"problems"`
		}{"invalid_event", "the event has problems; nothing was changed", ep.Problems})
	case errors.Is(err, ErrEventExists):
		adminError(w, http.StatusConflict, "event_exists", "an event of this id exists")
	case errors.Is(err, ErrFileEvent):
		adminError(w, http.StatusConflict, "file_event",
			"the event comes from the configuration file, whose routes name it: remove it there and reload")
	case errors.Is(err, ErrEventChanged):
		adminError(w, http.StatusConflict, "event_changed", "the event changed meanwhile; read it again and retry")
	case errors.Is(err, ErrEventTimesPassed):
		adminError(w, http.StatusConflict, "event_running",
			"the event's queue is running: its queue_opens_at and on_sale_at and its queue settings cannot change now")
	default:
		a.failed(w, id, err)
	}
}
