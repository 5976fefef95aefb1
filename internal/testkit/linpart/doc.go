// Package linpart partitions porcupine histories by a key of each
// operation's input, for models whose keys (ids, accounts) are
// independent and so are checked one by one, which keeps porcupine's
// search small. It is a test helper; nothing in the binary uses it.
package linpart
