// Package stats holds the small statistics the benchmark programs in
// bench/ report: they print medians of rounds, never a lone figure.
package stats
