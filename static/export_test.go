package static

// For the browser tests (package static_test), which compare these with
// what Chromium's Intl gives the page scripts.
var (
	FormatInt      = formatInt
	PluralCategory = pluralCategory
)
