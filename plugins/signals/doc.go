// Package signals holds the built-in risk-signal plugins and registers
// them in plugins.Signals: headers, ja4, ip_ranges, rate, known_bad,
// consistency and client.
// Each factory decodes its config section strictly into a typed config,
// validates it (every problem, with its field path within the section)
// and builds the signal from package challenge or plugins/iplist.
//
// The signals' logic lives in those packages; this package is only the
// config surface. The weight and type of a signal are one level up, in
// bot_defence.signals[], and are not this package's business either.
package signals
