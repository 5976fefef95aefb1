package app

import (
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
)

// The configured crawlers reach the proxy with their ranges loaded; a
// file that went bad after the check stops the start with its key.
func TestCrawlersFromConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "googlebot.json")
	if err := os.WriteFile(good, []byte(`{"prefixes":[{"ipv4Prefix":"66.249.64.0/27"},{"ipv6Prefix":"2001:4860:4801:10::/64"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cs, err := crawlers([]config.Crawler{{Name: "googlebot", UserAgents: []string{"Googlebot"}, IPRangesFile: good}}, log)
	if err != nil || len(cs) != 1 || cs[0].Name != "googlebot" || cs[0].UserAgents[0] != "Googlebot" {
		t.Fatalf("crawlers: %+v, %v", cs, err)
	}
	for addr, want := range map[string]bool{"66.249.64.31": true, "66.249.64.32": false, "2001:4860:4801:10::9": true, "2001:4860:4801:11::9": false} {
		if got := cs[0].Ranges.Contains(netip.MustParseAddr(addr)); got != want {
			t.Errorf("%s in the ranges: %v, want %v", addr, got, want)
		}
	}
	_, err = crawlers([]config.Crawler{{Name: "a", UserAgents: []string{"abc"}, IPRangesFile: good},
		{Name: "b", UserAgents: []string{"abc"}, IPRangesFile: filepath.Join(dir, "gone.json")}}, log)
	var se *StartError
	if !errors.As(err, &se) || se.Key != "serve.crawlers[1].ip_ranges_file" {
		t.Fatalf("a missing file: %v", err)
	}
}
