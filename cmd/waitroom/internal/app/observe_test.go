package app

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/client"
)

// TestLinkedInventoryMetrics: an event linked to an inventory event the
// sidecar does not know shows it missing (and the read failing, no seats
// known); once the sidecar defines it, missing goes to 0, the read to 1,
// and seats left to its capacity.
func TestLinkedInventoryMetrics(t *testing.T) {
	d := startDemo(t, 0, 0, func(c *config.Config) {
		c.Serve.Inventory.Refresh = config.Duration(100 * time.Millisecond)
		c.Events[0].InventoryEvent = "later-seats"
	})
	w := d.Waitroom
	labels := []string{"event", DemoEvent, "inventory_event", "later-seats"}
	waitFor(t, "the missing inventory seen", func() bool {
		return metric(t, w, "waitroom_event_inventory_missing", labels...) == 1
	})
	if up := metric(t, w, "waitroom_event_inventory_up", labels...); up != 0 {
		t.Errorf("waitroom_event_inventory_up = %v for a missing inventory", up)
	}
	if n := gauge(t, w, "waitroom_event_seats_left", ""); n != 0 {
		t.Errorf("waitroom_event_seats_left = %v while unknown, want no series", n)
	}
	inv := client.New("http://"+w.InventoryAddr().String(), w.cfg.Inventory.APIToken)
	defer inv.Close()
	if _, err := inv.PutEvent(context.Background(), "later-seats", inventory.EventDef{GA: []inventory.Pool{{ID: "floor", Capacity: 7}}}, "test"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the inventory found", func() bool {
		return metric(t, w, "waitroom_event_inventory_missing", labels...) == 0 &&
			metric(t, w, "waitroom_event_inventory_up", labels...) == 1 &&
			metric(t, w, "waitroom_event_seats_left", labels...) == 7
	})
	if f := metric(t, w, "waitroom_controller_min_active", "event", DemoEvent); f < 1 {
		t.Errorf("waitroom_controller_min_active = %v", f)
	}
}

// TestCertificateExpiryRead: the expiry exported is the served
// certificate's NotAfter.
func TestCertificateExpiryRead(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := writeCert(t, dir, 48*time.Hour)
	tc, err := fileTLSConfig(config.ServeTLS{CertFile: certFile, KeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	ci, ok := certOf("serve.tls", tc)
	if !ok || ci.subject != "shop.test" || time.Until(ci.notAfter) < 47*time.Hour || time.Until(ci.notAfter) > 48*time.Hour {
		t.Errorf("certOf = %+v, %v", ci, ok)
	}
	if _, ok := certOf("serve.tls", &tls.Config{}); ok {
		t.Error("certOf of a config without certificates")
	}
	if _, ok := certOf("serve.tls", nil); ok {
		t.Error("certOf of no config")
	}
}
