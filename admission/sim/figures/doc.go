// Package figures is the one definition of what the admission
// controller's benchmark reports: the per-second Row of a run (the
// origin's utilisation, 503s and latency percentiles, the crowd's
// admissions and checkouts, the waitroom's limit), the Figures computed
// from them (convergence, first-minute and settled utilisation,
// overloaded seconds, the brown-out's recovery and restore, completions,
// the limit's swing), the targets of issue 15, and the table and CSV they
// are printed as.
//
// Both bench/controller (real HTTP against a real `waitroom serve`) and
// admission/sim (the same scenario in simulated time) fill Rows and call
// Scenario.Compute and WriteTable, so that their tables can be compared
// figure by figure. It measures; it runs nothing.
//
// Everything here is plain values and pure functions, safe for concurrent
// use as long as a caller does not share a Contender it is changing.
package figures
