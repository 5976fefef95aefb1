package api_test

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/waitroom/waitroom/inventory/api"
)

// goErrorMarkers are pieces of the text of Go's and the stores' errors.
// None may reach a response.
var goErrorMarkers = []string{"json:", "cannot unmarshal", "invalid character", "unexpected EOF", "Go struct",
	"strconv", "parsing", "redis", "memstore", "redisstore", "10.0.0.5", "dial tcp", "inventory:", "api:"}

func checkNoGoText(t *testing.T, body []byte) {
	t.Helper()
	for _, m := range goErrorMarkers {
		if strings.Contains(string(body), m) {
			t.Errorf("the answer shows %q: %s", m, body)
		}
	}
}

// TestNoGoErrorText drives every decoder and the store failures and checks
// that no answer carries Go's or a store's error text.
func TestNoGoErrorText(t *testing.T) {
	t.Parallel()
	f := newFixture(t, api.Options{})
	ev := "/v1/events/" + f.event
	bad := []req{
		{method: "POST", uri: ev + "/holds", body: `{"user":"u1","seats":["A-1-1"],"ttl_seconds":99999999999999999999}`},
		{method: "POST", uri: ev + "/holds", body: `{"user":"u1","seats":["A-1-1"],"ttl_seconds":1.5}`},
		{method: "POST", uri: ev + "/holds", body: `{"user":"u1","seats":"A-1-1"}`},
		{method: "POST", uri: ev + "/holds", body: `{"user":"u1","seats":["\ud800"]}`},
		{method: "POST", uri: ev + "/holds", body: `{"user":"u1",}`},
		{method: "POST", uri: ev + "/holds", body: `{"user":"u1"`},
		{method: "POST", uri: ev + "/holds", body: "{\"user\":\"\xff\"}"},
		{method: "POST", uri: ev + "/holds", body: `{"user":"u1","ttl_ms":-1,"seats":["A-1-1"]}`},
		{method: "PUT", uri: ev, body: `{"sections":[{"id":"A","price_cents":"x"}]}`},
		{method: "PUT", uri: ev, body: `{"hold_ttl_seconds":-1}`},
		{method: "POST", uri: ev + "/holds/hld_x/confirm", body: `{"payment_ref":7}`},
		{method: "POST", uri: ev + "/orders/ord_x/cancel", body: `{"reason":[]}`},
		{method: "GET", uri: ev + "/audit?limit=1e9"},
	}
	for _, r := range bad {
		resp := f.do(r)
		if resp.StatusCode() < 400 {
			t.Errorf("%s %s %s: %d", r.method, r.uri, r.body, resp.StatusCode())
			continue
		}
		decodeError(t, resp)
		checkNoGoText(t, resp.Body())
	}

	// A store that fails with the text a network error has.
	storeErr := errors.New("redisstore: dial tcp 10.0.0.5:6379: connect: connection refused")
	srv, err := api.New(&stubStore{err: storeErr}, api.Options{Token: token, Registry: prometheus.NewRegistry(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []req{
		{method: "GET", uri: "/v1/events/ev1"},
		{method: "GET", uri: "/v1/events/ev1/availability"},
		{method: "POST", uri: "/v1/events/ev1/holds", body: `{"user":"u1","seats":["A-1-1"]}`},
		{method: "GET", uri: "/v1/events/ev1/audit"},
	} {
		resp := serve(srv, r)
		if resp.StatusCode() < 500 {
			t.Errorf("%s %s: %d, want a 5xx", r.method, r.uri, resp.StatusCode())
		}
		decodeError(t, resp)
		checkNoGoText(t, resp.Body())
	}
}
