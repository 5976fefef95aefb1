// Command capacity measures what one operation of a flash crowd costs
// in CPU on this machine, for the capacity model in docs/capacity.md: a
// join (the challenge fetched, its proof of work checked, the join), a
// status poll, a gated request (the pass checked, the request proxied)
// and a purchase (a hold and its confirm through the seat-hold sidecar),
// each split into waitroom's share, Redis's and the sidecar's.
//
// It starts a standalone Redis (appendonly, fsync always, as production
// wants it), the sidecar on it, a counting origin (waitroom-load origin)
// and one `waitroom serve`, measures their idle CPU, then runs
// `waitroom-load http` three times and charges each process with the CPU
// time its process group used (bench/internal/procstat), less the idle
// baseline: joins alone (-join-only), joins then polls every second
// (-polls), and a sale (joins, polls until admitted, -pages gated pages,
// a purchase, the done page). An operation's cost in a mixed phase is
// what is left once the operations measured before are taken off.
//
//	go run ./bench/capacity [-joins 3000] [-pollers 2000 -polls 10] [-buyers 400 -pages 40] [-out costs.json]
//
// The load generator runs on the same cores, so wall-clock rates mean
// little here; CPU per operation is what the model needs. It is not a
// throughput benchmark (bench/proxy is).
package main
