package challenge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/waitroom/waitroom/internal/ascii"
)

// Reasons of HeaderSignal, stable for metrics.
const (
	// No User-Agent: every browser sends one.
	ReasonUAMissing = "ua_missing"
	// The User-Agent names an HTTP library or automation tool.
	ReasonUATool = "ua_tool"
	// The User-Agent (or the client hints) admit a headless browser.
	ReasonUAHeadless = "ua_headless"
	// A Chromium user agent without the client hints Chromium sends.
	ReasonChromeWithoutClientHints = "chrome_without_client_hints"
	// A Chromium user agent without Sec-Fetch-Site/-Mode/-Dest.
	ReasonChromeWithoutFetchMetadata = "chrome_without_fetch_metadata"
	// A Firefox user agent without Sec-Fetch-Site/-Mode/-Dest.
	ReasonFirefoxWithoutFetchMetadata = "firefox_without_fetch_metadata"
	// A Firefox user agent with Sec-CH-UA, which Firefox never sends.
	ReasonFirefoxWithClientHints = "firefox_with_client_hints"
	// A Safari (WebKit) user agent with Sec-CH-UA, which WebKit never
	// sends.
	ReasonSafariWithClientHints = "safari_with_client_hints"
	// Sec-CH-UA's Chromium version is not the User-Agent's.
	ReasonClientHintsMismatch = "client_hints_mismatch"
	// Sec-CH-UA is not a brand list a browser would send.
	ReasonClientHintsMalformed = "client_hints_malformed"
	// No Accept-Language: browsers send it with every fetch.
	ReasonMissingAcceptLanguage = "missing_accept_language"
	// No Accept-Encoding: browsers send it with every fetch.
	ReasonMissingAcceptEncoding = "missing_accept_encoding"
	// Headers in an order the claimed browser never uses.
	ReasonHeaderOrder = "header_order"
	// "Connection: close" from a browser user agent.
	ReasonConnectionClose = "connection_close"
)

// Suspicion of each HeaderSignal finding. A declared tool or headless
// browser is certain. Missing client hints or fetch metadata from a
// user agent claiming a browser that sends them is near certain (the
// claim is false) but leaves room for odd embedded browsers. A wrong
// order or one missing header is a telltale of hand-built requests, yet
// proxies and extensions can cause it, so it is held to about half.
const (
	suspUAMissing          = 0.9
	suspUATool             = 1.0
	suspHeadless           = 1.0
	suspNoClientHints      = 0.8
	suspNoFetchMetadata    = 0.8
	suspFirefoxNoMetadata  = 0.6
	suspHintsWrongBrowser  = 0.8
	suspHintsMismatch      = 0.7
	suspHintsMalformed     = 0.6
	suspMissingAcceptLang  = 0.5
	suspMissingAcceptEnc   = 0.5
	suspHeaderOrder        = 0.6
	suspConnectionClose    = 0.5
	chromeClientHintsSince = 89 // sec-ch-ua and sec-ch-ua-mobile by default
	chromePlatformSince    = 93 // sec-ch-ua-platform by default
	chromeFetchMetaSince   = 80 // Sec-Fetch-Dest (Site and Mode since 76)
	firefoxFetchMetaSince  = 90
)

// DefaultToolUserAgents are case-insensitive User-Agent substrings of
// HTTP libraries and automation tools that HeaderSignal always knows.
var DefaultToolUserAgents = []string{
	"curl/", "wget/", "python-requests", "python-urllib", "python-httpx",
	"aiohttp", "httpx/", "go-http-client", "okhttp", "java/",
	"java-http-client", "apache-httpclient", "libwww-perl", "lwp::",
	"scrapy", "node-fetch", "axios/", "undici", "got (https://",
	"postmanruntime", "insomnia/", "httpie/", "guzzlehttp", "ruby",
	"faraday", "mechanize", "phantomjs", "selenium", "playwright",
	"puppeteer", "reqwest/", "hyper/", "powershell", "winhttp", "dart:io",
}

// DefaultToolUserAgentsExact are case-insensitive whole User-Agent values
// of tools, too short to look for inside others: Node's fetch (undici)
// sends "node".
var DefaultToolUserAgentsExact = []string{"node"}

// HeaderOptions configures a HeaderSignal.
type HeaderOptions struct {
	// ExtraTools are more case-insensitive User-Agent substrings of tools,
	// besides DefaultToolUserAgents.
	ExtraTools []string
	// PlainHTTP: visitors reach waitroom over plain http:// (not
	// localhost), where browsers send neither client hints nor fetch
	// metadata, so their absence is not held against them.
	PlainHTTP bool
	// IgnoreOrder turns off the checks of header order and of
	// "Connection: close", for when a proxy in front of waitroom rewrites
	// them (nginx's proxy_pass puts Host first and sends
	// "Connection: close" of its own).
	IgnoreOrder bool
}

// HeaderSignal judges whether a request's headers are those of the
// browser its User-Agent claims, from Request.Headers in wire order:
//
//   - no User-Agent, a tool's (DefaultToolUserAgents within it,
//     DefaultToolUserAgentsExact as all of it), or a headless browser's;
//   - a Chromium user agent (a "Chrome/N" token: Chrome, Edge, Opera,
//     Brave, Samsung Internet) without Sec-CH-UA, Sec-CH-UA-Mobile (from
//     89) or Sec-CH-UA-Platform (from 93), except in an Android WebView
//     ("; wv)"), which does not send them by default, or without
//     Sec-Fetch-Site/-Mode/-Dest (from 80); Firefox from 90 without the
//     latter;
//   - Sec-CH-UA from Firefox or Safari (they never send client hints), a
//     brand list naming HeadlessChrome, one whose "Chromium" version is
//     not the User-Agent's Chrome major version, or one that does not
//     parse;
//   - no Accept-Language or Accept-Encoding;
//   - an order no browser uses: Host (when sent; HTTP/2 has :authority
//     instead) not the first header after any pseudo-headers; for a
//     Chromium user agent, User-Agent after Accept-Encoding,
//     Accept-Encoding after Accept-Language, or Sec-Fetch-Site, -Mode and
//     -Dest out of that order or after Accept-Encoding; for Firefox,
//     anything but User-Agent first after Host, or Accept-Encoding before
//     Accept-Language; and "Connection: close" from any browser.
//
// Header values other than the ones named are not judged: the join is a
// fetch() POST, so Sec-Fetch-Mode "cors" and Sec-Fetch-Dest "empty" are
// what a browser sends. Over plain http:// (HeaderOptions.PlainHTTP)
// browsers send no client hints or fetch metadata; behind a proxy that
// rewrites headers, turn the order checks off (HeaderOptions.IgnoreOrder).
//
// The findings combine as independent evidence: suspicion is
// 1 − Π(1 − sᵢ), so two weak findings weigh more than either alone and the
// total never exceeds 1. The Finding's Reason is the strongest finding's
// (the first of equals, in the order above); Findings lists them all.
//
// It is immutable and safe for concurrent use; Check allocates nothing.
type HeaderSignal struct {
	tools       [][]byte
	plainHTTP   bool
	ignoreOrder bool
}

// ErrInvalidHeaderOptions is returned (wrapped) by NewHeaderSignal.
var ErrInvalidHeaderOptions = errors.New("challenge: invalid header signal options")

// NewHeaderSignal returns a HeaderSignal for o. An empty ExtraTools entry,
// or one with control characters, is an error.
func NewHeaderSignal(o HeaderOptions) (*HeaderSignal, error) {
	s := &HeaderSignal{plainHTTP: o.PlainHTTP, ignoreOrder: o.IgnoreOrder}
	var errs []error
	for _, t := range DefaultToolUserAgents {
		s.tools = append(s.tools, ascii.AppendLower(nil, t))
	}
	for i, t := range o.ExtraTools {
		if t == "" || hdrHasCtl(t) {
			errs = append(errs, fmt.Errorf("%w: extra tool %d (%q) must be non-empty printable text", ErrInvalidHeaderOptions, i, t))
			continue
		}
		s.tools = append(s.tools, ascii.AppendLower(nil, t))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

func hdrHasCtl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// Check implements Signal.
func (s *HeaderSignal) Check(_ context.Context, r *Request) (Finding, error) {
	var fs headerFindings
	s.inspect(r, &fs)
	return fs.combine(), nil
}

// Findings returns every finding about r, in the order HeaderSignal's doc
// lists the checks; Check combines them. For logs and tests.
func (s *HeaderSignal) Findings(r *Request) []Finding {
	var fs headerFindings
	s.inspect(r, &fs)
	return append([]Finding(nil), fs.list[:fs.n]...)
}

// headerFindings collects findings without allocating.
type headerFindings struct {
	list [16]Finding
	n    int
}

func (f *headerFindings) add(reason string, s float64) {
	if f.n < len(f.list) {
		f.list[f.n] = Finding{Suspicion: s, Reason: reason}
		f.n++
	}
}

func (f *headerFindings) combine() Finding {
	if f.n == 0 {
		return Finding{}
	}
	clean := 1.0
	best := f.list[0]
	for _, x := range f.list[:f.n] {
		clean *= 1 - x.Suspicion
		if x.Suspicion > best.Suspicion {
			best = x
		}
	}
	return Finding{Suspicion: 1 - clean, Reason: best.Reason}
}

// The headers HeaderSignal looks at, by kind.
type hdrKind uint8

const (
	hOther hdrKind = iota
	hHost
	hUserAgent
	hAcceptLanguage
	hAcceptEncoding
	hConnection
	hSecCHUA
	hSecCHUAMobile
	hSecCHUAPlatform
	hSecFetchSite
	hSecFetchMode
	hSecFetchDest
	hKinds
)

var hdrNames = [hKinds]string{
	hHost: "host", hUserAgent: "user-agent", hAcceptLanguage: "accept-language",
	hAcceptEncoding: "accept-encoding", hConnection: "connection", hSecCHUA: "sec-ch-ua",
	hSecCHUAMobile: "sec-ch-ua-mobile", hSecCHUAPlatform: "sec-ch-ua-platform",
	hSecFetchSite: "sec-fetch-site", hSecFetchMode: "sec-fetch-mode", hSecFetchDest: "sec-fetch-dest",
}

func hdrKindOf(name string) hdrKind {
	for k := hHost; k < hKinds; k++ {
		if ascii.EqualFold(name, hdrNames[k]) {
			return k
		}
	}
	return hOther
}

// uaFamily is a browser family told apart by the User-Agent.
type uaFamily uint8

const (
	famOther uaFamily = iota
	famChromium
	famFirefox
	famWebKit
)

// headerIndex is where each header of interest first appears among the
// regular (non-pseudo) headers, -1 if absent, with its value.
type headerIndex struct {
	pos        [hKinds]int
	val        [hKinds]string
	first      hdrKind // kind of the first regular header
	firstOther hdrKind // kind of the first regular header that is not Host
	anyRegular bool
	anyOther   bool
}

func indexHeaders(hs []Header) headerIndex {
	var x headerIndex
	for k := range x.pos {
		x.pos[k] = -1
	}
	n := 0
	for _, h := range hs {
		if len(h.Name) > 0 && h.Name[0] == ':' {
			continue // HTTP/2 and HTTP/3 pseudo-headers
		}
		k := hdrKindOf(h.Name)
		if !x.anyRegular {
			x.first, x.anyRegular = k, true
		}
		if k != hHost && !x.anyOther {
			x.firstOther, x.anyOther = k, true
		}
		if k != hOther && x.pos[k] < 0 {
			x.pos[k], x.val[k] = n, h.Value
		}
		n++
	}
	return x
}

func (x *headerIndex) has(k hdrKind) bool { return x.pos[k] >= 0 }

// broken reports whether a and b are both present and a comes after b:
// whether the rule "a before b" is broken.
func (x *headerIndex) broken(a, b hdrKind) bool {
	return x.pos[a] >= 0 && x.pos[b] >= 0 && x.pos[a] > x.pos[b]
}

func (s *HeaderSignal) inspect(r *Request, fs *headerFindings) {
	x := indexHeaders(r.Headers)

	// The user agent's claim.
	fam, major := famOther, 0
	if !x.has(hUserAgent) {
		fs.add(ReasonUAMissing, suspUAMissing)
	} else {
		ua := x.val[hUserAgent]
		var buf [256]byte
		lower := ascii.AppendLower(buf[:0], ua)
		for _, t := range DefaultToolUserAgentsExact {
			if ascii.EqualFold(strings.TrimSpace(ua), t) {
				fs.add(ReasonUATool, suspUATool)
				return
			}
		}
		for _, t := range s.tools {
			if bytes.Contains(lower, t) {
				// A declared tool: the rest is moot.
				fs.add(ReasonUATool, suspUATool)
				return
			}
		}
		if bytes.Contains(lower, []byte("headlesschrome")) {
			fs.add(ReasonUAHeadless, suspHeadless)
			return
		}
		fam, major = uaClassify(ua)
	}

	// Client hints and fetch metadata the claimed browser must send.
	secure := !s.plainHTTP
	webView := fam == famChromium && x.has(hUserAgent) && strings.Contains(x.val[hUserAgent], "; wv)")
	if fam == famChromium && secure && !webView && major >= chromeClientHintsSince {
		if !x.has(hSecCHUA) || !x.has(hSecCHUAMobile) || (major >= chromePlatformSince && !x.has(hSecCHUAPlatform)) {
			fs.add(ReasonChromeWithoutClientHints, suspNoClientHints)
		}
	}
	fetchMeta := x.has(hSecFetchSite) && x.has(hSecFetchMode) && x.has(hSecFetchDest)
	if secure && !fetchMeta {
		switch {
		case fam == famChromium && major >= chromeFetchMetaSince:
			fs.add(ReasonChromeWithoutFetchMetadata, suspNoFetchMetadata)
		case fam == famFirefox && major >= firefoxFetchMetaSince:
			fs.add(ReasonFirefoxWithoutFetchMetadata, suspFirefoxNoMetadata)
		}
	}

	// The brand list, when there is one.
	if x.has(hSecCHUA) {
		switch fam {
		case famFirefox:
			fs.add(ReasonFirefoxWithClientHints, suspHintsWrongBrowser)
		case famWebKit:
			fs.add(ReasonSafariWithClientHints, suspHintsWrongBrowser)
		default:
			headless, chromium, ok := parseBrands(x.val[hSecCHUA])
			switch {
			case !ok:
				fs.add(ReasonClientHintsMalformed, suspHintsMalformed)
			case headless:
				fs.add(ReasonUAHeadless, suspHeadless)
			case fam == famChromium && chromium > 0 && chromium != major:
				fs.add(ReasonClientHintsMismatch, suspHintsMismatch)
			}
		}
	}

	if !x.has(hAcceptLanguage) {
		fs.add(ReasonMissingAcceptLanguage, suspMissingAcceptLang)
	}
	if !x.has(hAcceptEncoding) {
		fs.add(ReasonMissingAcceptEncoding, suspMissingAcceptEnc)
	}

	if s.ignoreOrder {
		return
	}
	if orderBroken(&x, fam) {
		fs.add(ReasonHeaderOrder, suspHeaderOrder)
	}
	if fam != famOther && x.has(hConnection) && ascii.EqualFold(strings.TrimSpace(x.val[hConnection]), "close") {
		fs.add(ReasonConnectionClose, suspConnectionClose)
	}
}

// orderBroken applies the ordering rules of the claimed browser.
func orderBroken(x *headerIndex, fam uaFamily) bool {
	// Every browser sends Host first (HTTP/1.1); HTTP/2 has :authority.
	if x.has(hHost) && x.first != hHost {
		return true
	}
	switch fam {
	case famChromium:
		return x.broken(hUserAgent, hAcceptEncoding) ||
			x.broken(hAcceptEncoding, hAcceptLanguage) ||
			x.broken(hSecFetchSite, hSecFetchMode) ||
			x.broken(hSecFetchMode, hSecFetchDest) ||
			x.broken(hSecFetchDest, hAcceptEncoding)
	case famFirefox:
		return x.anyOther && x.firstOther != hUserAgent ||
			x.broken(hAcceptLanguage, hAcceptEncoding)
	}
	return false
}

// uaClassify tells the browser family a User-Agent claims and its major
// version (0 when not found). A "Chrome/" token marks Chromium (iOS
// browsers, which are WebKit, write CriOS/EdgiOS instead); "Firefox/"
// marks Firefox; "Safari/" without either marks WebKit.
func uaClassify(ua string) (uaFamily, int) {
	if v, ok := uaTokenVersion(ua, "Chrome/"); ok {
		return famChromium, v
	}
	if v, ok := uaTokenVersion(ua, "Firefox/"); ok {
		return famFirefox, v
	}
	if strings.Contains(ua, "Safari/") {
		v, _ := uaTokenVersion(ua, "Version/")
		return famWebKit, v
	}
	return famOther, 0
}

// uaTokenVersion finds token in ua and parses the number after it.
func uaTokenVersion(ua, token string) (int, bool) {
	i := strings.Index(ua, token)
	if i < 0 {
		return 0, false
	}
	v, n := 0, 0
	for j := i + len(token); j < len(ua) && '0' <= ua[j] && ua[j] <= '9' && n < 6; j++ {
		v = v*10 + int(ua[j]-'0')
		n++
	}
	return v, true
}

// parseBrands reads a Sec-CH-UA brand list (RFC 8941 list of strings
// with a "v" parameter: `"Chromium";v="131", "Not_A Brand";v="24"`) and
// reports whether it names HeadlessChrome and the "Chromium" brand's
// major version (0 if absent); ok is false when it does not parse.
func parseBrands(v string) (headless bool, chromium int, ok bool) {
	i := 0
	skipWS := func() {
		for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
			i++
		}
	}
	// str reads a quoted string at i (no escapes: brands never have them).
	str := func() (string, bool) {
		if i >= len(v) || v[i] != '"' {
			return "", false
		}
		end := strings.IndexByte(v[i+1:], '"')
		if end < 0 {
			return "", false
		}
		end += i + 1
		s := v[i+1 : end]
		if strings.IndexByte(s, '\\') >= 0 {
			return "", false
		}
		i = end + 1
		return s, true
	}
	items := 0
	for {
		skipWS()
		brand, good := str()
		if !good {
			return false, 0, false
		}
		items++
		version := ""
		for i < len(v) && v[i] == ';' {
			i++
			skipWS()
			start := i
			for i < len(v) && v[i] != '=' && v[i] != ';' && v[i] != ',' {
				i++
			}
			key := v[start:i]
			if i < len(v) && v[i] == '=' {
				i++
				val, good := str()
				if !good {
					return false, 0, false
				}
				if key == "v" {
					version = val
				}
			}
		}
		if strings.Contains(brand, "HeadlessChrome") {
			headless = true
		}
		if brand == "Chromium" {
			n := 0
			for j := 0; j < len(version) && '0' <= version[j] && version[j] <= '9' && j < 6; j++ {
				n = n*10 + int(version[j]-'0')
			}
			chromium = n
		}
		skipWS()
		if i == len(v) {
			return headless, chromium, items > 0
		}
		if v[i] != ',' {
			return false, 0, false
		}
		i++
	}
}

var _ Signal = (*HeaderSignal)(nil)
