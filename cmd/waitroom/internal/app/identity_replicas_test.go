package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
)

// identityReplicaConfig is two replicas' `waitroom serve` over one Redis,
// with one place per account: %[4]s is the identity secret.
const identityReplicaConfig = `
log: {level: warn}
serve:
  listen: 127.0.0.1:0
  keys:
    signing: {secret: %[1]s}
  cookies: {secure: never}
admin:
  listen: ""
admission:
  store: redis
  redis: {url: %[2]s}
origins:
  - name: shop
    addresses: [%[3]s]
routes:
  - prefix: /show/
    event: show
identity:
  cookie: shop_id
  secret: %[4]s
  login_url: /login
events:
  - id: show
    on_sale_at: 2030-01-01T10:00:00Z
    queue_opens_at: 2020-01-01T10:00:00Z
    landing_path: /show/
    identity: required
`

// TestReplicasOnePlacePerAccount: one account joins through two replicas
// over one Redis, from several devices at once: one place, the same
// visitor everywhere; another account gets its own; a join without the
// identity is refused at either replica.
func TestReplicasOnePlacePerAccount(t *testing.T) {
	srv := redistest.Start(t, redistest.Options{AppendOnly: true})
	origin := httptest.NewServer(http.NotFoundHandler())
	defer origin.Close()
	secret := randomHex(32)
	cfgText := fmt.Sprintf(identityReplicaConfig, randomHex(32), srv.URL(),
		strings.TrimPrefix(origin.URL, "http://"), secret)
	replicas := []string{startReplica(t, cfgText), startReplica(t, cfgText)}

	join := func(base, ua, cookie string) (int, string, string) {
		req, _ := http.NewRequest("POST", base+"/_wr/api/join", strings.NewReader(`{"event":"show"}`))
		req.Header.Set("User-Agent", ua)
		req.Header.Set("Content-Type", "application/json")
		if cookie != "" {
			req.Header.Set("Cookie", cookie)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0, "", ""
		}
		defer resp.Body.Close()
		var b struct {
			Visitor string `json:"visitor"`
			Error   string `json:"error"`
		}
		json.NewDecoder(resp.Body).Decode(&b)
		return resp.StatusCode, b.Visitor, b.Error
	}
	cookie := func(account string) string {
		return "shop_id=" + admission.MakeIdentity([]byte(secret), account, time.Now().Add(time.Hour))
	}
	const n = 12
	visitors := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			status, v, e := join(replicas[i%2], fmt.Sprintf("Mozilla/5.0 (device %d)", i), cookie("alice"))
			if status != http.StatusOK {
				t.Errorf("join %d at replica %d: %d %s", i, i%2, status, e)
			}
			visitors[i] = v
		})
	}
	wg.Wait()
	for i := range n {
		if visitors[i] == "" || visitors[i] != visitors[0] {
			t.Fatalf("alice's joins got visitors %q", visitors)
		}
	}
	if _, bob, _ := join(replicas[1], "Mozilla/5.0 (bob)", cookie("bob")); bob == "" || bob == visitors[0] {
		t.Fatalf("bob's join: visitor %q (alice's %q)", bob, visitors[0])
	}
	for i, base := range replicas {
		if status, _, e := join(base, "Mozilla/5.0 (anon)", ""); status != http.StatusUnauthorized || e != "login_required" {
			t.Fatalf("a join without an identity at replica %d: %d %q", i, status, e)
		}
	}
}
