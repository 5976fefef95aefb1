package promtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStart: a server with a written config answers queries and its
// targets through the API, refuses a malformed query, and is gone after
// Stop.
func TestStart(t *testing.T) {
	dir := t.TempDir()
	s := Start(t, Options{Dir: dir, Config: "global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: self\n    static_configs: [{targets: [\"127.0.0.1:1\"]}]\n"})
	ctx := context.Background()
	if got, err := s.Query(ctx, "1 + 1"); err != nil || len(got) != 1 || got[0].Float() != 2 {
		t.Fatalf("1 + 1 = %+v, %v", got, err)
	}
	if _, err := s.Query(ctx, "sum(("); err == nil || !strings.Contains(err.Error(), "bad_data") {
		t.Fatalf("a malformed query: %v, want bad_data", err)
	}
	if _, err := s.Targets(ctx); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	c := make(chan error, 1)
	go func() { _, err := s.Query(ctx, "1"); c <- err }()
	select {
	case err := <-c:
		if err == nil {
			t.Fatal("the server still answers after Stop")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a query after Stop hung")
	}
}

func TestCheckRules(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.yaml"), filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up == 0\n"), 0o644)
	os.WriteFile(bad, []byte("groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: sum((\n"), 0o644)
	if out, err := CheckRules(good); err != nil {
		t.Errorf("a good file: %v\n%s", err, out)
	}
	if out, err := CheckRules(bad); err == nil {
		t.Errorf("a bad file passed:\n%s", out)
	}
}
