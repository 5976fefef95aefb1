package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/app"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/client"
	"github.com/waitroom/waitroom/inventory/ledger"
)

// runSidecar starts a real sidecar with the inventory section store
// (YAML) and returns its URL and the configuration file.
func runSidecar(t *testing.T, store string) (url, path, token string) {
	t.Helper()
	b := make([]byte, 32)
	rand.Read(b)
	token = hex.EncodeToString(b)
	dir := t.TempDir()
	path = writeIn(t, dir, "waitroom.yaml", fmt.Sprintf("log: {level: warn}\ninventory:\n  listen: 127.0.0.1:0\n  api_token: %s\n%s\n", token, store))
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sc, err := app.NewSidecar(ctx, cfg.Inventory, slog.New(slog.DiscardHandler), ln)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sc.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("sidecar: %v", err)
		}
	})
	return "http://" + ln.Addr().String(), path, token
}

// TestInventoryExportReconcile: against a real sidecar on each backend,
// with seats sold through its API, `waitroom inventory export` writes
// the event as JSON Lines (through the API, and on Redis from the store
// itself, alike), and `reconcile` exits 0 when the origin's orders name
// the seats sold and 1, naming the seat, when they do not.
func TestInventoryExportReconcile(t *testing.T) {
	rd := redistest.Start(t, redistest.Options{AppendOnly: true})
	for name, store := range map[string]string{
		"embedded": "  store: embedded\n  data_dir: %s",
		"redis":    "  store: redis\n  redis: {url: " + rd.URL() + "}",
	} {
		t.Run(name, func(t *testing.T) {
			if strings.Contains(store, "%s") {
				store = fmt.Sprintf(store, filepath.Join(t.TempDir(), "inv"))
			}
			url, path, token := runSidecar(t, store)
			t.Setenv("WAITROOM_INVENTORY_TOKEN", token)
			c := client.New(url, token)
			defer c.Close()
			ctx := context.Background()
			ev := "show-" + name
			if _, err := c.PutEvent(ctx, ev, inventory.EventDef{Sections: []inventory.Section{{ID: "A", PriceCents: 100,
				Rows: []inventory.Row{{ID: "1", Seats: 4}}}}}, "test"); err != nil {
				t.Fatal(err)
			}
			h, err := c.Hold(ctx, ev, inventory.HoldRequest{User: "u1", Seats: []string{"A-1-1", "A-1-2"}})
			if err != nil {
				t.Fatal(err)
			}
			o, err := c.Confirm(ctx, ev, h.ID, inventory.ConfirmRequest{PaymentRef: "p1"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Hold(ctx, ev, inventory.HoldRequest{User: "u2", Seats: []string{"A-1-4"}}); err != nil {
				t.Fatal(err)
			}

			code, viaAPI, stderr := runCLI(t, "inventory", "export", "--event", ev, "--url", url)
			if code != 0 {
				t.Fatalf("export --url: exit %d: %s", code, stderr)
			}
			counts := map[string]int{}
			sc := bufio.NewScanner(strings.NewReader(viaAPI))
			for sc.Scan() {
				var l ledger.Line
				if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
					t.Fatalf("export line %q: %v", sc.Text(), err)
				}
				counts[l.Type]++
			}
			if want := map[string]int{"event": 1, "seat": 4, "hold": 1, "order": 1, "audit": 1}; fmt.Sprint(counts) != fmt.Sprint(want) {
				t.Fatalf("export lines by type %v, want %v:\n%s", counts, want, viaAPI)
			}
			if name == "redis" {
				// The store itself, read while the sidecar runs.
				code, direct, stderr := runCLI(t, "inventory", "export", "--event", ev, "-c", path)
				if code != 0 {
					t.Fatalf("export -c: exit %d: %s", code, stderr)
				}
				if withoutTime(direct) != withoutTime(viaAPI) {
					t.Fatalf("export from the store\n%s\ndiffers from the API's\n%s", direct, viaAPI)
				}
			}
			out := filepath.Join(t.TempDir(), "before.jsonl")
			if code, stdout, stderr := runCLI(t, "inventory", "export", "--event", ev, "--url", url, "--out", out); code != 0 ||
				!strings.Contains(stdout, "4 seats, 0 pools, 1 live holds, 1 orders") {
				t.Fatalf("export --out: exit %d: %s%s", code, stdout, stderr)
			}
			if b, _ := os.ReadFile(out); withoutTime(string(b)) != withoutTime(viaAPI) {
				t.Fatal("export --out wrote another export")
			}

			agree := writeIn(t, t.TempDir(), "orders.jsonl", `{"order_id":"shop-1","seats":["A-1-1","A-1-2"]}`+"\n")
			if code, stdout, stderr := runCLI(t, "inventory", "reconcile", "--event", ev, "--url", url, "--orders", agree); code != 0 ||
				!strings.Contains(stdout, "agree") {
				t.Fatalf("reconcile, agreeing: exit %d: %s%s", code, stdout, stderr)
			}
			differ := writeIn(t, t.TempDir(), "orders.csv", "order_id,seat\nshop-1,A-1-1\nshop-2,A-1-3\n")
			code, stdout, stderr := runCLI(t, "inventory", "reconcile", "--event", ev, "--url", url, "--orders", differ)
			if code != 1 || !strings.Contains(stdout, "A-1-2 (sidecar order "+o.ID+")") || !strings.Contains(stdout, "A-1-3 (order shop-2)") {
				t.Fatalf("reconcile, differing: exit %d: %s%s", code, stdout, stderr)
			}
			bad := writeIn(t, t.TempDir(), "bad.csv", "order,seat\n1,A\n")
			if code, _, stderr := runCLI(t, "inventory", "reconcile", "--event", ev, "--url", url, "--orders", bad); code != 1 || !strings.Contains(stderr, "order_id") {
				t.Fatalf("reconcile, bad file: exit %d: %s", code, stderr)
			}
			if code, _, _ := runCLI(t, "inventory", "reconcile", "--event", ev, "--orders", agree); code != 2 {
				t.Fatalf("reconcile without -c or --url: exit %d, want 2", code)
			}
			if code, _, stderr := runCLI(t, "inventory", "export", "--event", "nope", "--url", url); code != 1 || !strings.Contains(stderr, "nope") {
				t.Fatalf("export of an unknown event: exit %d: %s", code, stderr)
			}
		})
	}
}

// withoutTime drops the export's last line (the audit position, with
// the time of the export).
func withoutTime(export string) string {
	lines := strings.Split(strings.TrimSpace(export), "\n")
	var pos struct {
		Audit ledger.Position `json:"audit"`
	}
	json.Unmarshal([]byte(lines[len(lines)-1]), &pos)
	return strings.Join(lines[:len(lines)-1], "\n") + fmt.Sprintf("\n%s %d", pos.Audit.Last, pos.Audit.Entries)
}
