// Command waitroom-load drives waitroom the way a flash sale does and
// reports what happened. It has three modes:
//
//	waitroom-load sim [-scenario capacity-changes|steady] [-scale N] [-seed N] [-duration D] [-expected-rate N]
//
// runs the deterministic simulation of package admission/sim (the real
// admission engine on a fake clock, a simulated origin, visitors who poll
// and give up) and prints the controller's convergence, the origin's
// error rate, ETA honesty and the fairness of the draw.
//
//	waitroom-load http -targets URL[,URL...] -event ID [-balance sticky|random] [-visitors N] [-arrive D]
//	                   [-inventory URL -section S] [-origin-stats URL -max-active N -cap-slack N] [-json FILE] [-check]
//
// sends a crowd through one or more running `waitroom serve` replicas over
// keep-alive connections, each visitor doing what the room's page does:
// the challenge (proof of work solved with challenge.Solve), the join,
// status polls at the refresh_seconds answered, the pass, the gated page,
// a seat held and confirmed through the seat-hold sidecar
// (inventory/client, with idempotency keys) and the origin's "done" page
// (X-Waitroom-Complete). A replica that refuses connections is left out
// for a second, as a load balancer's health check would. The report:
// joins/s, polls/s, admitted/min, the longest gap in admissions, the cap
// held (the most visitors active at once at a counting origin against
// max_active), ETA honesty (the share admitted before the eta_high they
// were shown), seats sold twice (the sidecar's audit stream replayed) and
// acknowledged joins lost (every join answered 2xx looked up in its
// tranche's published draw).
//
//	waitroom-load origin [-listen ADDR] [-complete PATH] [-idle D]
//
// is that counting origin: a visitor (named by the X-Load-Visitor header
// the crowd sends) is active from their first request until the complete
// path, which it answers with X-Waitroom-Complete: 1.
//
// It is not a benchmark of one endpoint (bench/proxy is) and it sends no
// more than a visitor's page would.
package main
