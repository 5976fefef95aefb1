package waitroom

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/waitroom/waitroom/"

// floor returns how high a package of the module sits (4 the binary, 3
// proxy and plugins, 2 the core, 1 the leaf helpers) and its area, the
// top folder that siblings on one floor may not cross into unless they
// share it. bench and the test kit get floor 0: they have rules of their
// own.
func floor(pkg string) (level int, area string) {
	area, _, _ = strings.Cut(pkg, "/")
	switch {
	case area == "cmd":
		return 4, area
	case area == "proxy" || area == "plugins":
		return 3, area
	case area == "admission" || area == "challenge" || area == "inventory" || area == "static":
		return 2, "core"
	case strings.HasPrefix(pkg, "internal/testkit"):
		return 0, "testkit"
	case area == "internal" || area == "configs":
		return 1, area
	}
	return 0, area
}

// imports maps each package folder of the module (relative to the root)
// to the module's packages it imports, from its non-test files and from
// its test files separately.
func imports(t *testing.T) (code, tests map[string]map[string]bool) {
	t.Helper()
	code, tests = map[string]map[string]bool{}, map[string]map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "bin" || name == "node_modules") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != "." {
				return filepath.SkipDir // a module of its own (deploy/kubernetes/check)
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		into := code
		if strings.HasSuffix(path, "_test.go") {
			into = tests
		}
		if into[dir] == nil {
			into[dir] = map[string]bool{}
		}
		for _, spec := range f.Imports {
			p, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if rest, ok := strings.CutPrefix(p, module); ok {
				into[dir][rest] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return code, tests
}

// TestImportsPointDown fails when a package imports one on its own floor
// in another area or one on a higher floor: the core importing proxy,
// plugins or the binary's wiring, a leaf helper importing the core, proxy
// importing plugins. It also keeps the test kit out of product code: only
// tests, benchmarks and the conformance suites (packages named …test) use
// it, and the test kit itself imports leaf helpers only.
func TestImportsPointDown(t *testing.T) {
	t.Parallel()
	code, tests := imports(t)
	if len(code) < 20 {
		t.Fatalf("found %d packages: is the test running at the module root?", len(code))
	}
	var bad []string
	check := func(from string, deps map[string]bool, isTest bool) {
		fl, fa := floor(from)
		for to := range deps {
			tl, ta := floor(to)
			switch {
			case fa == "bench" || from == ".":
				if strings.HasPrefix(to, "cmd/") {
					bad = append(bad, from+" → "+to+": benchmarks drive the binary, not its wiring")
				}
			case ta == "testkit":
				if fa != "testkit" && !isTest && !strings.HasSuffix(from, "test") {
					bad = append(bad, from+" → "+to+": the test kit is for tests and benchmarks only")
				}
			case fa == "testkit":
				if tl != 1 {
					bad = append(bad, from+" → "+to+": the test kit may import leaf helpers only")
				}
			case tl > fl:
				bad = append(bad, from+" → "+to+": imports point down, this one points up")
			case tl == fl && ta != fa:
				bad = append(bad, from+" → "+to+": sideways between areas of one floor")
			case ta == "bench":
				bad = append(bad, from+" → "+to+": nothing imports the benchmarks")
			}
		}
	}
	for from, deps := range code {
		check(from, deps, false)
	}
	for from, deps := range tests {
		check(from, deps, true)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// TestFloorsKnown fails when a new top-level folder with Go code appears
// without a place in the floors above, so the picture in doc.go stays
// complete.
func TestFloorsKnown(t *testing.T) {
	t.Parallel()
	code, _ := imports(t)
	for dir := range code {
		if dir == "." {
			continue
		}
		if l, area := floor(dir); l == 0 && area != "bench" && area != "testkit" {
			t.Errorf("%s: a top-level folder without a floor; place it in floor() and in doc.go", dir)
		}
	}
}

// TestLeafHelpersStayLeaves checks the rule that matters most for the
// reader, spelled out on its own: no leaf helper imports a product package.
func TestLeafHelpersStayLeaves(t *testing.T) {
	t.Parallel()
	code, _ := imports(t)
	entries, err := os.ReadDir("internal")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		t.Fatal("internal/ is empty")
	}
	for dir, deps := range code {
		if l, _ := floor(dir); l != 1 {
			continue
		}
		for to := range deps {
			if l, _ := floor(to); l != 1 {
				t.Errorf("%s imports %s: a leaf helper imports only the standard library, third-party packages and other leaf helpers", dir, to)
			}
		}
	}
}
