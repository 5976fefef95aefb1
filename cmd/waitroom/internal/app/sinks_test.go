package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/client"
	"github.com/waitroom/waitroom/plugins/webhook"
)

// receiver is a webhook endpoint that checks each request's signature and
// keeps the events it got.
type receiver struct {
	t      *testing.T
	secret string
	mu     sync.Mutex
	got    []map[string]any
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := webhook.VerifySignature(rc.secret, r.Header.Get("X-Waitroom-Signature"), body, time.Now(), 0); err != nil {
		rc.t.Errorf("a webhook request failed its signature check: %v", err)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var e map[string]any
	if err := json.Unmarshal(body, &e); err != nil {
		rc.t.Errorf("a webhook body is not JSON: %v: %s", err, body)
	}
	if k := r.Header.Get("X-Waitroom-Event"); k != e["kind"] {
		rc.t.Errorf("X-Waitroom-Event %q for a %v event", k, e["kind"])
	}
	rc.mu.Lock()
	rc.got = append(rc.got, e)
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// of returns the events of one kind received so far.
func (rc *receiver) of(kind string) []map[string]any {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []map[string]any
	for _, e := range rc.got {
		if e["kind"] == kind {
			out = append(out, e)
		}
	}
	return out
}

// TestSinksHearOfEveryKind runs the demo (waiting room and sidecar in one
// process) with a webhook sink and sells its seats through the sidecar's
// API: the receiver gets hold, sold and sold_out, signed, besides a join
// from the proxy.
func TestSinksHearOfEveryKind(t *testing.T) {
	rc := &receiver{t: t, secret: randomHex(32)}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	d := startDemo(t, 0, 0, func(c *config.Config) {
		c.Serve.Inventory.Refresh = config.Duration(100 * time.Millisecond)
		var sink config.Sink
		if err := yamlNode(&sink.Config, "url: "+srv.URL+"/hook\nsecret: "+rc.secret+"\nbackoff: 50ms"); err != nil {
			t.Fatal(err)
		}
		sink.Type = "webhook"
		c.Sinks = []config.Sink{sink}
	})
	ctx := context.Background()
	inv := client.New("http://"+d.Waitroom.InventoryAddr().String(), d.Waitroom.cfg.Inventory.APIToken)
	defer inv.Close()

	// A visitor joins through the proxy.
	resp, err := http.Post(d.URL+"_wr/api/join", "application/json", strings.NewReader(`{"event":"`+DemoEvent+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("join: %s", resp.Status)
	}

	// Three places, sold as two and one.
	if _, err := inv.PutEvent(ctx, DemoEvent, inventory.EventDef{GA: []inventory.Pool{{ID: "floor", Capacity: 3}}}, "test"); err != nil {
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

	deadline := time.Now().Add(15 * time.Second)
	for len(rc.of("sold_out")) == 0 || len(rc.of("sold")) < 2 || len(rc.of("joined")) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after 15 s the receiver has hold %d, sold %d, sold_out %d, joined %d",
				len(rc.of("hold")), len(rc.of("sold")), len(rc.of("sold_out")), len(rc.of("joined")))
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // three refreshes: nothing more may come
	if n := len(rc.of("hold")); n != 2 {
		t.Errorf("%d hold events, want 2", n)
	}
	var sold []string
	for _, e := range rc.of("sold") {
		data, _ := e["data"].(map[string]any)
		sold = append(sold, data["order_id"].(string))
		if e["event"] != DemoEvent || data["pool"] != "floor" || data["user"] != "fan" {
			t.Errorf("sold event %v", e)
		}
	}
	slices.Sort(sold) // deliveries run in parallel, in no set order
	slices.Sort(orders)
	if !slices.Equal(sold, orders) {
		t.Errorf("sold events for orders %v, want %v", sold, orders)
	}
	if so := rc.of("sold_out"); len(so) != 1 {
		t.Errorf("%d sold_out events, want 1", len(so))
	} else if data, _ := so[0]["data"].(map[string]any); data["sold"] != float64(3) {
		t.Errorf("sold_out %v", so[0])
	}
}
