// Package doctest keeps the Markdown documentation true: its test reads
// README.md, configs/README.md and every docs/*.md, and checks each fenced
// code block and relative link in them. It has no code the binary uses.
//
// A fence's info string says what a block is and how it is checked (the
// words after the language are ignored by Markdown renderers):
//
//	```yaml check-config              a complete configuration file: the test writes it
//	                                  to a file and runs `waitroom check-config -c` on it,
//	                                  which must print "configuration is valid"
//	```yaml check-config file=NAME    the same, and the file stays as NAME in the
//	                                  document's working directory for the sh blocks after it
//	```sh run                         run by sh -eu in the document's working directory,
//	                                  with the waitroom binary on PATH; it must exit 0
//	```sh no-run: REASON              shown, not run (a long-running server, make targets
//	                                  that install packages or run the whole suite); the
//	                                  reason is required
//	```json                           one or more JSON values, each of which must parse
//	```text, ```go, ```mermaid        output, code checked elsewhere, pictures: not checked
//
// A yaml or sh block without its marker, or a shell block under another
// name (bash, shell, console), fails the test, so every example is either
// run or says why not. The blocks of one document run in order in one
// temporary directory holding a link to the repository's configs/; the
// secrets the example configurations name (WAITROOM_SIGNING_SECRET,
// WAITROOM_ADMIN_TOKEN, ...) are set to fresh random values. The waitroom
// on PATH is the test binary itself running cmd/waitroom/internal/cli, so
// no separate build is needed.
//
// Every relative link in those documents must name an existing file or
// folder, and a #fragment must name a heading of the target document
// (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens).
// Links with a scheme (https:, mailto:) are not followed.
package doctest
