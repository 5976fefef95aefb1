package app

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/waitroom/waitroom/internal/testkit/promtest"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/testkit/webhooktest"
	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/client"
)

// The deploy files, from this package's directory.
const (
	alertsFile    = "../../../../deploy/prometheus/alerts.yaml"
	dashboardFile = "../../../../deploy/grafana/waitroom.json"
)

// promConfig is `waitroom serve` over TLS (a certificate that expires in
// two days) and plain HTTP, the admission store in Redis, the seat-hold
// sidecar in the process on its own listener, the bot defence on, a
// webhook sink, and two selling events: show, linked to seats the test
// defines, and ghost, linked to an inventory event the sidecar never
// hears of.
const promConfig = `
log: {level: warn}
serve:
  listen: 127.0.0.1:0
  tls: {listen: 127.0.0.1:0, cert_file: %[4]s, key_file: %[5]s}
  keys:
    signing: {secret: %[1]s}
  cookies: {secure: never}
  with_inventory: true
  inventory: {refresh: 200ms}
  rate_limits:
    per_ip: {rate: 100000, burst: 100000}
    per_prefix: {rate: 100000, burst: 100000}
admin:
  listen: 127.0.0.1:0
  token: %[1]s
admission:
  store: redis
  redis: {url: %[2]s}
inventory:
  listen: 127.0.0.1:0
  api_token: %[1]s
  store: redis
  redis: {url: %[2]s}
  reaper: {interval: 200ms}
bot_defence:
  secret: %[1]s
  signals: []
sinks:
  - type: webhook
    config: {url: %[6]s, secret: %[7]s, backoff: 50ms}
origins:
  - name: shop
    addresses: [%[3]s]
routes:
  - prefix: /show/
    event: show
  - prefix: /ghost/
    event: ghost
events:
  - id: show
    queue_opens_at: %[8]s
    on_sale_at: %[9]s
    landing_path: /show/
    tranche: 1s
    inventory_event: show-seats
    challenge:
      mode: on
      light: {bits: 4, puzzles: 16}
  - id: ghost
    queue_opens_at: %[8]s
    on_sale_at: %[9]s
    landing_path: /ghost/
    inventory_event: ghost-seats
`

// TestPrometheusEvaluatesAlertsAndDashboard: promtool accepts
// deploy/prometheus/alerts.yaml; a real Prometheus (1 s scrapes, the
// alerts loaded as rules) scrapes a running waitroom serve and its
// sidecar through a scripted sale (joins with proof of work, a refused
// join, admissions, origin requests of which half fail, seats held,
// sold and abandoned, a linked inventory that is missing), then evaluates
// every alert expression and every expression of
// deploy/grafana/waitroom.json through its query API without error;
// every metric they name is exported; the rules evaluate healthy; and
// the expressions the scenario gives data to return some, among them
// the alerts for origin errors, abandoned holds, the missing inventory
// and certificate expiry, and, once Redis is killed, the store alert.
func TestPrometheusEvaluatesAlertsAndDashboard(t *testing.T) {
	if out, err := promtest.CheckRules(alertsFile); err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
	alerts, dashboard := alertExprs(t), dashboardExprs(t)

	dir := t.TempDir()
	certFile, keyFile := writeCert(t, dir, 48*time.Hour)
	rdb := redistest.Start(t, redistest.Options{AppendOnly: true})
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "fail") {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer origin.Close()
	secret := randomHex(32)
	hook := webhooktest.Start(t, secret, 0)
	cfgText := fmt.Sprintf(promConfig, secret, rdb.URL(), strings.TrimPrefix(origin.URL, "http://"),
		certFile, keyFile, hook.URL, secret, time.Now().UTC().Add(-2*time.Second).Format(time.RFC3339),
		time.Now().UTC().Add(3*time.Second).Format(time.RFC3339))
	w, cfg, stop := runServe(t, cfgText)
	defer stop()
	base := "http://" + w.Addr().String()

	ruleFile := filepath.Join(dir, "alerts.yaml")
	if b, err := os.ReadFile(alertsFile); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(ruleFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	prom := promtest.Start(t, promtest.Options{Config: fmt.Sprintf(`
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
scrape_configs:
  - job_name: waitroom
    authorization: {credentials: %q}
    static_configs: [{targets: [%q]}]
  - job_name: waitroom-inventory
    authorization: {credentials: %q}
    static_configs: [{targets: [%q]}]
`, ruleFile, cfg.Admin.Token, w.AdminAddr().String(), cfg.Inventory.APIToken, w.InventoryAddr().String())})
	ctx := context.Background()
	waitFor(t, "both targets up", func() bool {
		ts, err := prom.Targets(ctx)
		up := 0
		for _, tg := range ts {
			if tg.Health == "up" {
				up++
			} else if tg.LastError != "" {
				t.Logf("target %s: %s", tg.ScrapeURL, tg.LastError)
			}
		}
		return err == nil && up == 2
	})
	// Two scrapes of each before the sale: every counter starts from what
	// it was before, so that increase() and rate() see the sale.
	waitFor(t, "two scrapes of each target", func() bool {
		s, err := prom.Query(ctx, `count_over_time(up[1m]) >= 2`)
		return err == nil && len(s) == 2
	})

	// The sale. Visitors join with proof of work; one join is refused.
	if status, _ := postJoin(t, base, `{"event":"show"}`); status == http.StatusOK {
		t.Fatal("a join without proof of work was let in")
	}
	var visitors []*http.Client
	for range 6 {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar}
		req, _ := http.NewRequest("POST", base+"/_wr/api/join", strings.NewReader(solvedJoin(t, base)))
		req.Header.Set("User-Agent", replicaUA)
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("join: %s", resp.Status)
		}
		visitors = append(visitors, c)
	}
	// get returns what base+path answers, the body when it is the
	// origin's "ok".
	get := func(c *http.Client, path string) string {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("User-Agent", replicaUA)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
		if string(b) == "ok" {
			return "ok"
		}
		return resp.Status
	}
	admitted := map[int]bool{}
	for deadline := time.Now().Add(30 * time.Second); len(admitted) < len(visitors); {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d visitors admitted after 30 s", len(admitted), len(visitors))
		}
		for i, c := range visitors {
			if !admitted[i] && (get(c, "/_wr/api/status?event=show") != "" && get(c, "/show/") == "ok") {
				admitted[i] = true
			}
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Seats: some sold, most holds abandoned (they expire in a second).
	inv := client.New("http://"+w.InventoryAddr().String(), cfg.Inventory.APIToken)
	defer inv.Close()
	if _, err := inv.PutEvent(ctx, "show-seats", inventory.EventDef{GA: []inventory.Pool{{ID: "floor", Capacity: 100}}}, "test"); err != nil {
		t.Fatal(err)
	}
	hold := func(ttl time.Duration) inventory.Hold {
		h, err := inv.Hold(ctx, "show-seats", inventory.HoldRequest{User: "fan", TTL: ttl, GA: &inventory.GARequest{Pool: "floor", Quantity: 1}})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	for range 2 {
		if _, err := inv.Confirm(ctx, "show-seats", hold(time.Minute).ID, inventory.ConfirmRequest{PaymentRef: "card"}); err != nil {
			t.Fatal(err)
		}
	}
	for range 8 {
		hold(time.Second)
	}

	// The admitted visitors shop; half their requests fail at the origin.
	for start := time.Now(); time.Since(start) < 8*time.Second; time.Sleep(200 * time.Millisecond) {
		for _, c := range visitors {
			get(c, "/show/page")
			get(c, "/show/fail")
		}
	}
	waitFor(t, "the abandoned holds expired and scraped", func() bool {
		s, err := prom.Query(ctx, `waitroom_inventory_audit_entries_total{action="expire", inventory_event="show-seats"}`)
		return err == nil && len(s) == 1 && s[0].Float() >= 8
	})
	time.Sleep(2 * time.Second) // two more scrapes and evaluations
	// Every expression evaluates; every metric named is exported.
	empty := map[string]bool{}
	check := func(kind, name, expr string) {
		expr = strings.ReplaceAll(expr, "$event", ".+")
		s, err := prom.Query(ctx, expr)
		if err != nil {
			t.Errorf("%s %q: %v\n%s", kind, name, err, expr)
			return
		}
		t.Logf("%s %q: %d series", kind, name, len(s))
		if len(s) == 0 {
			empty[name] = true
		}
	}
	for _, a := range alerts {
		check("alert", a.name, a.expr)
	}
	for _, d := range dashboard {
		check("panel", d.name, d.expr)
	}
	var all []string
	for _, a := range alerts {
		all = append(all, a.expr)
	}
	for _, d := range dashboard {
		all = append(all, d.expr)
	}
	for _, m := range metricNames(all) {
		if s, err := prom.Query(ctx, fmt.Sprintf(`count({__name__=%q})`, m)); err != nil || len(s) == 0 {
			t.Errorf("metric %s is named by an expression but not exported by waitroom or the sidecar (%v)", m, err)
		}
	}
	// The scenario gives these data: the alert conditions it creates,
	// and every panel (bot-defence actions, origin errors, holds...).
	for _, name := range []string{"WaitroomOriginErrors", "WaitroomAbandonedHolds", "WaitroomInventoryMissing",
		"WaitroomCertificateExpiresSoon", "WaitroomCertificateExpiring"} {
		if empty[name] {
			t.Errorf("alert %s has no data though the scenario makes its condition true", name)
		}
	}
	for _, d := range dashboard {
		if empty[d.name] {
			t.Errorf("panel %s has no data", d.name)
		}
	}
	if empty["WaitroomWebhookDrops"] == false || empty["WaitroomStoreUnreachable"] == false {
		t.Errorf("an alert with nothing to say said something: drops %v, store %v",
			!empty["WaitroomWebhookDrops"], !empty["WaitroomStoreUnreachable"])
	}

	// Prometheus evaluated every rule without error.
	waitFor(t, "every rule evaluated", func() bool {
		rules, err := prom.Rules(ctx)
		if err != nil || len(rules) != len(alerts) {
			return false
		}
		for _, r := range rules {
			if r.Health == "err" {
				t.Fatalf("rule %s: %s", r.Name, r.LastError)
			}
			if r.Health != "ok" {
				return false
			}
		}
		return true
	})

	// Redis goes: the store alert's expression gets data.
	rdb.Kill()
	waitFor(t, "waitroom_store_up == 0 for both stores", func() bool {
		s, err := prom.Query(ctx, `waitroom_store_up == 0`)
		return err == nil && len(s) == 2
	})
	if s, err := prom.Query(ctx, alertExpr(alerts, "WaitroomStoreUnreachable")); err != nil || len(s) != 2 {
		t.Errorf("WaitroomStoreUnreachable with Redis down: %d series, %v", len(s), err)
	}
}

// namedExpr is an expression with what it belongs to.
type namedExpr struct{ name, expr string }

func alertExprs(t *testing.T) []namedExpr {
	t.Helper()
	b, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var out []namedExpr
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			out = append(out, namedExpr{r.Alert, r.Expr})
		}
	}
	if len(out) == 0 {
		t.Fatal("no alerts")
	}
	return out
}

func alertExpr(es []namedExpr, name string) string {
	for _, e := range es {
		if e.name == name {
			return e.expr
		}
	}
	return "absent(no_such_alert)"
}

func dashboardExprs(t *testing.T) []namedExpr {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr   string `json:"expr"`
				Legend string `json:"legendFormat"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	var out []namedExpr
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, namedExpr{p.Title + " / " + tg.Legend, tg.Expr})
		}
	}
	if len(out) == 0 {
		t.Fatal("no panels")
	}
	return out
}

// metricNames are the metric names the expressions select: identifiers
// starting waitroom_ (every metric of ours), outside label matchers'
// strings.
func metricNames(exprs []string) []string {
	quoted := regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	name := regexp.MustCompile(`\bwaitroom_[a-z0-9_]+`)
	var out []string
	for _, e := range exprs {
		for _, m := range name.FindAllString(quoted.ReplaceAllString(e, `""`), -1) {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	return out
}

// waitFor polls done until it holds, for at most 60 s.
func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !done(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s still waiting for %s", what)
		}
	}
}

// writeCert writes a self-signed certificate for 127.0.0.1 valid for
// the given time, and its key, into dir.
func writeCert(t *testing.T, dir string, valid time.Duration) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "shop.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(valid),
		DNSNames: []string{"shop.test"}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
