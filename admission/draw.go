package admission

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"runtime"
	"slices"
	"sync"
	"time"
)

// The draw. A tranche's members are ordered by their draw key,
//
//	HMAC-SHA256(seed, SHA-256(visitor id))
//
// ascending. The audit of a tranche publishes the seed's commitment
// SHA-256(seed) before the tranche closes, then the seed and the list of
// SHA-256(visitor id) in drawn order. Keying the HMAC with the hash (not
// the id itself) is what lets anyone recompute every key from the
// published list and check the whole order, while a visitor finds their
// own entry by hashing the id in their ticket. The seed, unknown until
// the tranche is closed, is what makes the order unpredictable.

// SeedSize is the length of a tranche's seed.
const SeedSize = 32

// trancheAt is the tranche a join at t belongs to: 0 before the on-sale
// (the pre-queue), then one per cfg.Tranche.
func trancheAt(cfg *EventConfig, t time.Time) int {
	if t.Before(cfg.OnSaleAt) {
		return 0
	}
	return int(t.Sub(cfg.OnSaleAt)/cfg.Tranche) + 1
}

// trancheCloses is when tranche k stops taking members.
func trancheCloses(cfg *EventConfig, k int) time.Time {
	return cfg.OnSaleAt.Add(time.Duration(k) * cfg.Tranche)
}

// VisitorHash is SHA-256 of the visitor id: what the audit publishes.
func VisitorHash(v VisitorID) [32]byte { return sha256.Sum256(v[:]) }

// Commitment is SHA-256 of a seed, published before the draw.
func Commitment(seed []byte) [32]byte { return sha256.Sum256(seed) }

// keyer computes draw keys; it reuses one keyed HMAC, so it is not safe
// for concurrent use.
type keyer struct {
	mac hash.Hash
	buf [32]byte
}

func newKeyer(seed []byte) *keyer { return &keyer{mac: hmac.New(sha256.New, seed)} }

// key returns the draw key of the visitor whose hash is vh.
func (k *keyer) key(vh [32]byte) [32]byte {
	k.mac.Reset()
	k.mac.Write(vh[:])
	k.mac.Sum(k.buf[:0])
	return k.buf
}

// DrawKey returns the draw key of visitor v under seed.
func DrawKey(seed []byte, v VisitorID) [32]byte {
	return newKeyer(seed).key(VisitorHash(v))
}

// Order sorts members in place into drawn order, drops duplicates and
// returns the ordered slice (a prefix of members). It computes the keys
// on every CPU; 10 million members take a few seconds and 12 bytes per
// member of scratch memory.
func Order(seed []byte, members []VisitorID) []VisitorID {
	n := len(members)
	if n == 0 {
		return members
	}
	prefix := make([]uint64, n) // the key's first 8 bytes; ties go to the full key
	workers := min(runtime.GOMAXPROCS(0), max(1, n/50_000))
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Go(func() {
			k := newKeyer(seed)
			for i := lo; i < hi; i++ {
				key := k.key(VisitorHash(members[i]))
				prefix[i] = binary.BigEndian.Uint64(key[:8])
			}
		})
	}
	wg.Wait()
	idx := make([]uint32, n)
	for i := range idx {
		idx[i] = uint32(i)
	}
	k := newKeyer(seed)
	slices.SortFunc(idx, func(a, b uint32) int {
		if pa, pb := prefix[a], prefix[b]; pa != pb {
			if pa < pb {
				return -1
			}
			return 1
		}
		ka, kb := k.key(VisitorHash(members[a])), k.key(VisitorHash(members[b]))
		return bytes.Compare(ka[:], kb[:])
	})
	prefix = nil
	// Apply the permutation in place, cycle by cycle, marking done slots
	// by setting their index to n.
	for i := range idx {
		if idx[i] == uint32(n) || int(idx[i]) == i {
			continue
		}
		tmp := members[i]
		j := i
		for {
			src := int(idx[j])
			idx[j] = uint32(n)
			if src == i {
				members[j] = tmp
				break
			}
			members[j] = members[src]
			j = src
		}
	}
	// Duplicates have equal keys, so they are now adjacent.
	return slices.Compact(members)
}

// Find returns the index of v in members ordered by Order under seed, or
// -1. It recomputes keys along a binary search: about log2(n) HMACs.
func Find(seed []byte, ordered []VisitorID, v VisitorID) int {
	k := newKeyer(seed)
	target := k.key(VisitorHash(v))
	lo, hi := 0, len(ordered)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		key := k.key(VisitorHash(ordered[mid]))
		if bytes.Compare(key[:], target[:]) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(ordered) && ordered[lo] == v {
		return lo
	}
	return -1
}

// CheckAudit verifies a published draw: the seed matches the commitment
// and the hashes are in the order their keys give. It is what any
// visitor (or journalist) can run on the audit data; VerifyAudit says
// what is wrong.
func CheckAudit(commitment [32]byte, seed []byte, hashes [][32]byte) bool {
	return VerifyAudit(commitment, seed, hashes) == nil
}

// ErrCommitmentMismatch: a published seed whose SHA-256 is not the
// commitment published before the draw.
var ErrCommitmentMismatch = errors.New("admission: SHA-256 of the seed is not the commitment")

// OrderError is a published draw's first entry out of order.
type OrderError struct {
	// Index is the entry's position in the published list (from 0).
	Index int
	// Hash is the entry; Key its draw key, and Prev the key of the entry
	// before it, which is not smaller.
	Hash, Key, Prev [32]byte
	// Duplicate: the entry repeats the one before it.
	Duplicate bool
}

func (e *OrderError) Error() string {
	if e.Duplicate {
		return fmt.Sprintf("admission: entry %d (%x) repeats the entry before it", e.Index, e.Hash)
	}
	return fmt.Sprintf("admission: entry %d (%x) is out of order: its key %x is smaller than the key %x of the entry before it",
		e.Index, e.Hash, e.Key, e.Prev)
}

// VerifyAudit checks a published draw as CheckAudit does and returns what
// is wrong: ErrCommitmentMismatch, or an *OrderError for the first entry
// out of order. hashes may be a contiguous part of the draw.
func VerifyAudit(commitment [32]byte, seed []byte, hashes [][32]byte) error {
	if Commitment(seed) != commitment {
		return ErrCommitmentMismatch
	}
	k := newKeyer(seed)
	var prev [32]byte
	for i, h := range hashes {
		key := k.key(h)
		if i > 0 {
			if c := bytes.Compare(prev[:], key[:]); c >= 0 {
				return &OrderError{Index: i, Hash: h, Key: key, Prev: prev, Duplicate: c == 0}
			}
		}
		prev = key
	}
	return nil
}
