// Command waitroom-load drives waitroom the way a flash sale does and
// reports what happened. For now it has one mode:
//
//	waitroom-load sim [-scenario capacity-changes|steady] [-scale N] [-seed N] [-duration D] [-expected-rate N]
//
// which runs the deterministic simulation of package admission/sim (the
// real admission engine on a fake clock, a simulated origin, visitors who
// poll and give up) and prints the controller's convergence, the origin's
// error rate, ETA honesty and the fairness of the draw. Load against a
// running proxy comes with it.
package main
