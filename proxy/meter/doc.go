// Package meter measures, per event, what the origin is doing for the
// admitted visitors: the figures the admission controller sizes admission
// by (admission.Meter), and the waitroom_origin_* Prometheus series.
//
// The proxy registers one Event per event at setup (Meter.Event) and keeps
// the pointer on its route. On the hot path of every proxied request it
// calls Start before forwarding and Done when the origin has answered (or
// failed to), and Seen with the Presence embedded in the visitor's cached
// pass entry. None of these allocates, and none takes a lock in steady
// state: counters are atomics in shards picked at random per request, so
// that cores do not fight over one cache line. Each reads the clock once;
// StartAt, DoneAt and SeenAt take a time the caller has already read
// (SeenAt needs only seconds' precision: the request's arrival time will
// do).
//
// Every controller tick the admission engine calls Measure(event, now),
// which folds the shards into admission.Measurements:
//
//   - RequestRate, ErrorRate, LatencyP50, LatencyP95, LatencyP99, LatencyMean and
//     Answered (the requests the latencies are measured over) cover the last
//     Window (default 1 s). Each shard keeps a ring of slots (1 s each by
//     default; Window/16 for windows over 16 s) tagged with the slot's
//     number; the window is the current slot, the whole slots before it,
//     and the share of the oldest slot that still lies in the window
//     (its requests are taken as spread evenly over it). Before the event
//     has existed for a whole Window the figures cover its lifetime.
//   - Latencies go into a log-linear histogram of atomic counters: whole
//     microseconds, 16 exact buckets below 16 µs, then 16 buckets per
//     power of two up to 2^27 µs (about 134 s; longer latencies count as
//     about 130 s). A percentile is the midpoint of the bucket holding
//     it, within 1/32 (3.2 %) of the true value from 16 µs up, and within
//     0.5 µs below. Only requests the origin answered (any status) have a
//     latency; failed ones (timeout, connection error, shed) count in the
//     rates only.
//   - ErrorRate is the share of requests that failed or got a 5xx.
//   - InFlight is the number of requests started and not done, now.
//   - Active counts distinct visitors seen within ActiveWindow, with
//     epochs: time is cut in 12 epochs per ActiveWindow, each Presence
//     remembers the last epoch it was seen in, and each epoch has a count
//     of the visitors last seen in it (a visitor moving to a newer epoch
//     leaves its old one). Active is the sum over the current epoch and
//     the 12 before it, so every visitor seen within ActiveWindow is
//     counted, and one last seen up to ActiveWindow/12 longer ago may be
//     too: the figure errs towards more active visitors, which makes the
//     controller admit fewer, never more. A visitor the origin said
//     completed leaves the count at once and is never counted again: their
//     place goes to the next visitor without waiting for ActiveWindow.
//   - Completions counts the visitors the origin said completed since the
//     previous Measure call for that event.
//
// Meter is also a prometheus.Collector exporting, per event (label
// event): waitroom_origin_requests_total by status class,
// waitroom_origin_request_duration_seconds, waitroom_origin_in_flight_requests,
// waitroom_origin_active_visitors and waitroom_origin_completions_total.
//
// It is not the load shedder (the proxy enforces its in-flight limit and
// reports shed requests here as failed), it does not decide anything (the
// admission controller does), and it does not talk to the origin.
package meter
