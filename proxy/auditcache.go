package proxy

import (
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/prometheus/client_golang/prometheus"
)

// Draw-audit pages: GET {prefix}/api/draws/{event}/{tranche}?offset=&limit=.
const (
	// DefaultAuditPage is how many visitor hashes a draw-audit page holds
	// when the request names no limit.
	DefaultAuditPage = 250
	// MaxAuditPage bounds a page's limit (a larger one gets 400): about
	// 67 KB of JSON, so that one small request cannot ask for much more.
	MaxAuditPage = 1000
	// DefaultAuditCacheBytes bounds the encoded draw-audit pages the proxy
	// keeps (least recently used first out).
	DefaultAuditCacheBytes = 8 << 20
)

// auditKey names one encoded page of a drawn tranche's audit.
type auditKey struct {
	event, lane            string
	tranche, offset, limit int
}

// auditCache keeps encoded pages of drawn tranches' audits, which never
// change once drawn, bounded by their total size. It is safe for
// concurrent use; the pages it returns must not be modified.
type auditCache struct {
	mu       sync.Mutex
	lru      *simplelru.LRU[auditKey, []byte]
	bytes    int
	maxBytes int
	hits     prometheus.Counter
	misses   prometheus.Counter
}

func newAuditCache(maxBytes int, reg prometheus.Registerer) (*auditCache, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultAuditCacheBytes
	}
	c := &auditCache{maxBytes: maxBytes}
	var err error
	// The entry count is bounded by bytes; the LRU's own bound is only a
	// backstop for many tiny pages.
	c.lru, err = simplelru.NewLRU[auditKey, []byte](16+maxBytes/64, func(_ auditKey, page []byte) {
		c.bytes -= len(page)
	})
	if err != nil {
		return nil, err
	}
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "waitroom_audit_cache_total",
		Help: "Draw-audit page requests by result: hit (served from the cache) or miss (encoded)."}, []string{"result"})
	c.hits, c.misses = vec.WithLabelValues("hit"), vec.WithLabelValues("miss")
	if reg != nil {
		if err := reg.Register(vec); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// get returns the cached page of k, counting a hit or a miss.
func (c *auditCache) get(k auditKey) ([]byte, bool) {
	c.mu.Lock()
	page, ok := c.lru.Get(k)
	c.mu.Unlock()
	if ok {
		c.hits.Inc()
	} else {
		c.misses.Inc()
	}
	return page, ok
}

// add keeps page for k, dropping the least recently used pages while the
// total is over the bound. A page larger than the whole bound is not kept.
func (c *auditCache) add(k auditKey, page []byte) {
	if len(page) > c.maxBytes {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lru.Contains(k) {
		return
	}
	c.lru.Add(k, page)
	c.bytes += len(page)
	for c.bytes > c.maxBytes {
		if _, _, ok := c.lru.RemoveOldest(); !ok {
			break
		}
	}
}

// size returns the number of pages and their total bytes.
func (c *auditCache) size() (pages, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.bytes
}
