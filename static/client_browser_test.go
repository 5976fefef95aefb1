package static_test

import (
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit/browsertest"
	"github.com/waitroom/waitroom/static"
)

// clientReport is waitroomClient()'s answer, as the join sends it.
type clientReport struct {
	Webdriver  *bool    `json:"webdriver"`
	Automation []string `json:"automation"`
	Missing    []string `json:"missing"`
	SolveMS    *float64 `json:"solve_ms"`
	Hashes     *float64 `json:"hashes"`
}

// The solver's file reports the browser it runs in: in the headless
// Chromium the tests drive (through the DevTools protocol, as puppeteer
// and Playwright do), navigator.webdriver is true, and false where the tab
// stands for a person's (browsertest.AsPerson); no API is missing; after a solve, its
// time and hashes, once.
func TestClientReportInChromium(t *testing.T) {
	pages, err := static.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, worker := pages.PowAssets()
	srv := powServer(t, pages)
	for _, tc := range []struct {
		name      string
		flags     []string
		webdriver bool
	}{{"headless", nil, true}, {"as a person", browsertest.AsPerson, false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := browsertest.Start(t, tc.flags...).NewTab(t)
			browsertest.Navigate(t, ctx, srv.URL+"/pow")
			browsertest.WaitFor(t, ctx, "pow.js", `typeof window.waitroomClient === "function"`)

			before := browsertest.Eval[clientReport](t, ctx, `waitroomClient()`)
			t.Logf("before a solve: %+v", before)
			if before.Webdriver == nil || *before.Webdriver != tc.webdriver || len(before.Missing) != 0 || before.Automation == nil || before.SolveMS != nil || before.Hashes != nil {
				t.Errorf("before a solve: %+v; want webdriver %v, no missing API, no solve", before, tc.webdriver)
			}
			c := newChallenge(t, 8, 4, time.Minute)
			checkSolved(t, c, solveIn(t, ctx, c, string(mustJSON("/_wr/static/"+worker)), ""))
			after := browsertest.Eval[clientReport](t, ctx, `waitroomClient()`)
			t.Logf("after a solve: webdriver %v, solve_ms %v, hashes %v", *after.Webdriver, *after.SolveMS, *after.Hashes)
			if after.SolveMS == nil || after.Hashes == nil || *after.Hashes < 1 {
				t.Errorf("after a solve: %+v; want its time and hashes", after)
			}
			if again := browsertest.Eval[clientReport](t, ctx, `waitroomClient()`); again.SolveMS != nil {
				t.Errorf("a solve reported twice: %+v", again)
			}
		})
	}
}
