// Package browsertest runs a real headless Chromium (Debian's
// /usr/bin/chromium) for tests, driven with github.com/chromedp/chromedp:
// start a browser, open isolated tabs (own cookies and storage, optional
// Accept-Language and phone viewport), wait for conditions in the page,
// take full-page screenshots into a stable artifacts directory, and fail
// the test on uncaught JavaScript exceptions.
//
// Chromium runs with exactly the switches in Flags and a fresh
// --user-data-dir from t.TempDir() (chromedp adds the DevTools pipe and
// the about:blank start page; Debian's launcher script adds the switches
// of /etc/chromium.d). Nothing in Flags makes the browser fetch from the
// network on its own, so a test talks only to the servers it starts on
// loopback. A missing chromium fails the test (Start calls t.Fatal): the
// browser tests are never skipped silently. `make deps` installs it.
//
// It is for tests only; it is not a crawler or a load generator.
package browsertest
