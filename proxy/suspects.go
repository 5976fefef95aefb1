package proxy

import (
	"github.com/waitroom/waitroom/challenge"
	"net/netip"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// suspects remembers, per client, the highest risk score it was given
// lately, so that the work a request is asked is never below what its
// client scored within the memory: a client probing which header and
// client-signal combinations score low learns nothing after its first
// suspicious try, since every later challenge it fetches asks at least
// the work that try got.
//
// A client is its address (an IPv6 address's /64, one customer's network
// where privacy addresses rotate) with its TLS stack (challenge.TLSStack
// of its JA4, the same on every connection): fans behind
// the same carrier-grade NAT as a scripted client have another TLS
// fingerprint, so its record does not touch them; a fan's browser sharing
// both with a suspect is the one who pays, and only the heavy work (see
// carryCeiling). The memory is this process's: replicas remember each on
// their own. Safe for concurrent use.
type suspects struct {
	mu     sync.Mutex
	lru    *simplelru.LRU[suspectKey, suspect]
	memory time.Duration
}

// suspectKey is what a score is remembered against.
type suspectKey struct {
	addr  netip.Addr
	stack string
}

type suspect struct {
	score int
	until time.Time
}

// Defaults of the memory of suspects.
const (
	// DefaultSuspectMemory is how long a score is remembered.
	DefaultSuspectMemory = 10 * time.Minute
	// DefaultSuspects bounds the addresses remembered: at about 100 bytes
	// each, 10 MB.
	DefaultSuspects = 100_000
	// suspectFloor: scores below it are not remembered (nothing to
	// carry over: every request gets at least the light work).
	suspectFloor = 1
)

func newSuspects(size int, memory time.Duration) *suspects {
	if size <= 0 {
		size = DefaultSuspects
	}
	if memory <= 0 {
		memory = DefaultSuspectMemory
	}
	l, _ := simplelru.NewLRU[suspectKey, suspect](size, nil) // size > 0: no error
	return &suspects{lru: l, memory: memory}
}

// clientAddr is the address a client is known by: an IPv4 address, or
// the /64 of an IPv6 one.
func clientAddr(ip netip.Addr) netip.Addr {
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.Addr()
	}
	return ip
}

// raise returns the larger of score and the score remembered for the
// client (ip, its TLS stack), and remembers that for the memory's span from now.
func (s *suspects) raise(ip netip.Addr, stack string, score int, now time.Time) int {
	if !ip.IsValid() {
		return score
	}
	k := suspectKey{clientAddr(ip), stack}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.lru.Get(k); ok {
		if now.Before(old.until) {
			if old.score >= score {
				return old.score
			}
		} else if score < suspectFloor {
			s.lru.Remove(k)
			return score
		}
	}
	if score >= suspectFloor {
		s.lru.Add(k, suspect{score: score, until: now.Add(s.memory)})
	}
	return score
}

// carryCeiling is the highest remembered score carried over to a later
// request: the top of the heavy proof of work's band. Memory raises the
// work a client is asked, never its action to a CAPTCHA, the shadow queue
// or a block: those come only from what a request itself shows. With the
// heavy band off, nothing is carried.
func carryCeiling(b challenge.Bands) int {
	if b.HeavyPoW < 1 || b.HeavyPoW > challenge.MaxScore {
		return 0
	}
	c := challenge.MaxScore
	for _, t := range []int{b.Captcha, b.Shadow, b.Block} {
		if t >= 1 && t <= challenge.MaxScore && t-1 < c && t > b.HeavyPoW {
			c = t - 1
		}
	}
	return c
}
