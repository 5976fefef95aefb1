// Package jsonenc appends JSON values to byte slices without reflection,
// for the few hot paths (hold responses, journal records, snapshots) where
// encoding/json's cost shows. Its output is byte-for-byte what
// encoding/json produces for the same values, escaping <, > and & as it
// does, so the two can be mixed freely and readers need no special care.
//
// It is not a general encoder: callers write the structure themselves.
package jsonenc
