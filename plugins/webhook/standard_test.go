package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/plugins"
)

// specSecret is the whsec_ form of a plain secret, as a receiver using a
// Standard Webhooks library is given it; a whsec_ secret stays as it is.
func specSecret(s string) string {
	if strings.HasPrefix(s, "whsec_") {
		return s
	}
	return "whsec_" + base64.StdEncoding.EncodeToString([]byte(s))
}

// specVerify checks a request the way the Standard Webhooks specification
// (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md)
// tells a receiver to, written from the spec and not from the sender's
// code: the key is the base64 after "whsec_"; the signed content is
// "<webhook-id>.<webhook-timestamp>.<body>"; webhook-signature is a
// space-delimited list of "<version>,<base64 signature>" of which a "v1"
// one must be the HMAC-SHA256 of the content; the timestamp must be
// within five minutes.
func specVerify(whsec string, h http.Header, body []byte, now time.Time) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(whsec, "whsec_"))
	if err != nil {
		return err
	}
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return errors.New("a Standard Webhooks header is missing")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return err
	}
	if d := now.Sub(time.Unix(sec, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return errors.New("timestamp outside five minutes")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, s := range strings.Split(sigs, " ") {
		if v, sig, _ := strings.Cut(s, ","); v == "v1" && hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return errors.New("no v1 signature matches")
}

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
		if err := specVerify(whsec, req.header, req.body, time.Now()); err != nil {
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
