// Package webhooktest is a webhook receiver for tests: a local HTTP
// server that checks every request's Standard Webhooks signature with a
// verifier written from the specification
// (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md),
// not with the sender's code, keeps what it got, and can answer the
// first attempts of each message with an error so that the sender's
// retries show.
//
// It is not a webhook library for production receivers
// (plugins/webhook.Verify is).
package webhooktest
