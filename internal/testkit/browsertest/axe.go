package browsertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// AxeVersion is the axe-core release `make deps` installs (scripts/deps
// pins the same).
const AxeVersion = "4.14.1"

// AxeDirEnv names the environment variable with the directory axe-core
// was installed into (npm --prefix); scripts/deps and AxeDir agree on its
// default.
const AxeDirEnv = "WAITROOM_AXE_DIR"

// AxeDir is where `make deps` installs axe-core: $WAITROOM_AXE_DIR, or
// $XDG_CACHE_HOME (~/.cache)/waitroom/axe-core-<AxeVersion>.
func AxeDir() string {
	if d := os.Getenv(AxeDirEnv); d != "" {
		return d
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "waitroom", "axe-core-"+AxeVersion)
}

// AxeViolation is one rule axe-core found broken, with the elements that
// break it.
type AxeViolation struct {
	ID          string   `json:"id"`
	Impact      string   `json:"impact"`
	Description string   `json:"description"`
	Nodes       []string `json:"nodes"` // each element's CSS selector and what is wrong with it
}

// Axe runs axe-core (installed by `make deps`; never downloaded here) in
// the tab's page against WCAG 2 A/AA and best practices, and returns its
// violations. The script is handed to the page over the DevTools
// protocol, so the page's Content-Security-Policy need not allow it. It
// fails the test when axe-core is missing or does not run.
func Axe(t testing.TB, ctx context.Context) []AxeViolation {
	t.Helper()
	path := filepath.Join(AxeDir(), "node_modules", "axe-core", "axe.min.js")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("browsertest: axe-core not found (%v): run `make deps`", err)
	}
	if _, err := runTimeout(ctx, chromedp.Evaluate[chromedp.Void](string(src)+"\n;undefined")); err != nil {
		t.Fatalf("browsertest: loading axe-core: %v", err)
	}
	const run = `axe.run(document, {resultTypes: ["violations"],
		runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]}})
		.then(r => r.violations.map(v => ({id: v.id, impact: v.impact || "", description: v.description,
			nodes: v.nodes.map(n => n.target.join(" ") + ": " + n.failureSummary)})))`
	out, err := runTimeout(ctx, chromedp.Evaluate[[]AxeViolation](run, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("browsertest: running axe-core: %v", err)
	}
	return out
}

// String is the violation as a test log line.
func (v AxeViolation) String() string {
	return fmt.Sprintf("%s (%s): %s %v", v.ID, v.Impact, v.Description, v.Nodes)
}
