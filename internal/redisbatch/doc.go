// Package redisbatch sends concurrent Redis commands in pipelines: each of
// a Batcher's workers takes the next waiting command and every other one
// already waiting, and sends them as one pipeline. Nothing waits for a
// batch to fill, so a lone command goes at once and batches grow with
// load, as a group commit does. One pipeline costs Redis one read and one
// write for many commands (and, with appendfsync always, one fsync), and
// the client one round trip.
//
// Batching never merges commands: each runs on its own, in the order the
// pipeline sends them. A pipeline that go-redis retries after a lost
// connection may run some commands twice, so callers send only commands
// that are safe to repeat.
//
// Durable commands (NewAcked, Batcher.Durable) are acknowledged only
// once WAIT confirms that enough replicas have them: they go in one
// pipeline per master, on one connection, ended by one WAIT that answers
// for all of them, so a batch of joins costs one WAIT, not one each.
//
// It is not a general client: connection
// handling, cluster routing and retries are go-redis's.
package redisbatch
