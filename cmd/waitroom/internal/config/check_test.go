package config

import (
	"strings"
	"testing"
)

// TestCheckFixtures: Check reports every problem of each
// testdata/check/*.yaml at once, parse and validation problems together
// in line order, as in its .err file, without a secret from the
// environment.
func TestCheckFixtures(t *testing.T) {
	t.Parallel()
	eachFixture(t, "testdata/check", func(t *testing.T, file string, data []byte) {
		c, err := CheckData(data, lookupIn(fixtureEnv), RoleProxy)
		err = InFile(file, err)
		if err == nil || c != nil {
			t.Fatalf("want problems and no config, got %v, %v", c, err)
		}
		text := err.Error()
		if strings.Contains(envRef.ReplaceAllString(text, ""), "SECRET-") {
			t.Errorf("a secret from the environment leaks into the error:\n%s", text)
		}
		last := 0
		for _, p := range Problems(err) {
			if p.File != file || p.Path == "" && p.Line == 0 {
				t.Errorf("problem without its place: %+v", p)
			}
			if p.Line != 0 && (p.Line < last || last == -1) {
				t.Errorf("out of line order: %v", p)
			}
			if p.Line == 0 {
				last = -1
			} else {
				last = p.Line
			}
		}
		golden(t, strings.TrimSuffix(file, ".yaml")+".err", []byte(text+"\n"))
	})
}

// TestCheckAgreesWithLoad: for a valid file Check returns what Load does;
// for a file Parse accepts, Check finds what Validate finds (with lines).
func TestCheckAgreesWithLoad(t *testing.T) {
	t.Setenv("WAITROOM_SIGNING_SECRET", fixtureEnv["WAITROOM_SIGNING_SECRET"])
	t.Setenv("WAITROOM_ADMIN_TOKEN", fixtureEnv["WAITROOM_ADMIN_TOKEN"])
	t.Setenv("WAITROOM_CHALLENGE_SECRET", fixtureEnv["WAITROOM_CHALLENGE_SECRET"])
	file := "../../../../configs/minimal.yaml"
	c, err := Check(file, RoleProxy)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	deq(t, c, l)

	c, err = CheckData([]byte("log: {level: loud}\ninventory:\n  store: memory\n"), nil, 0)
	if c != nil {
		t.Fatal("a config with problems")
	}
	var got []string
	for _, p := range Problems(err) {
		got = append(got, p.Error())
	}
	deq(t, got, []string{
		`line 1: log.level: must be debug, info, warn or error (got "loud")`,
		"line 2: inventory.api_token: set inventory.api_token (e.g. from ${WAITROOM_INVENTORY_TOKEN}) or insecure_no_auth: true",
		`line 3: inventory.store: must be embedded or redis (got "memory")`,
	})

	// A syntax error stops everything: there is no document to go on with.
	_, err = CheckData([]byte("a: [\n"), nil, 0)
	if ps := Problems(err); len(ps) != 1 || ps[0].Line == 0 {
		t.Fatalf("syntax error: %v", err)
	}
}

func TestSuggestChoice(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`must be always, threshold or scheduled (got "treshold")`, `must be always, threshold or scheduled (got "treshold"); did you mean threshold?`},
		{`must be exact, approximate or hidden (got "EXAKT")`, `must be exact, approximate or hidden (got "EXAKT"); did you mean exact?`},
		{`must be text or json (got "xml")`, `must be text or json (got "xml")`},
		{`must be text or json (got "")`, `must be text or json (got "")`},
		{`must be more than 0, such as 1s (got 0s)`, `must be more than 0, such as 1s (got 0s)`},
	} {
		if got := suggestChoice(tt.in); got != tt.want {
			t.Errorf("suggestChoice(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
