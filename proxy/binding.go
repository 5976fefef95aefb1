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
func (bd Binding) compute(userAgent []byte, ip netip.Addr) bindingHash {
	var h bindingHash
	if !bd.UserAgent && !bd.IPPrefix {
		return h
	}
	var in [1 + sha256.Size + 1 + 16 + 1]byte
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
