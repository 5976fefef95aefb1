package webhook_test

import (
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/webhooktest"
	"github.com/waitroom/waitroom/plugins"
)

// TestStandardWebhooksSecret: with a whsec_ secret the key is its
// decoded bytes, for both signature headers.
func TestStandardWebhooksSecret(t *testing.T) {
	const whsec = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	r := newReceiver(t, 500, 200)
	s := newSink(t, "url: "+r.srv.URL+"/hook\nsecret: "+whsec+"\nbackoff: 10ms\nworkers: 1\n")
	e := sold
	e.ID = "evt_stable-1"
	s.Publish(e)
	e.ID = "not a valid.id"
	s.Publish(e)
	closeSink(t, s)
	got := r.requests()
	if len(got) != 3 {
		t.Fatalf("%d requests, want 3 (one retried)", len(got))
	}
	ids := map[string]int{}
	for i, req := range got {
		if err := webhooktest.Verify(whsec, req.header, req.body, time.Now()); err != nil {
			t.Errorf("request %d: %v", i, err)
		}
		id := req.header.Get("webhook-id")
		if req.payload["id"] != id {
			t.Errorf("request %d: webhook-id %q, body id %v", i, id, req.payload["id"])
		}
		ids[id]++
	}
	if ids["evt_stable-1"] != 2 {
		t.Errorf("ids %v: the event's own id was not kept on both attempts", ids)
	}
	for id, n := range ids {
		if id != "evt_stable-1" && (!strings.HasPrefix(id, "msg_") || n != 1) {
			t.Errorf("ids %v: an invalid id must be replaced by a fresh one", ids)
		}
	}
	if len(ids) != 2 {
		t.Errorf("ids %v: want two messages, the retried one under one id", ids)
	}
	if got := plugins.AllKinds; len(got) != 10 {
		t.Errorf("AllKinds = %q", got)
	}
}
