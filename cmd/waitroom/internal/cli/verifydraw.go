package cli

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/waitroom/waitroom/admission"
	"github.com/waitroom/waitroom/cmd/waitroom/internal/version"
)

func init() {
	register(command{
		name:    "verify-draw",
		summary: "fetch a published draw and check it: commitment, seed and order",
		run:     runVerifyDraw,
	})
}

// Limits of verify-draw's HTTP client: it reads what anyone may publish.
const (
	// verifyPageSize is the audit page it asks for (the API's maximum).
	verifyPageSize = 1000
	// maxAuditBody bounds one page's body: 1000 hashes are about 67 kB.
	maxAuditBody = 1 << 20
	// maxVerifyEntries bounds a draw it will walk.
	maxVerifyEntries = 50_000_000
	// maxVerifyRedirects bounds the redirects followed per request.
	maxVerifyRedirects = 3
)

const verifyDrawHelp = `Usage: waitroom verify-draw [-commitment HEX] [-timeout D] URL

Checks a published draw of a waiting room, as anyone can: URL is the draw
page (https://shop.example/_wr/draw/EVENT/TRANCHE, the room's "Check the
draw" link) or its JSON (https://shop.example/_wr/api/draws/EVENT/TRANCHE),
with ?lane=LANE for a presale lane.

It fetches every page of the draw and checks that the SHA-256 of the
revealed seed is the commitment published before the draw, that the draw
was made after the tranche closed, that the pages join up to the count
published, and that the entries (SHA-256 of each visitor's id) are in the
order the seed gives: ascending HMAC-SHA256(seed, entry), no entry twice.
With -commitment, the commitment you saw before the draw (the draw page
and the JSON show it while the tranche is open) must be the one published:
that is what shows the seed was not chosen after the arrivals were known.
Prints OK and a summary, or exactly what does not match, and exits 1.
`

func runVerifyDraw(ctx context.Context, args []string, s stdio) int {
	fs := newFlags("verify-draw", verifyDrawHelp)
	timeout := fs.Duration("timeout", 30*time.Second, "give up on one request after `D`")
	seen := fs.String("commitment", "", "the commitment (`HEX`) seen before the draw, which the published one must equal")
	if code, done := parseFlags(fs, args, s); done {
		return code
	}
	if fs.NArg() != 1 {
		return badUsage(fs, s, "give the URL of one draw")
	}
	if *timeout <= 0 {
		return badUsage(fs, s, "-timeout must be positive")
	}
	base, err := auditURL(fs.Arg(0))
	if err != nil {
		return badUsage(fs, s, "%v", err)
	}
	if *seen != "" {
		if _, err := decodeHash("-commitment", strings.ToLower(*seen)); err != nil {
			return badUsage(fs, s, "%v", err)
		}
	}
	v := &drawVerifier{client: verifyClient(*timeout), base: base, ua: "waitroom-verify-draw/" + version.Version,
		seen: strings.ToLower(*seen)}
	sum, err := v.run(ctx)
	if err != nil {
		fmt.Fprintf(s.stderr, "waitroom verify-draw: %s: %v\n", base, err)
		return exitError
	}
	io.WriteString(s.stdout, sum)
	return exitOK
}

// drawPathRe is the end of a draw page's or audit's path.
var drawPathRe = regexp.MustCompile(`^(.*)/(?:api/draws|draw)/([A-Za-z0-9][A-Za-z0-9_.-]{0,63})/(0|[1-9][0-9]{0,8})$`)

// auditURL turns the URL of a draw page or audit into the audit's URL,
// keeping only the lane of its query.
func auditURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, errors.New("the URL must be an http or https URL of a draw, such as https://shop.example/_wr/draw/EVENT/0")
	}
	m := drawPathRe.FindStringSubmatch(u.Path)
	if m == nil {
		return nil, fmt.Errorf("%s is not the path of a draw: …/draw/EVENT/TRANCHE or …/api/draws/EVENT/TRANCHE", u.Path)
	}
	out := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: m[1] + "/api/draws/" + m[2] + "/" + m[3]}
	if lane := u.Query().Get("lane"); lane != "" {
		out.RawQuery = url.Values{"lane": {lane}}.Encode()
	}
	return out, nil
}

// verifyClient is an HTTP client for untrusted servers: a timeout per
// request, bounded headers, few redirects and only to http(s).
func verifyClient(timeout time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        30 * time.Second,
	}
	return &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxVerifyRedirects {
				return errors.New("too many redirects")
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return errors.New("redirect to a URL that is not http(s)")
			}
			return nil
		}}
}

// auditJSON is one page of a draw audit as the proxy publishes it.
type auditJSON struct {
	Event         string     `json:"event"`
	Lane          string     `json:"lane"`
	Tranche       int        `json:"tranche"`
	Commitment    string     `json:"commitment"`
	Drawn         bool       `json:"drawn"`
	Seed          string     `json:"seed"`
	First         uint64     `json:"first"`
	Count         uint64     `json:"count"`
	Offset        int        `json:"offset"`
	Hashes        []string   `json:"hashes"`
	Next          *int       `json:"next"`
	OpensAt       *time.Time `json:"opens_at"`
	ClosesAt      *time.Time `json:"closes_at"`
	CommittedFrom *time.Time `json:"committed_from"`
	DrawnAt       *time.Time `json:"drawn_at"`
}

type drawVerifier struct {
	client *http.Client
	base   *url.URL
	ua     string
	// pageSize is the page asked for (verifyPageSize when 0).
	pageSize int
	// seen is the commitment seen before the draw, in lower-case hex
	// ("": not checked).
	seen string
}

func (v *drawVerifier) size() int {
	if v.pageSize > 0 {
		return v.pageSize
	}
	return verifyPageSize
}

// page fetches the audit page at offset.
func (v *drawVerifier) page(ctx context.Context, offset int) (*auditJSON, error) {
	u := *v.base
	q := u.Query()
	q.Set("offset", strconv.Itoa(offset))
	q.Set("limit", strconv.Itoa(v.size()))
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, "GET", u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", v.ua)
	resp, err := v.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAuditBody+1))
	if err != nil {
		return nil, fmt.Errorf("reading the page at offset %d: %w", offset, err)
	}
	if len(body) > maxAuditBody {
		return nil, fmt.Errorf("the page at offset %d is larger than %d bytes", offset, maxAuditBody)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error, Message string }
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return nil, fmt.Errorf("%s: %s (%s)", resp.Status, e.Message, e.Error)
		}
		return nil, fmt.Errorf("%s", resp.Status)
	}
	var a auditJSON
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("the page at offset %d is not a draw audit: %v", offset, err)
	}
	return &a, nil
}

// decodeHash reads a 32-byte hex value.
func decodeHash(what, s string) ([32]byte, error) {
	var h [32]byte
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		return h, fmt.Errorf("%s %q is not 32 bytes of hex", what, s)
	}
	copy(h[:], b)
	return h, nil
}

// run walks every page and checks the draw, returning the summary.
func (v *drawVerifier) run(ctx context.Context) (string, error) {
	first, err := v.page(ctx, 0)
	if err != nil {
		return "", err
	}
	commitment, err := decodeHash("the commitment", first.Commitment)
	if err != nil {
		return "", err
	}
	if v.seen != "" && v.seen != first.Commitment {
		return "", fmt.Errorf("the published commitment %s is not the %s seen before the draw", first.Commitment, v.seen)
	}
	if !first.Drawn {
		return "", fmt.Errorf("tranche %d of event %s is not drawn yet (commitment %s); try again after it closes", first.Tranche, first.Event, first.Commitment)
	}
	seed, err := hex.DecodeString(first.Seed)
	if err != nil || len(seed) == 0 {
		return "", fmt.Errorf("the seed %q is not hex", first.Seed)
	}
	if err := admission.VerifyAudit(commitment, seed, nil); err != nil {
		return "", fmt.Errorf("SHA-256 of the seed %s is %x, not the commitment %s published before the draw", first.Seed, admission.Commitment(seed), first.Commitment)
	}
	var problems []string
	if first.ClosesAt != nil && first.DrawnAt != nil && first.DrawnAt.Before(*first.ClosesAt) {
		problems = append(problems, fmt.Sprintf("the draw was made at %s, before the tranche closed at %s", first.DrawnAt.Format(time.RFC3339), first.ClosesAt.Format(time.RFC3339)))
	}
	if first.CommittedFrom != nil && first.ClosesAt != nil && !first.CommittedFrom.Before(*first.ClosesAt) {
		problems = append(problems, fmt.Sprintf("the commitment was published from %s, not before the tranche closed at %s", first.CommittedFrom.Format(time.RFC3339), first.ClosesAt.Format(time.RFC3339)))
	}
	if first.Count > maxVerifyEntries {
		return "", fmt.Errorf("the draw has %d entries; verify-draw checks at most %d", first.Count, maxVerifyEntries)
	}
	// The pages are checked as they come, each with the last entry of
	// the one before, so the whole order is checked in one pass with one
	// page in memory.
	var prev *[32]byte
	total, offset := 0, 0
	for p := first; ; {
		switch {
		case p.Event != first.Event || p.Lane != first.Lane || p.Tranche != first.Tranche || !p.Drawn ||
			p.Commitment != first.Commitment || p.Seed != first.Seed || p.First != first.First || p.Count != first.Count:
			return "", fmt.Errorf("the page at offset %d describes another draw (event %s, lane %s, tranche %d, seed %s, count %d)", offset, p.Event, p.Lane, p.Tranche, p.Seed, p.Count)
		case p.Offset != offset:
			return "", fmt.Errorf("asked for offset %d, got a page at offset %d", offset, p.Offset)
		case len(p.Hashes) > v.size():
			return "", fmt.Errorf("the page at offset %d has %d entries, more than the %d asked for", offset, len(p.Hashes), v.size())
		}
		hashes := make([][32]byte, 0, len(p.Hashes)+1)
		if prev != nil {
			hashes = append(hashes, *prev)
		}
		for i, s := range p.Hashes {
			h, err := decodeHash(fmt.Sprintf("entry %d", offset+i+1), s)
			if err != nil {
				return "", err
			}
			hashes = append(hashes, h)
		}
		var oe *admission.OrderError
		if err := admission.VerifyAudit(commitment, seed, hashes); errors.As(err, &oe) {
			at := offset + oe.Index
			if prev == nil {
				at++
			}
			if oe.Duplicate {
				return "", fmt.Errorf("entry %d (%x, queue number %d) repeats the entry before it", at, oe.Hash, first.First+uint64(at-1))
			}
			return "", fmt.Errorf("entry %d (%x, queue number %d) is out of order: HMAC-SHA256(seed, entry) = %x is smaller than the previous entry's %x",
				at, oe.Hash, first.First+uint64(at-1), oe.Key, oe.Prev)
		} else if err != nil {
			return "", err
		}
		total += len(p.Hashes)
		if len(hashes) > 0 {
			last := hashes[len(hashes)-1]
			prev = &last
		}
		if uint64(total) > first.Count {
			return "", fmt.Errorf("the pages hold more entries than the count %d", first.Count)
		}
		if p.Next == nil {
			break
		}
		if *p.Next != offset+len(p.Hashes) || len(p.Hashes) == 0 {
			return "", fmt.Errorf("the page at offset %d says the next starts at %d, not %d", offset, *p.Next, offset+len(p.Hashes))
		}
		offset = *p.Next
		if p, err = v.page(ctx, offset); err != nil {
			return "", err
		}
	}
	if uint64(total) != first.Count {
		problems = append(problems, fmt.Sprintf("the pages hold %d entries, but the draw says it has %d", total, first.Count))
	}
	if len(problems) > 0 {
		return "", errors.New(strings.Join(problems, "; "))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "OK: the draw of tranche %d of event %s (lane %s) checks out\n", first.Tranche, first.Event, first.Lane)
	fmt.Fprintf(&b, "  commitment  %s = SHA-256(seed)", first.Commitment)
	if v.seen != "" {
		b.WriteString(", the one seen before the draw")
	}
	if first.CommittedFrom != nil {
		fmt.Fprintf(&b, ", published from %s", first.CommittedFrom.Format(time.RFC3339))
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "  seed        %s", first.Seed)
	if first.DrawnAt != nil {
		fmt.Fprintf(&b, ", revealed at the draw, %s", first.DrawnAt.Format(time.RFC3339))
	}
	if first.ClosesAt != nil {
		fmt.Fprintf(&b, " (the tranche closed at %s)", first.ClosesAt.Format(time.RFC3339))
	}
	b.WriteString("\n")
	if total == 0 {
		b.WriteString("  entries     none\n")
	} else {
		fmt.Fprintf(&b, "  entries     %d, queue numbers %d to %d, in ascending HMAC-SHA256(seed, entry) order\n",
			total, first.First, first.First+uint64(total)-1)
	}
	return b.String(), nil
}
