package proxy

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"
)

type auditPage struct {
	Drawn  bool
	Count  uint64
	Offset int
	Limit  int
	Hashes []string
	Next   *int
}

// TestDrawAuditPages walks a drawn tranche page by page: the pages join up
// to the whole draw, next says where the following one starts, the limit
// is bounded, and a drawn page is encoded once and then served from the
// cache.
func TestDrawAuditPages(t *testing.T) {
	r := newRig(t)
	const visitors = 7
	for i := range visitors {
		v := newVisitor(t, "ua-"+strconv.Itoa(i))
		if got := v.do(t, "POST", r.url+"/_wr/api/join", `{"event":"show"}`); got.status != 200 {
			t.Fatalf("join: %d %s", got.status, got.body)
		}
	}
	// Tranche 0 is open: its audit is the commitment only, never cached.
	v := newVisitor(t, "auditor")
	hits := func() float64 {
		return counterValue(t, r.reg, "waitroom_audit_cache_total", map[string]string{"result": "hit"})
	}
	for range 2 {
		if got := v.do(t, "GET", r.url+"/_wr/api/draws/show/0", ""); got.status != 200 || got.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("open tranche: %d %v %s", got.status, got.header, got.body)
		}
	}
	if pages, _ := r.p.audits.size(); pages != 0 || hits() != 0 {
		t.Fatalf("an open tranche's audit was cached: %d pages, %v hits", pages, hits())
	}
	for d := 11 * time.Second; d < 14*time.Second; d += time.Second {
		r.tick(t, d)
	}

	get := func(query string) (auditPage, string) {
		t.Helper()
		got := v.do(t, "GET", r.url+"/_wr/api/draws/show/0"+query, "")
		var a auditPage
		if err := json.Unmarshal([]byte(got.body), &a); err != nil || got.status != 200 || !a.Drawn {
			t.Fatalf("%s: %d %s %v", query, got.status, got.body, err)
		}
		if got.header.Get("Cache-Control") != "public, max-age=3600" {
			t.Errorf("%s: Cache-Control %q", query, got.header.Get("Cache-Control"))
		}
		return a, got.body
	}
	all, _ := get("")
	if all.Count != visitors || len(all.Hashes) != visitors || all.Limit != DefaultAuditPage || all.Next != nil {
		t.Fatalf("whole draw: %+v", all)
	}
	var joined []string
	for off, n := 0, 0; ; n++ {
		page, _ := get(fmt.Sprintf("?offset=%d&limit=3", off))
		if page.Offset != off || page.Limit != 3 || len(page.Hashes) > 3 {
			t.Fatalf("page at %d: %+v", off, page)
		}
		joined = append(joined, page.Hashes...)
		if page.Next == nil {
			break
		}
		if *page.Next != off+3 || n > visitors {
			t.Fatalf("next %d after offset %d", *page.Next, off)
		}
		off = *page.Next
	}
	if fmt.Sprint(joined) != fmt.Sprint(all.Hashes) {
		t.Fatalf("the pages %v differ from the draw %v", joined, all.Hashes)
	}
	if past, _ := get("?offset=100"); len(past.Hashes) != 0 || past.Next != nil {
		t.Errorf("past the end: %+v", past)
	}

	// The same page again comes from the cache, byte for byte.
	before := hits()
	_, first := get("?offset=3&limit=3")
	_, again := get("?offset=3&limit=3")
	if hits() != before+2 || first != again {
		t.Errorf("cache hits %v -> %v; bodies equal: %v", before, hits(), first == again)
	}

	for _, q := range []string{"?limit=0", "?limit=" + strconv.Itoa(MaxAuditPage+1), "?limit=99999", "?limit=x", "?offset=-1"} {
		if got := v.do(t, "GET", r.url+"/_wr/api/draws/show/0"+q, ""); got.status != 400 {
			t.Errorf("%s: %d %s, want 400", q, got.status, got.body)
		}
	}
}

// TestAuditCacheBound: the cache keeps at most its byte bound, dropping the
// least recently used pages first, and never a page larger than the bound.
func TestAuditCacheBound(t *testing.T) {
	c, err := newAuditCache(100, nil)
	if err != nil {
		t.Fatal(err)
	}
	page := func(n int) []byte { return make([]byte, n) }
	key := func(off int) auditKey { return auditKey{event: "e", lane: "public", offset: off, limit: 10} }
	for i := range 5 {
		c.add(key(i), page(30))
		if _, b := c.size(); b > 100 {
			t.Fatalf("after %d pages: %d bytes", i+1, b)
		}
	}
	if pages, b := c.size(); pages != 3 || b != 90 {
		t.Fatalf("%d pages, %d bytes; want 3, 90", pages, b)
	}
	if _, ok := c.get(key(0)); ok {
		t.Error("the oldest page is still there")
	}
	if _, ok := c.get(key(4)); !ok {
		t.Error("the newest page is gone")
	}
	c.add(key(9), page(101))
	if _, ok := c.get(key(9)); ok {
		t.Error("a page over the whole bound was kept")
	}
}
