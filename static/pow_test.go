package static

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestPowAssets(t *testing.T) {
	p := mustNew(t, summer())
	solver, worker := p.PowAssets()
	hash := strings.TrimSuffix(strings.TrimPrefix(solver, "pow."), ".js")
	if !regexp.MustCompile(`^pow\.[0-9a-f]{16}\.js$`).MatchString(solver) || worker != "pow-worker."+hash+".js" {
		t.Fatalf("PowAssets() = %s, %s; want pow.<hash>.js and pow-worker.<hash>.js with one hash", solver, worker)
	}
	// The solver's file carries client.js after pow.js.
	for _, c := range []struct {
		name string
		srcs []string
	}{{solver, []string{"pow.js", "client.js"}}, {worker, []string{"pow-worker.js"}}} {
		body, ct, ok := p.Asset([]byte(c.name))
		if !ok {
			t.Fatalf("Asset(%s) missing; names %v", c.name, p.AssetNames())
		}
		if ct != "text/javascript; charset=utf-8" {
			t.Errorf("%s: content type %s", c.name, ct)
		}
		var src [][]byte
		for _, name := range c.srcs {
			b, err := webFS.ReadFile("web/" + name)
			if err != nil {
				t.Fatal(err)
			}
			src = append(src, b)
		}
		if !bytes.Equal(body, compactJS(bytes.Join(src, []byte("\n")))) {
			t.Errorf("%s is not web/%s compacted", c.name, strings.Join(c.srcs, " + web/"))
		}
	}
	simd, scalar := p.PowWasmAssets()
	if simd != "pow-simd."+hash+".wasm" || scalar != "pow-scalar."+hash+".wasm" {
		t.Fatalf("PowWasmAssets() = %s, %s; want pow-simd.%[3]s.wasm and pow-scalar.%[3]s.wasm", simd, scalar, hash)
	}
	for _, c := range []struct{ name, src string }{{simd, "pow-simd.wasm"}, {scalar, "pow-scalar.wasm"}} {
		body, ct, ok := p.Asset([]byte(c.name))
		if !ok {
			t.Fatalf("Asset(%s) missing; names %v", c.name, p.AssetNames())
		}
		if ct != "application/wasm" {
			t.Errorf("%s: content type %s", c.name, ct)
		}
		src, err := webFS.ReadFile("web/" + c.src)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(body, src) || !bytes.HasPrefix(body, []byte("\x00asm")) {
			t.Errorf("%s is not web/%s", c.name, c.src)
		}
	}
	var files [][]byte
	for _, name := range []string{solver, worker, simd, scalar} {
		b, _, _ := p.Asset([]byte(name))
		files = append(files, b)
	}
	if powHash(files...) != hash {
		t.Errorf("%s: the hash does not match the contents", solver)
	}
	// The hash covers every file and where one ends.
	s, w := files[0], files[1]
	if powHash(files...) == powHash(append(bytes.Clone(s), w[0]), w[1:], files[2], files[3]) {
		t.Error("powHash does not depend on where the files end")
	}
	for i := range files {
		changed := slices.Clone(files)
		changed[i] = append(bytes.Clone(files[i]), ' ')
		if powHash(changed...) == hash {
			t.Errorf("powHash does not depend on file %d", i)
		}
	}
}

// The room page's script finds the solver's URLs in its configuration,
// and templates have them too.
func TestPowURLsInPage(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "room.html"), []byte(`<p>{{.PowJSURL}} {{.PowWorkerURL}}</p><script type="application/json" id="wr-config">{{.Config}}</script>`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := mustNew(t, summer(), PageConfig{Event: "fest", Prefix: "/q", TemplateDir: dir})
	solver, worker := p.PowAssets()
	for _, c := range []struct{ event, prefix string }{{"summer", "/_wr"}, {"fest", "/q"}} {
		page := p.Room(c.event, nil)
		m := regexp.MustCompile(`id="wr-config">(.*?)</script>`).FindSubmatch(page)
		if m == nil {
			t.Fatalf("%s: no #wr-config", c.event)
		}
		var cfg ScriptConfig
		if err := json.Unmarshal(m[1], &cfg); err != nil {
			t.Fatalf("%s: %v", c.event, err)
		}
		if cfg.PowJS != c.prefix+"/static/"+solver || cfg.PowWorker != c.prefix+"/static/"+worker {
			t.Errorf("%s: pow_js %q, pow_worker %q", c.event, cfg.PowJS, cfg.PowWorker)
		}
	}
	if want := "<p>/q/static/" + solver + " /q/static/" + worker + "</p>"; !bytes.Contains(p.Room("fest", nil), []byte(want)) {
		t.Errorf("the template's PowJSURL and PowWorkerURL are not %s", want)
	}
}

// The page may start the solver's worker from its own origin, and nothing
// else; the room page may compile WebAssembly, and no other page
// (pow_browser_test.go checks that Chromium agrees).
func TestPowCSP(t *testing.T) {
	p := mustNew(t, summer())
	for _, c := range []struct {
		name, csp string
		wasm      bool
	}{{"CSP", p.CSP(), false}, {"RoomCSP", p.RoomCSP("summer"), true}} {
		if !strings.Contains(c.csp, "; worker-src 'self';") {
			t.Errorf("%s does not allow same-origin workers: %s", c.name, c.csp)
		}
		csp := c.csp
		if c.wasm {
			script := regexp.MustCompile(`script-src [^;]* 'wasm-unsafe-eval';`)
			if !script.MatchString(csp) {
				t.Errorf("%s does not allow WebAssembly in script-src: %s", c.name, csp)
			}
			csp = strings.Replace(csp, " 'wasm-unsafe-eval'", "", 1)
		}
		for _, bad := range []string{"blob:", "data:", "unsafe", "*"} {
			if strings.Contains(csp, bad) {
				t.Errorf("%s allows %s: %s", c.name, bad, c.csp)
			}
		}
	}
}

// compactJS is only safe without multi-line literals (see TestCompactJS).
func TestPowScriptsCompactable(t *testing.T) {
	for _, name := range []string{"pow.js", "pow-worker.js"} {
		src, err := webFS.ReadFile("web/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.ContainsRune(src, '`') {
			t.Errorf("%s has a template literal: compactJS may break it", name)
		}
		if bytes.Contains(src, []byte("/*")) {
			t.Errorf("%s has a block comment: compactJS keeps it (use // comments)", name)
		}
	}
}
