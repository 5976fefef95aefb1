// Package report makes an event's record after the sale from what the
// admission store keeps: the leader's minute records (arrivals,
// admitted, active visitors, origin requests, latency and errors, the
// controller's target and reason, seats sold, no-shows, bot-defence
// outcomes, ETA honesty) and the draw records, with links to their
// public audits. It writes the report as CSV (the per-minute table), JSON
// (everything) or one self-contained HTML page (inline CSS and SVG
// charts, no script, nothing fetched).
//
// It is what `waitroom report` and GET /admin/v1/events/{id}/report
// print, byte for byte the same for the same store. It does not measure
// anything itself: the engine records the minutes (admission/record.go).
// A Report is a plain value; the functions are safe for concurrent use.
package report
