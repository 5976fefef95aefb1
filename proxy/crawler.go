package proxy

// The crawler allowlist: search engines' crawlers pass gated paths without
// a queue, when both their User-Agent and their address say who they are.

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/waitroom/waitroom/internal/ascii"
)

// Crawler is a crawler let through the queue routes without queueing: a
// request whose User-Agent contains one of UserAgents (ASCII case
// ignored) and whose client address (as Options.Trusted establishes it)
// is in Ranges. Both must match: a User-Agent alone is trivially spoofed,
// and an address alone (a cloud provider's range) is shared with
// anyone's scripts. A crawler gets no ticket and no pass: it is forwarded
// as it is, request by request, like a bypass but in the anonymous class
// of Options.Budget (it never takes the share reserved for admitted
// visitors). Paths whose route blocks without a pass stay blocked.
type Crawler struct {
	// Name labels the crawler's metrics ("googlebot").
	Name string
	// UserAgents are substrings of the crawler's User-Agent ("Googlebot").
	UserAgents []string
	// Ranges holds the addresses the crawler's operator publishes.
	Ranges IPSet
}

// IPSet answers whether an address is in a set of ranges. Contains must
// be safe for concurrent use and should not allocate (plugins/iplist.Set
// is one).
type IPSet interface {
	Contains(netip.Addr) bool
}

// crawler is a Crawler compiled: lower-case patterns and resolved
// counters.
type crawler struct {
	name     string
	patterns [][]byte
	ranges   IPSet
	// passed counts requests let through; spoofed counts requests whose
	// User-Agent matched from outside the ranges (they were queued).
	passed, spoofed prometheus.Counter
}

// compileCrawlers checks and compiles cs, registering their counters.
func compileCrawlers(cs []Crawler, reg prometheus.Registerer) ([]crawler, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	passed := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_crawler_passes_total",
		Help: "Requests of allowlisted crawlers forwarded on queue routes without a queue, by crawler."}, []string{"crawler"})
	spoofed := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_crawler_spoofed_total",
		Help: "Requests whose User-Agent claimed an allowlisted crawler from outside its address ranges (they were queued), by crawler."},
		[]string{"crawler"})
	if reg != nil {
		var err error
		// A reloaded proxy counts on in the vectors registered first.
		if passed, err = registerOnce(reg, passed); err != nil {
			return nil, err
		}
		if spoofed, err = registerOnce(reg, spoofed); err != nil {
			return nil, err
		}
	}
	var errs []error
	out := make([]crawler, 0, len(cs))
	seen := map[string]bool{}
	for i, c := range cs {
		switch {
		case c.Name == "":
			errs = append(errs, fmt.Errorf("proxy: crawlers[%d]: no name", i))
		case seen[c.Name]:
			errs = append(errs, fmt.Errorf("proxy: crawlers[%d]: name %q listed twice", i, c.Name))
		case len(c.UserAgents) == 0:
			errs = append(errs, fmt.Errorf("proxy: crawler %q: no user agents", c.Name))
		case c.Ranges == nil:
			errs = append(errs, fmt.Errorf("proxy: crawler %q: no address ranges", c.Name))
		}
		seen[c.Name] = true
		cc := crawler{name: c.Name, ranges: c.Ranges,
			passed: passed.WithLabelValues(c.Name), spoofed: spoofed.WithLabelValues(c.Name)}
		for _, ua := range c.UserAgents {
			if ua == "" {
				errs = append(errs, fmt.Errorf("proxy: crawler %q: an empty user agent would match every request", c.Name))
				continue
			}
			cc.patterns = append(cc.patterns, ascii.AppendLower(nil, ua))
		}
		out = append(out, cc)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// crawlerPass reports whether a request without a pass is an allowlisted
// crawler's, counting it. Only requests without a valid pass on a queue
// route get here, so it costs the admitted path nothing; with no
// crawler configured it is one length check. It does not allocate.
func (p *Proxy) crawlerPass(ctx *fasthttp.RequestCtx, ip netip.Addr) bool {
	if len(p.crawlers) == 0 {
		return false
	}
	ua := ctx.Request.Header.UserAgent()
	for i := range p.crawlers {
		c := &p.crawlers[i]
		if !c.claimedBy(ua) {
			continue
		}
		if ip.IsValid() && c.ranges.Contains(ip) {
			c.passed.Inc()
			return true
		}
		c.spoofed.Inc()
	}
	return false
}

// claimedBy reports whether ua contains one of c's patterns, ASCII case
// ignored.
func (c *crawler) claimedBy(ua []byte) bool {
	for _, pat := range c.patterns {
		if containsFold(ua, pat) {
			return true
		}
	}
	return false
}

// containsFold reports whether s contains lower (which is lower case),
// ASCII case ignored.
func containsFold(s, lower []byte) bool {
	n := len(lower)
	for i := 0; i+n <= len(s); i++ {
		if ascii.EqualFold(s[i:i+n], lower) {
			return true
		}
	}
	return false
}
