package proxy

import (
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
)

// bindingLen is the length of a binding hash in hex: 128 bits.
const bindingLen = 32

// bindingHash is a device-binding hash in hex, kept in an array so that
// computing it per request allocates nothing.
type bindingHash struct {
	b [bindingLen]byte
	n int // 0 when binding is off
}

// compute hashes the configured signals: the User-Agent and the client's
// address prefix. A ticket or pass carries the hash it was issued with.
func (bd Binding) compute(userAgent []byte, ip netip.Addr, stack *tlsStack) bindingHash {
	var h bindingHash
	if !bd.UserAgent && !bd.IPPrefix && !bd.TLSStack {
		return h
	}
	var in [1 + sha256.Size + 1 + 16 + 1 + len(tlsStack{})]byte
	buf := append(in[:0], 'b')
	if bd.UserAgent {
		ua := sha256.Sum256(userAgent)
		buf = append(buf, ua[:]...)
	}
	if bd.IPPrefix && ip.IsValid() {
		bits, a := network(ip)
		buf = append(buf, byte(bits))
		buf = append(buf, a[:]...)
	}
	if bd.TLSStack {
		buf = append(buf, 't')
		buf = append(buf, stack[:]...)
	}
	sum := sha256.Sum256(buf)
	hex.Encode(h.b[:], sum[:bindingLen/2])
	h.n = bindingLen
	return h
}

// equal reports whether s is this hash.
func (h *bindingHash) equal(s string) bool { return s == string(h.b[:h.n]) }

// String is the hash as tokens carry it ("" when binding is off).
func (h *bindingHash) String() string { return string(h.b[:h.n]) }

// network is the part of ip that device bindings use, which survives a
// visitor's address changing within their network: the /24 of an IPv4
// address, the /48 of an IPv6 one.
func network(ip netip.Addr) (bits int, prefix [16]byte) {
	ip = ip.Unmap()
	bits = 48
	if ip.Is4() {
		bits = 24
	}
	p, _ := ip.Prefix(bits)
	return bits, p.Addr().As16()
}

// signals are the device-binding inputs a cached token was verified with:
// a later request with the same inputs has the same binding hash, so it
// needs no hashing.
type signals struct {
	ua    string
	net   [17]byte // the prefix length, then the network's address
	stack tlsStack
}

// tlsStack is challenge.TLSStack of a client's JA4, zero-padded; all
// zero when the JA4 is unknown.
type tlsStack [24]byte

// binder checks one request's device binding against cached tokens,
// hashing only when the request's inputs differ from those a token was
// verified with. It lives on the stack of one request.
type binder struct {
	bd    Binding
	ua    []byte
	ip    netip.Addr
	stack tlsStack // set by Proxy.binder when Binding.TLSStack
	h     bindingHash
	done  bool
}

func (bd Binding) binder(ua []byte, ip netip.Addr) binder {
	return binder{bd: bd, ua: ua, ip: ip}
}

// hash is the request's binding hash, computed once.
func (b *binder) hash() *bindingHash {
	if !b.done {
		b.h, b.done = b.bd.compute(b.ua, b.ip, &b.stack), true
	}
	return &b.h
}

// signals are the request's inputs, to keep with a token verified for
// them. It allocates (a copy of the User-Agent).
func (b *binder) signals() signals {
	var s signals
	if b.bd.UserAgent {
		s.ua = string(b.ua)
	}
	if b.bd.IPPrefix {
		s.net = b.network()
	}
	s.stack = b.stack
	return s
}

func (b *binder) network() (n [17]byte) {
	if b.ip.IsValid() {
		bits, a := network(b.ip)
		n[0] = byte(bits)
		copy(n[1:], a[:])
	}
	return n
}

// matches reports whether the request's binding is want, the binding of a
// token that was verified for the inputs s.
func (b *binder) matches(s *signals, want string) bool {
	if (!b.bd.UserAgent || s.ua == string(b.ua)) && (!b.bd.IPPrefix || s.net == b.network()) &&
		(!b.bd.TLSStack || s.stack == b.stack) {
		return true
	}
	return b.hash().equal(want)
}
