// Package sim is a deterministic discrete-time simulation of a flash sale
// through the real admission engine (over the embedded store, on a fake
// clock): arrival curves (pre-queue, flash crowd, trickle), visitors who
// poll and give up, and a simulated origin whose capacity changes and
// whose latency and errors grow when it is pushed past it. It reports the
// controller's convergence, the origin's error rate, the honesty of the
// ETAs shown and the fairness of the draw. The same seed gives the same
// run.
//
// RunBench is a second model: bench/controller's scenario, not an
// approximation of it. An origin of C parallel slots at a fixed latency
// with a bounded FIFO line and 503s past it, browned out for a while; a
// crowd of shoppers who join, poll their status at the refresh the engine
// tells them, and once admitted load their pages and the checkout one
// after the other, retrying a 503 after a second (some take their pass and
// never come, some of those come back late); the proxy's meter (MeterModel,
// checked against proxy/meter by bench/controller's tests) reporting to
// the engine, which ticks every second. The engine is driven as `waitroom
// serve` drives it (a fixed rate is events[].caps.max_new_per_minute with
// the controller pinned out). Its per-second rows and figures are
// computed by admission/sim/figures, exactly as the real benchmark's are,
// and the model is calibrated against real runs (MeasuredModel,
// TestCalibration). `go run ./bench/controller -sim` prints its table.
//
// It is for tests, for `waitroom-load sim` and for bench/controller -sim;
// nothing in the proxy uses it.
package sim
