// Command configdoc prints the configuration reference: one Markdown
// table per section of the configuration file, with each key's path,
// type, default and description. Descriptions are the doc comments on
// the fields of cmd/waitroom/internal/config's structs, read from its source with
// go/ast; defaults come from config.Default. A field without a doc
// comment is an error, so the reference cannot silently fall behind.
//
//	go run ./cmd/waitroom/internal/tools/configdoc                         # print to stdout
//	go run ./cmd/waitroom/internal/tools/configdoc -w docs/configuration.md # rewrite the marked block
//
// With -w the text between <!-- config-reference:start --> and
// <!-- config-reference:end --> in the file is replaced; a test (run by
// make test) fails when docs/configuration.md's block differs from what
// Generate prints.
//
// It is not part of the waitroom binary and reads no configuration file.
package main
