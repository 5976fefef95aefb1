// Package waitroom is the root of the waiting-room reverse proxy's module.
// It holds no code of its own: it documents the layout, and its test
// (layout_test.go) keeps the layout true.
//
// The tree has four floors, and imports only point down:
//
//	cmd/waitroom                 the binary, with its own wiring below it:
//	  internal/app, cli,         configuration, commands, the demo shop,
//	  config, demoshop, version  the version stamp
//	proxy/..., plugins/...       HTTP: the gate, the visitor API, the admin
//	                             API; and the plugins the wiring plugs in
//	admission, challenge,        the product's core: the queue and its
//	inventory, static            engine, the bot defence, the seat holds,
//	                             the page and its assets
//	internal/..., configs        leaf helpers many packages share; the
//	                             example configurations (demo.yaml embedded)
//
// internal/testkit holds the helpers only tests and benchmarks use (a real
// redis-server, nginx, Caddy or Chromium on a free loopback port, a fake
// clock). bench/ holds the side-by-side benchmarks; they sit outside the
// floors and may import any of the packages below cmd.
package waitroom
