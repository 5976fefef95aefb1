package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/testkit/webhooktest"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/client"
	"github.com/waitroom/waitroom/plugins"
)

// TestSinksHearOfAWholeSale scripts a sale on the demo (its in-process
// sidecar linked) with a webhook sink delivering to a local receiver that
// checks every request's Standard Webhooks signature with a verifier
// written from the spec, and answers the first attempt of every message
// 500: a visitor joins and is admitted but never uses the pass (a
// no-show), seats are held, one hold released, the rest sold to the last
// seat, the operator pauses, resumes and switches the mode. The receiver
// must accept every kind of event at least once, each message retried
// under the same id with the same body, and the inventory events exactly
// as the sidecar did them.
func TestSinksHearOfAWholeSale(t *testing.T) {
	secret := "whsec_" + randomBase64(32)
	rc := webhooktest.Start(t, secret, 1)
	d := startDemo(t, 0, 0, func(c *config.Config) {
		c.Serve.Inventory.Refresh = config.Duration(100 * time.Millisecond)
		c.Events[0].Tranche = config.Duration(time.Second)
		c.Events[0].NoShowGrace = config.Duration(2 * time.Second)
		var sink config.Sink
		if err := yamlNode(&sink.Config, "url: "+rc.URL+"\nsecret: "+secret+"\nbackoff: 50ms\nmax_backoff: 200ms"); err != nil {
			t.Fatal(err)
		}
		sink.Type = "webhook"
		c.Sinks = []config.Sink{sink}
	})
	ctx := context.Background()
	wait := func(what string, done func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !done() {
			if time.Now().After(deadline) {
				t.Fatalf("after 30 s, still waiting for %s; the receiver got %d requests", what, len(rc.Requests()))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	heard := func(kind string, n int) func() bool {
		return func() bool { return len(rc.Accepted(kind)) >= n }
	}

	// A visitor joins and polls until admitted, and never comes.
	jar, _ := cookiejar.New(nil)
	visitor := &http.Client{Jar: jar}
	resp, err := visitor.Post(d.URL+"_wr/api/join", "application/json", strings.NewReader(`{"event":"`+DemoEvent+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("join: %s", resp.Status)
	}
	wait("admitted", func() bool {
		resp, err := visitor.Get(d.URL + "_wr/api/status?event=" + DemoEvent)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return heard(plugins.KindAdmitted, 1)()
	})

	// Three places: one held and released, then sold as two and one.
	inv := client.New("http://"+d.Waitroom.InventoryAddr().String(), d.Waitroom.cfg.Inventory.APIToken)
	defer inv.Close()
	if _, err := inv.PutEvent(ctx, DemoEvent, inventory.EventDef{GA: []inventory.Pool{{ID: "floor", Capacity: 3}}}, "test"); err != nil {
		t.Fatal(err)
	}
	h, err := inv.Hold(ctx, DemoEvent, inventory.HoldRequest{User: "fan", GA: &inventory.GARequest{Pool: "floor", Quantity: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inv.Release(ctx, DemoEvent, h.ID, inventory.ReleaseRequest{}); err != nil {
		t.Fatal(err)
	}
	var orders []string
	for _, n := range []int{2, 1} {
		h, err := inv.Hold(ctx, DemoEvent, inventory.HoldRequest{User: "fan", GA: &inventory.GARequest{Pool: "floor", Quantity: n}})
		if err != nil {
			t.Fatal(err)
		}
		o, err := inv.Confirm(ctx, DemoEvent, h.ID, inventory.ConfirmRequest{PaymentRef: "card"})
		if err != nil {
			t.Fatal(err)
		}
		orders = append(orders, o.ID)
	}

	// The operator pauses, resumes and switches the mode.
	admin := func(method, verb, body string) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+d.Waitroom.AdminAddr().String()+"/admin/v1/events/"+DemoEvent+"/"+verb,
			strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+d.Waitroom.cfg.Admin.Token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %s", method, verb, resp.Status)
		}
	}
	admin("POST", "pause", "")
	wait("paused", heard(plugins.KindPaused, 1))
	admin("POST", "resume", "")
	wait("resumed", heard(plugins.KindResumed, 1))
	mode := admission.ModeThreshold
	if d.Waitroom.Engine.Mode(DemoEvent) == mode {
		mode = admission.ModeAlways
	}
	admin("PUT", "mode", fmt.Sprintf(`{"mode":%q}`, mode))
	wait("mode_changed", heard(plugins.KindModeChanged, 1))
	wait("the rest", func() bool {
		for _, k := range plugins.AllKinds {
			if !heard(k, 1)() {
				return false
			}
		}
		return heard(plugins.KindSold, 2)() && heard(plugins.KindHold, 3)()
	})

	// Every attempt verified; every message retried after its 500 under
	// the same id, with the same body.
	bodies := map[string][]string{}
	for _, rq := range rc.Requests() {
		if rq.Err != nil {
			t.Errorf("a %s delivery failed the Standard Webhooks check: %v", rq.Kind, rq.Err)
		}
		if rq.Event["id"] != rq.ID {
			t.Errorf("webhook-id %q, body id %v", rq.ID, rq.Event["id"])
		}
		bodies[rq.ID] = append(bodies[rq.ID], string(rq.Body))
	}
	for id, bs := range bodies {
		if len(bs) < 2 {
			t.Errorf("message %s delivered once, after a 500 it must be retried", id)
		}
		for _, b := range bs[1:] {
			if b != bs[0] {
				t.Errorf("message %s retried with another body:\n%s\n%s", id, bs[0], b)
			}
		}
	}

	// The inventory's events as the sidecar did them.
	if n := len(rc.Accepted(plugins.KindHold)); n != 3 {
		t.Errorf("%d hold events, want 3", n)
	}
	if rel := rc.Accepted(plugins.KindReleased); len(rel) != 1 {
		t.Errorf("%d released events, want 1", len(rel))
	} else if data, _ := rel[0]["data"].(map[string]any); data["hold_id"] != h.ID || data["reason"] != "released" {
		t.Errorf("released %v", rel[0])
	}
	var sold []string
	for _, e := range rc.Accepted(plugins.KindSold) {
		data, _ := e["data"].(map[string]any)
		sold = append(sold, fmt.Sprint(data["order_id"]))
		if e["event"] != DemoEvent || data["pool"] != "floor" || data["user"] != "fan" {
			t.Errorf("sold event %v", e)
		}
	}
	slices.Sort(sold) // deliveries run in parallel, in no set order
	slices.Sort(orders)
	if !slices.Equal(sold, orders) {
		t.Errorf("sold events for orders %v, want %v", sold, orders)
	}
	var fromInventory int
	for _, e := range rc.Accepted(plugins.KindSoldOut) {
		if data, _ := e["data"].(map[string]any); data["source"] == "inventory" {
			fromInventory++
			if data["sold"] != float64(3) {
				t.Errorf("sold_out %v", e)
			}
		}
	}
	if fromInventory != 1 {
		t.Errorf("%d sold_out events from the inventory, want 1", fromInventory)
	}
	ns := rc.Accepted(plugins.KindNoShow)
	if data, _ := ns[0]["data"].(map[string]any); ns[0]["event"] != DemoEvent || data["count"] != float64(1) {
		t.Errorf("no_show %v", ns[0])
	}
	// The sink's counters: delivered, nothing dropped or given up on.
	m := func(outcome string) float64 {
		return metric(t, d.Waitroom, "waitroom_sink_events_total", "outcome", outcome, "sink", "0", "type", "webhook")
	}
	if m("delivered") < float64(len(plugins.AllKinds)) || m("dropped") != 0 || m("failed") != 0 {
		t.Errorf("waitroom_sink_events_total: delivered %v, dropped %v, failed %v", m("delivered"), m("dropped"), m("failed"))
	}
	mc := rc.Accepted(plugins.KindModeChanged)
	if data, _ := mc[0]["data"].(map[string]any); data["to"] != string(mode) {
		t.Errorf("mode_changed %v, want to %s", mc[0], mode)
	}
}

// randomBase64 is n random bytes in standard base64.
func randomBase64(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return base64.StdEncoding.EncodeToString(b)
}
