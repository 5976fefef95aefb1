package static

import (
	"html"
	"regexp"
	"strings"
	"testing"
	"time"
)

var metaRe = regexp.MustCompile(`<meta (?:property|name)="([^"]+)" content="([^"]*)">`)

// headMeta returns the page head's named meta tags, unescaped.
func headMeta(t *testing.T, page []byte) map[string]string {
	t.Helper()
	head, _, ok := strings.Cut(string(page), "</head>")
	if !ok {
		t.Fatal("no </head>")
	}
	out := map[string]string{}
	for _, m := range metaRe.FindAllStringSubmatch(head, -1) {
		if _, dup := out[m[1]]; dup {
			t.Fatalf("meta %s twice", m[1])
		}
		out[m[1]] = html.UnescapeString(m[2])
	}
	return out
}

func TestOpenGraph(t *testing.T) {
	name := `Tom & "Jerry" <Live> 'n' more`
	for _, c := range []struct {
		desc string
		cfg  PageConfig
		want map[string]string // "" means absent
	}{
		{"public url and a same-site logo", PageConfig{Event: "tj", Name: name, PublicURL: "https://tickets.example.com",
			LogoURL: "/img/logo.png", JoinPath: "/events/tj?a=1&b=2"}, map[string]string{
			"og:title": name, "twitter:title": name, "og:type": "website", "twitter:card": "summary",
			"og:url": "https://tickets.example.com/events/tj?a=1&b=2", "og:image": "https://tickets.example.com/img/logo.png"}},
		{"a trailing slash on the public url", PageConfig{Event: "tj", PublicURL: "https://tickets.example.com/"}, map[string]string{
			"og:title": "tj", "og:url": "https://tickets.example.com/", "og:image": ""}},
		{"no public url: no og:url, an https logo as it is", PageConfig{Event: "tj", LogoURL: "https://cdn.example.com/l.svg"}, map[string]string{
			"og:url": "", "og:image": "https://cdn.example.com/l.svg"}},
		{"no public url, same-site logo: no og:image", PageConfig{Event: "tj", LogoURL: "/l.svg"}, map[string]string{
			"og:url": "", "og:image": ""}},
	} {
		t.Run(c.desc, func(t *testing.T) {
			p := mustNew(t, c.cfg)
			for _, lang := range Languages() {
				m := headMeta(t, p.Room("tj", []byte(lang)))
				for k, want := range c.want {
					if got, ok := m[k]; want == "" && ok || want != "" && got != want {
						t.Errorf("%s: %s = %q (present %v), want %q", lang, k, got, ok, want)
					}
				}
				desc, _ := BuiltinText(lang, "og_description")
				if m["og:description"] != desc || m["twitter:description"] != desc || m["description"] != desc {
					t.Errorf("%s: descriptions %q %q %q, want %q", lang, m["og:description"], m["twitter:description"], m["description"], desc)
				}
			}
		})
	}
	// The name cannot break out of the attribute.
	page := string(mustNew(t, PageConfig{Event: "tj", Name: name}).Room("tj", nil))
	if strings.Contains(page, `content="Tom & "Jerry"`) || strings.Contains(page, "<Live>") {
		t.Error("the name is not escaped in the head")
	}
}

func TestPublicURLValidation(t *testing.T) {
	for _, u := range []string{"tickets.example.com", "ftp://x.example", "https://x.example/path", "https://u:p@x.example",
		"https://x.example?q", "https://x.example#f", `https://x.example"onload`, "https://", "javascript:alert(1)"} {
		if _, err := New([]PageConfig{{Event: "e", PublicURL: u}}); err == nil || !strings.Contains(err.Error(), "public_url") {
			t.Errorf("public url %q: %v", u, err)
		}
	}
	for _, u := range []string{"https://x.example", "http://127.0.0.1:8080", "https://x.example/"} {
		if _, err := New([]PageConfig{{Event: "e", PublicURL: u}}); err != nil {
			t.Errorf("public url %q: %v", u, err)
		}
	}
}

func TestNoScriptBlock(t *testing.T) {
	p := mustNew(t, PageConfig{Event: "open", NoJSJoin: true, Prefix: "/.well-known/wr"}, PageConfig{Event: "guarded"})
	open := string(p.Room("open", nil))
	ns := open[strings.LastIndex(open, "<noscript>"):strings.LastIndex(open, "</noscript>")]
	for _, want := range []string{`<form id="wr-nojs-join" method="post" action="/.well-known/wr/nojs/join">`,
		`<input type="hidden" name="event" value="open">`, "Join the queue</button>"} {
		if !strings.Contains(ns, want) {
			t.Errorf("the noscript block lacks %q:\n%s", want, ns)
		}
	}
	guarded := string(p.Room("guarded", []byte("de")))
	ns = guarded[strings.LastIndex(guarded, "<noscript>"):strings.LastIndex(guarded, "</noscript>")]
	if strings.Contains(ns, "<form") || !strings.Contains(ns, "JavaScript ein") {
		t.Errorf("the page of an event that needs JavaScript:\n%s", ns)
	}
}

func TestNoJSPage(t *testing.T) {
	p := mustNew(t, PageConfig{Event: "show", Name: "The <Show>", NoJSJoin: true, PositionDisplay: PositionApproximate})
	if p.NoJS("nope", nil, &NoJSState{Kind: "waiting"}) != nil {
		t.Fatal("a page for an unknown event")
	}
	for _, c := range []struct {
		name  string
		lang  string
		s     NoJSState
		want  []string
		never []string
	}{
		{"waiting", "en", NoJSState{Kind: "waiting", Position: 4812, ETASeconds: 900, ETALow: 600, ETAHigh: 1500, Refresh: 7},
			[]string{`<meta http-equiv="refresh" content="7">`, "You&#39;re in the queue", "4,812 people ahead of you",
				"about 10–25 minutes", "reloads by itself every 7 seconds", "<title>You&#39;re in the queue · The &lt;Show&gt;</title>"},
			[]string{"<form", "<script"}},
		{"approximate, german", "de", NoJSState{Kind: "waiting", Position: 48000, Approximate: true, ETASeconds: -1, Refresh: 5},
			[]string{"etwa 48.000", "wird geschätzt"}, nil},
		{"next", "en", NoJSState{Kind: "waiting", Position: 0, ETASeconds: 20, ETALow: 10, ETAHigh: 30, Refresh: 1},
			[]string{"You&#39;re next", "less than a minute", `content="1"`}, nil},
		{"one ahead", "en", NoJSState{Kind: "paused", Position: 1, ETASeconds: 90, ETALow: 60, ETAHigh: 119, Refresh: 5},
			[]string{"1 person ahead of you", "about 1–2 minutes", "The queue is paused"}, nil},
		{"hidden position", "en", NoJSState{Kind: "waiting", Position: -1, ETASeconds: 7200, ETALow: 7200, ETAHigh: 10000, Refresh: 5},
			[]string{"about 2–3 hours"}, []string{"ahead of you"}},
		{"prequeue", "es", NoJSState{Kind: "prequeue", Position: -1, Refresh: 5}, []string{"precola"}, []string{"<form"}},
		{"no place", "en", NoJSState{Kind: NoJSJoin, Return: `/show/a?b=1&c="x"`},
			[]string{`<form id="wr-nojs-join" method="post" action="/_wr/nojs/join">`, `name="return" value="/show/a?b=1&amp;c=&#34;x&#34;"`,
				"allow cookies"}, []string{"http-equiv"}},
		{"session ended", "en", NoJSState{Kind: "closed", Reason: "session_ended", Return: "/show/"},
			[]string{"Your place has expired", "<form"}, []string{"http-equiv"}},
		{"scheduled", "en", NoJSState{Kind: "scheduled", OpensAt: time.Date(2027, 3, 1, 9, 30, 0, 0, time.FixedZone("x", 3600)), Refresh: 30, Return: "/show/"},
			[]string{"The queue opens at 2027-03-01 08:30 UTC", "<form", `content="30"`}, nil},
		{"open now", "de", NoJSState{Kind: NoJSOpen, Return: "/show/"}, []string{"Die Warteschlange ist offen", "<form"}, []string{"http-equiv"}},
		{"sold out", "en", NoJSState{Kind: "sold_out"}, []string{"Sold out"}, []string{"<form", "http-equiv"}},
		{"scripts needed", "en", NoJSState{Kind: NoJSScripts}, []string{"JavaScript is needed", "turn JavaScript on"}, []string{"<form"}},
		{"slow down", "en", NoJSState{Kind: NoJSSlowDown, Refresh: 9}, []string{"Too many requests", `content="9"`}, nil},
		{"refresh bounded", "en", NoJSState{Kind: NoJSError, Refresh: 1 << 20}, []string{`content="300"`}, nil},
		{"unknown kind", "en", NoJSState{Kind: "weird"}, []string{"Something went wrong"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			page := string(p.NoJS("show", []byte(c.lang), &c.s))
			for _, w := range c.want {
				if !strings.Contains(page, w) {
					t.Errorf("lacks %q", w)
				}
			}
			for _, w := range c.never {
				if strings.Contains(page, w) {
					t.Errorf("has %q", w)
				}
			}
			if t.Failed() {
				t.Log(page)
			}
		})
	}
}

func TestFormatInt(t *testing.T) {
	for _, c := range []struct {
		lang string
		n    int64
		want string
	}{
		{"en", 0, "0"}, {"en", 999, "999"}, {"en", 1000, "1,000"}, {"en", 1234567, "1,234,567"}, {"en", -4812, "-4,812"},
		{"de", 4812, "4.812"}, {"es", 4812, "4812"}, {"es", 48120, "48.120"}, {"xx", 48120, "48120"},
		{"fr", 4812, "4\u202f812"}, {"sv", 4812, "4\u00a0812"}, {"pl", 4812, "4812"}, {"pl", 48120, "48\u00a0120"},
		{"it", 4812, "4812"}, {"it", 48120, "48.120"}, {"pt", 4812, "4.812"}, {"ar", 4812, "4,812"}, {"ja", 4812, "4,812"},
	} {
		if got := formatInt(c.lang, c.n); got != c.want {
			t.Errorf("formatInt(%s, %d) = %q, want %q", c.lang, c.n, got, c.want)
		}
	}
}
