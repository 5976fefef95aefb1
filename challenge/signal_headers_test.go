package challenge

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
)

// hdrReq builds a request from "Name: value" lines in wire order.
func hdrReq(head string) *Request {
	r := &Request{}
	for _, line := range strings.Split(strings.TrimSpace(head), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		// Pseudo-headers start with ':' and have another after the name.
		i := strings.Index(line[1:], ":") + 1
		r.Headers = append(r.Headers, Header{Name: line[:i], Value: strings.TrimSpace(line[i+1:])})
	}
	return r
}

// Real browsers' join requests: a fetch() POST from the waiting-room page.
const (
	hdrChromeH1 = `
Host: shop.example
Connection: keep-alive
Content-Length: 2
sec-ch-ua-platform: "Windows"
User-Agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36
sec-ch-ua: "Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"
Content-Type: application/json
sec-ch-ua-mobile: ?0
Accept: */*
Origin: https://shop.example
Sec-Fetch-Site: same-origin
Sec-Fetch-Mode: cors
Sec-Fetch-Dest: empty
Referer: https://shop.example/
Accept-Encoding: gzip, deflate, br, zstd
Accept-Language: en-US,en;q=0.9
Cookie: wr=abc`
	hdrChromeH2 = `
:method: POST
:authority: shop.example
:scheme: https
:path: /_wr/join
content-length: 2
sec-ch-ua-platform: "macOS"
user-agent: Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36
sec-ch-ua: "Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"
content-type: application/json
sec-ch-ua-mobile: ?0
accept: */*
origin: https://shop.example
sec-fetch-site: same-origin
sec-fetch-mode: cors
sec-fetch-dest: empty
referer: https://shop.example/
accept-encoding: gzip, deflate, br, zstd
accept-language: de-DE,de;q=0.9,en;q=0.8
priority: u=1, i`
	hdrEdge = `
Host: shop.example
Connection: keep-alive
Content-Length: 2
sec-ch-ua-platform: "Windows"
User-Agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0
sec-ch-ua: "Microsoft Edge";v="131", "Chromium";v="131", "Not_A Brand";v="24"
Content-Type: application/json
sec-ch-ua-mobile: ?0
Accept: */*
Origin: https://shop.example
Sec-Fetch-Site: same-origin
Sec-Fetch-Mode: cors
Sec-Fetch-Dest: empty
Referer: https://shop.example/
Accept-Encoding: gzip, deflate, br, zstd
Accept-Language: en-GB,en;q=0.9`
	hdrChromeAndroid = `
Host: shop.example
Connection: keep-alive
Content-Length: 2
sec-ch-ua-platform: "Android"
User-Agent: Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36
sec-ch-ua: "Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"
Content-Type: application/json
sec-ch-ua-mobile: ?1
Accept: */*
Origin: https://shop.example
Sec-Fetch-Site: same-origin
Sec-Fetch-Mode: cors
Sec-Fetch-Dest: empty
Referer: https://shop.example/
Accept-Encoding: gzip, deflate, br, zstd
Accept-Language: fr-FR,fr;q=0.9`
	hdrAndroidWebView = `
Host: shop.example
Connection: keep-alive
Content-Length: 2
User-Agent: Mozilla/5.0 (Linux; Android 13; Pixel 7 Build/TQ3A.230805.001; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.39 Mobile Safari/537.36
Content-Type: application/json
Accept: */*
Origin: https://shop.example
X-Requested-With: com.example.app
Sec-Fetch-Site: same-origin
Sec-Fetch-Mode: cors
Sec-Fetch-Dest: empty
Referer: https://shop.example/
Accept-Encoding: gzip, deflate, br, zstd
Accept-Language: en-US,en;q=0.9`
	hdrFirefox = `
Host: shop.example
User-Agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0
Accept: */*
Accept-Language: en-US,en;q=0.5
Accept-Encoding: gzip, deflate, br, zstd
Referer: https://shop.example/
Content-Type: application/json
Content-Length: 2
Origin: https://shop.example
Connection: keep-alive
Cookie: wr=abc
Sec-Fetch-Dest: empty
Sec-Fetch-Mode: cors
Sec-Fetch-Site: same-origin
Priority: u=0`
	hdrSafari = `
:method: POST
:scheme: https
:path: /_wr/join
:authority: shop.example
content-type: application/json
accept: */*
sec-fetch-site: same-origin
origin: https://shop.example
sec-fetch-mode: cors
user-agent: Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15
referer: https://shop.example/
content-length: 2
sec-fetch-dest: empty
accept-language: en-GB,en;q=0.9
priority: u=3, i
accept-encoding: gzip, deflate, br`
	hdrChromeIOS = `
Host: shop.example
Content-Type: application/json
Accept: */*
Sec-Fetch-Site: same-origin
Accept-Language: en-GB,en;q=0.9
Sec-Fetch-Mode: cors
Accept-Encoding: gzip, deflate, br
Origin: https://shop.example
User-Agent: Mozilla/5.0 (iPhone; CPU iPhone OS 17_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1
Referer: https://shop.example/
Content-Length: 2
Connection: keep-alive
Sec-Fetch-Dest: empty`
)

func TestHeaderSignalBrowsers(t *testing.T) {
	s, err := NewHeaderSignal(HeaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, head := range map[string]string{
		"chrome h1": hdrChromeH1, "chrome h2": hdrChromeH2, "edge": hdrEdge,
		"chrome android": hdrChromeAndroid, "android webview": hdrAndroidWebView,
		"firefox": hdrFirefox, "safari h2": hdrSafari, "chrome ios": hdrChromeIOS,
	} {
		t.Run(name, func(t *testing.T) {
			r := hdrReq(head)
			if fs := s.Findings(r); len(fs) != 0 {
				t.Errorf("findings for a real browser: %+v", fs)
			}
			if f, _ := s.Check(context.Background(), r); f != (Finding{}) {
				t.Errorf("Check = %+v, want nothing", f)
			}
		})
	}
}

// edit changes a header set: delete lines naming a header, or replace
// whole lines.
func hdrEdit(head string, drop []string, replace map[string]string) string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(head), "\n") {
		name := strings.ToLower(line[:strings.Index(line[1:], ":")+1])
		if slices.Contains(drop, name) {
			continue
		}
		if r, ok := replace[name]; ok {
			line = r
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

func hdrMove(head, name string, to int) string {
	lines := strings.Split(strings.TrimSpace(head), "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.ToLower(l), name+":") {
			lines = slices.Delete(lines, i, i+1)
			lines = slices.Insert(lines, to, l)
			break
		}
	}
	return strings.Join(lines, "\n")
}

func TestHeaderSignalFindings(t *testing.T) {
	const chromeUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	tests := []struct {
		name string
		opts HeaderOptions
		head string
		want []string // reasons, in order
	}{
		{"curl", HeaderOptions{}, "Host: shop.example\nUser-Agent: curl/8.5.0\nAccept: */*\nContent-Type: application/json\nContent-Length: 2",
			[]string{ReasonUATool}},
		{"python-requests", HeaderOptions{}, "Host: shop.example\nUser-Agent: python-requests/2.31.0\nAccept-Encoding: gzip, deflate\nAccept: */*\nConnection: keep-alive",
			[]string{ReasonUATool}},
		{"Go", HeaderOptions{}, "Host: shop.example\nUser-Agent: Go-http-client/1.1\nContent-Length: 2\nAccept-Encoding: gzip",
			[]string{ReasonUATool}},
		{"node fetch (undici), as captured", HeaderOptions{},
			"host: localhost:35105\nconnection: keep-alive\naccept: */*\naccept-language: *\nsec-fetch-mode: cors\nuser-agent: node\naccept-encoding: gzip, deflate",
			[]string{ReasonUATool}},
		{"node as a word is not the tool", HeaderOptions{}, strings.Replace(hdrChromeH1, "Safari/537.36", "Safari/537.36 NodeBrowser/1", 1), nil},
		{"tool name in any case", HeaderOptions{}, "Host: x\nUser-Agent: PostmanRuntime/7.36.0\nAccept-Language: en\nAccept-Encoding: br", []string{ReasonUATool}},
		{"extra tool", HeaderOptions{ExtraTools: []string{"ShopBot"}}, strings.Replace(hdrChromeH1, "Safari/537.36", "Safari/537.36 shopbot/2", 1),
			[]string{ReasonUATool}},
		{"headless UA", HeaderOptions{}, strings.Replace(hdrChromeH1, "Chrome/131", "HeadlessChrome/131", 1), []string{ReasonUAHeadless}},
		{"headless in client hints", HeaderOptions{}, strings.Replace(hdrChromeH1, `"Google Chrome";v="131"`, `"HeadlessChrome";v="131"`, 1),
			[]string{ReasonUAHeadless}},
		{"no user agent", HeaderOptions{}, hdrEdit(hdrChromeH1, []string{"user-agent"}, nil), []string{ReasonUAMissing}},
		{"chrome UA from requests", HeaderOptions{},
			"Host: shop.example\nUser-Agent: " + chromeUA + "\nAccept-Encoding: gzip, deflate\nAccept: */*\nConnection: keep-alive\nContent-Length: 2",
			[]string{ReasonChromeWithoutClientHints, ReasonChromeWithoutFetchMetadata, ReasonMissingAcceptLanguage}},
		{"chrome without sec-ch-ua-platform", HeaderOptions{}, hdrEdit(hdrChromeH1, []string{"sec-ch-ua-platform"}, nil),
			[]string{ReasonChromeWithoutClientHints}},
		{"chrome 92 needs no platform", HeaderOptions{},
			strings.ReplaceAll(hdrEdit(hdrChromeH1, []string{"sec-ch-ua-platform"}, nil), "131", "92"), nil},
		{"chrome 88 sends no hints", HeaderOptions{},
			strings.ReplaceAll(hdrEdit(hdrChromeH1, []string{"sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform"}, nil), "131", "88"), nil},
		{"chrome 79 sends no fetch metadata", HeaderOptions{},
			strings.ReplaceAll(hdrEdit(hdrChromeH1, []string{"sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform", "sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest"}, nil), "131", "79"), nil},
		{"chrome without one fetch header", HeaderOptions{}, hdrEdit(hdrChromeH1, []string{"sec-fetch-dest"}, nil),
			[]string{ReasonChromeWithoutFetchMetadata}},
		{"plain http excuses hints and fetch metadata", HeaderOptions{PlainHTTP: true},
			hdrEdit(hdrChromeH1, []string{"sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform", "sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest"}, nil), nil},
		{"firefox without fetch metadata", HeaderOptions{}, hdrEdit(hdrFirefox, []string{"sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest"}, nil),
			[]string{ReasonFirefoxWithoutFetchMetadata}},
		{"firefox with client hints", HeaderOptions{}, hdrFirefox + "\nsec-ch-ua: \"Chromium\";v=\"131\"", []string{ReasonFirefoxWithClientHints}},
		{"safari with client hints", HeaderOptions{}, hdrSafari + "\nsec-ch-ua: \"Chromium\";v=\"131\"", []string{ReasonSafariWithClientHints}},
		{"hints version mismatch", HeaderOptions{}, strings.Replace(hdrChromeH1, `"Chromium";v="131"`, `"Chromium";v="120"`, 1),
			[]string{ReasonClientHintsMismatch}},
		{"hints malformed", HeaderOptions{}, hdrEdit(hdrChromeH1, nil, map[string]string{"sec-ch-ua": "sec-ch-ua: Chromium 131"}),
			[]string{ReasonClientHintsMalformed}},
		{"hints unterminated", HeaderOptions{}, hdrEdit(hdrChromeH1, nil, map[string]string{"sec-ch-ua": `sec-ch-ua: "Chromium";v="131`}),
			[]string{ReasonClientHintsMalformed}},
		{"hints empty", HeaderOptions{}, hdrEdit(hdrChromeH1, nil, map[string]string{"sec-ch-ua": `sec-ch-ua:`}),
			[]string{ReasonClientHintsMalformed}},
		{"missing accept-language", HeaderOptions{}, hdrEdit(hdrChromeH1, []string{"accept-language"}, nil), []string{ReasonMissingAcceptLanguage}},
		{"missing accept-encoding", HeaderOptions{}, hdrEdit(hdrFirefox, []string{"accept-encoding"}, nil), []string{ReasonMissingAcceptEncoding}},
		{"host last", HeaderOptions{}, hdrMove(hdrChromeH1, "host", 16), []string{ReasonHeaderOrder}},
		{"host last, order ignored", HeaderOptions{IgnoreOrder: true}, hdrMove(hdrChromeH1, "host", 16), nil},
		{"connection close first", HeaderOptions{},
			"Connection: close\n" + hdrEdit(hdrChromeH1, []string{"connection"}, nil), []string{ReasonHeaderOrder, ReasonConnectionClose}},
		{"connection close, order ignored", HeaderOptions{IgnoreOrder: true},
			"Connection: close\n" + hdrEdit(hdrChromeH1, []string{"connection"}, nil), nil},
		{"chrome: accept-language before accept-encoding", HeaderOptions{}, hdrMove(hdrChromeH1, "accept-language", 3), []string{ReasonHeaderOrder}},
		{"chrome: user-agent after accept-encoding", HeaderOptions{}, hdrMove(hdrChromeH1, "user-agent", 16), []string{ReasonHeaderOrder}},
		{"chrome: fetch metadata reversed", HeaderOptions{}, hdrMove(hdrChromeH1, "sec-fetch-dest", 10), []string{ReasonHeaderOrder}},
		{"firefox: user-agent not first", HeaderOptions{}, hdrMove(hdrFirefox, "user-agent", 3), []string{ReasonHeaderOrder}},
		{"firefox: accept-encoding before accept-language", HeaderOptions{}, hdrMove(hdrFirefox, "accept-encoding", 2), []string{ReasonHeaderOrder}},
		{"unknown client: host rule only", HeaderOptions{}, "Accept-Language: en\nAccept-Encoding: br\nUser-Agent: SomethingNew/1.0\nHost: x",
			[]string{ReasonHeaderOrder}},
		{"unknown client, good order", HeaderOptions{}, "Host: x\nUser-Agent: SomethingNew/1.0\nAccept-Encoding: br\nAccept-Language: en", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewHeaderSignal(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			r := hdrReq(tt.head)
			fs := s.Findings(r)
			var got []string
			for _, f := range fs {
				got = append(got, f.Reason)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("findings %v, want %v", got, tt.want)
			}
			// Check combines them: 1 − Π(1 − s), the strongest's reason.
			f, err := s.Check(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			clean, best := 1.0, Finding{}
			for _, x := range fs {
				clean *= 1 - x.Suspicion
				if x.Suspicion > best.Suspicion {
					best = x
				}
			}
			if math.Abs(f.Suspicion-(1-clean)) > 1e-12 || f.Reason != best.Reason {
				t.Errorf("Check = %+v, want suspicion %v reason %q", f, 1-clean, best.Reason)
			}
			if f.Suspicion < 0 || f.Suspicion > 1 {
				t.Errorf("suspicion %v out of range", f.Suspicion)
			}
		})
	}
}

func TestNewHeaderSignalInvalid(t *testing.T) {
	for _, extra := range [][]string{{""}, {"ok", "bad\x00"}, {"tab\tinside"}} {
		if _, err := NewHeaderSignal(HeaderOptions{ExtraTools: extra}); err == nil {
			t.Errorf("ExtraTools %q accepted", extra)
		}
	}
}

func TestParseBrands(t *testing.T) {
	tests := []struct {
		in       string
		headless bool
		chromium int
		ok       bool
	}{
		{`"Google Chrome";v="131", "Chromium";v="131", "Not_A Brand";v="24"`, false, 131, true},
		{`"Not)A;Brand";v="99", "Microsoft Edge";v="127", "Chromium";v="127"`, false, 127, true},
		{`"Chromium";v="131"`, false, 131, true},
		{`"HeadlessChrome";v="131", "Chromium";v="131"`, true, 131, true},
		{`"Brave";v="131";x="y", "Chromium";v="131"`, false, 131, true},
		{`"Opera";v="114"`, false, 0, true},
		{``, false, 0, false},
		{`Chromium`, false, 0, false},
		{`"Chromium";v=131`, false, 0, false},
		{`"Chromium";v="131",`, false, 0, false},
		{`"Chromium" "Edge"`, false, 0, false},
		{`"Chro\"mium";v="1"`, false, 0, false},
	}
	for _, tt := range tests {
		h, c, ok := parseBrands(tt.in)
		if h != tt.headless || c != tt.chromium || ok != tt.ok {
			t.Errorf("parseBrands(%q) = %v, %d, %v; want %v, %d, %v", tt.in, h, c, ok, tt.headless, tt.chromium, tt.ok)
		}
	}
}

// FuzzHeaderSignal: headers are the client's to choose; the signal must
// never panic and must stay within 0..1 with a reason when suspicious.
func FuzzHeaderSignal(f *testing.F) {
	f.Add(hdrChromeH1)
	f.Add(hdrFirefox)
	f.Add(hdrSafari)
	f.Add("User-Agent: curl/8\nsec-ch-ua: \"")
	f.Add("sec-ch-ua: \"Chromium\";v=\"99999999999999\"\nUser-Agent: Chrome/99999999999999999")
	s, err := NewHeaderSignal(HeaderOptions{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, head string) {
		r := &Request{}
		for _, line := range strings.Split(head, "\n") {
			name, value, _ := strings.Cut(line, ":")
			r.Headers = append(r.Headers, Header{Name: name, Value: value})
		}
		got, err := s.Check(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if !(got.Suspicion >= 0 && got.Suspicion <= 1) || (got.Suspicion > 0) != (got.Reason != "") {
			t.Fatalf("Check = %+v", got)
		}
	})
}
