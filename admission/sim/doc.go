// Package sim is a deterministic discrete-time simulation of a flash sale
// through the real admission engine (over the embedded store, on a fake
// clock): arrival curves (pre-queue, flash crowd, trickle), visitors who
// poll and give up, and a simulated origin whose capacity changes and
// whose latency and errors grow when it is pushed past it. It reports the
// controller's convergence, the origin's error rate, the honesty of the
// ETAs shown and the fairness of the draw. The same seed gives the same
// run.
//
// It is for tests and for `waitroom-load sim`; nothing in the proxy uses it.
package sim
