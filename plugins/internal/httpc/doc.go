// Package httpc holds what waitroom's outbound plugins (CAPTCHA
// siteverify, webhook, external scorer) share about calling other
// services over HTTP: a client that never follows redirects, a bounded
// body read, and the check of a configured endpoint URL.
//
// It is not a general HTTP toolkit and has no retry logic: each plugin
// decides what a failure means for it.
package httpc
