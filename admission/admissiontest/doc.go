// Package admissiontest is the conformance suite for admission.Store: one
// set of behaviours every store must show — each rule of the Store doc
// comments, under concurrency too, and persistence across a restart —
// run by each store's tests with Run.
//
// It is for tests only; nothing in a waitroom binary imports it.
package admissiontest
