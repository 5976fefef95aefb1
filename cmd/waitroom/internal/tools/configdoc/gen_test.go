package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/cmd/waitroom/internal/config"
)

func TestGenerate(t *testing.T) {
	t.Parallel()
	out, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	again, err := Generate()
	if err != nil || again != out {
		t.Fatalf("Generate is not stable: %v", err)
	}
	for _, key := range leafKeys(reflect.TypeFor[config.Config](), "") {
		if !strings.Contains(out, "| `"+key+"` |") {
			t.Errorf("no row for %s", key)
		}
	}
	for _, want := range []string{
		"### `inventory.redis`",
		"| `log.level` | string | `info` | Least severe level written",
		"| `inventory.reaper.interval` | duration | `1s` |",
		"| `inventory.redis.cluster` | list of strings | `[]` |",
		"| `inventory.max_body_bytes` | integer | `8388608` |",
		"| `inventory.api_token` | string | `\"\"` |",
		// List elements show the defaults they start from, not zeros.
		"### `events[].controller`",
		"| `events[].tranche` | duration | `5s` |",
		"| `origins[].max_conns` | integer | `512` |",
		"| `serve.keys.verify[].algorithm` | string | `HS256` |",
		"| `events[].on_sale_at` | time | `\"\"` |",
		"| `events[].page.texts` | map of maps of strings | `{}` |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// leafKeys lists the key paths of every non-section field.
func leafKeys(t reflect.Type, path string) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		key := name
		if path != "" {
			key = path + "." + name
		}
		switch {
		case isSection(f.Type):
			keys = append(keys, leafKeys(f.Type, key)...)
		case f.Type.Kind() == reflect.Pointer && isSection(f.Type.Elem()):
			keys = append(keys, leafKeys(f.Type.Elem(), key)...)
		case f.Type.Kind() == reflect.Slice && isSection(f.Type.Elem()):
			keys = append(keys, leafKeys(f.Type.Elem(), key+"[]")...)
		default:
			keys = append(keys, key)
		}
	}
	return keys
}

// TestUndocumentedField checks that a field without a doc comment stops
// the generator.
func TestUndocumentedField(t *testing.T) {
	t.Parallel()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, configDir)
	dir := t.TempDir()
	files, _ := filepath.Glob(filepath.Join(src, "*.go"))
	const doc = "\t// Time between passes.\n"
	found := false
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if strings.Contains(text, doc) {
			found = true
			text = strings.Replace(text, doc, "", 1)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(file)), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if !found {
		t.Fatalf("the comment %q is gone from %s: update this test", doc, configDir)
	}
	_, err = generate(dir)
	if err == nil || !strings.Contains(err.Error(), "config.Reaper.Interval (inventory.reaper.interval) has no doc comment") {
		t.Errorf("got %v", err)
	}
}

func TestReplaceBlock(t *testing.T) {
	t.Parallel()
	doc := "# Title\n\n" + startMarker + "\nold\n" + endMarker + "\n\nafter\n"
	got, err := replaceBlock(doc, "new\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# Title\n\n" + startMarker + "\nnew\n" + endMarker + "\n\nafter\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if b, ok := block(got); !ok || b != "\nnew\n" {
		t.Errorf("block: %q, %v", b, ok)
	}
	for _, bad := range []string{"no markers", endMarker + startMarker, startMarker} {
		if _, err := replaceBlock(bad, "x"); err == nil {
			t.Errorf("replaceBlock(%q) did not fail", bad)
		}
	}
}

// referenceDoc is the document, relative to the module root, that holds
// the generated reference; the drift check reads it.
const referenceDoc = "docs/configuration.md"

// TestReferenceDoc checks that the reference in docs/configuration.md is
// what Generate prints.
func TestReferenceDoc(t *testing.T) {
	t.Parallel()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(referenceDoc)))
	if err != nil {
		t.Fatal(err)
	}
	got, ok := block(string(data))
	if !ok {
		t.Fatal(referenceDoc + " lacks the config-reference markers; add them and run: go run ./cmd/waitroom/internal/tools/configdoc -w " + referenceDoc)
	}
	want, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if got != "\n"+want {
		t.Errorf("the configuration reference in " + referenceDoc + " is out of date: run go run ./cmd/waitroom/internal/tools/configdoc -w " + referenceDoc)
	}
	if !strings.Contains(want, "configdoc -w "+referenceDoc+" ") {
		t.Errorf("the generated block's header does not name %s as the file to rewrite", referenceDoc)
	}
}

// TestWrite runs the -w path on a file with the markers, twice.
func TestWrite(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "configuration.md")
	doc := "# waitroom\n\n## Configuration\n\n" + startMarker + "\n" + endMarker + "\n\n## Next\n"
	if err := os.WriteFile(file, []byte(doc), 0o640); err != nil {
		t.Fatal(err)
	}
	want, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := run(file); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := block(string(data))
		if !ok || got != "\n"+want || !strings.HasSuffix(string(data), endMarker+"\n\n## Next\n") {
			t.Fatalf("after -w:\n%s", data)
		}
	}
	if info, err := os.Stat(file); err != nil || info.Mode().Perm() != 0o640 {
		t.Errorf("mode changed: %v %v", info.Mode(), err)
	}
	if err := run(filepath.Join(t.TempDir(), "none.md")); err == nil {
		t.Error("-w on a missing file did not fail")
	}
}
