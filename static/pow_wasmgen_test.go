package static

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The WebAssembly search modules web/pow-simd.wasm and web/pow-scalar.wasm
// are written by powWasm below, a small emitter of the WebAssembly binary
// format: no toolchain beyond Go is needed to rebuild them. The test
// checks that the committed files are what powWasm writes, and rewrites
// them with -update (go test ./static -run TestPowWasm -update).
//
// Both modules have one memory (exported as "mem") and one function,
// run(lo, count, mask0, mask1) → i32 (exported as "run"). Bytes 0..59 of
// the memory hold what pow-worker.js's setHi computes for the current
// high half of the nonce (pre[0..14], little-endian int32). run tries the
// nonces whose low halves are lo, lo+1, …, lo+count-1 (the caller keeps
// lo+count within 2^32) and returns the offset from lo of the first one
// whose digest's first word is at most mask0 and second word at most
// mask1 (unsigned; mask = 2^(32-bits) - 1 asks for bits leading zero
// bits), or -1 when none is. The SIMD module hashes four nonces per pass
// in i32x4 lanes (WebAssembly has no vector rotate: each is two shifts
// and an or); the scalar one hashes one per pass with i32.rotr.
//
// What does not depend on the nonce's low half is computed once: rounds
// 0..6 and the schedule words W[16..20] in JavaScript (setHi), and in the
// module, before the loop, the round words K[t]+W[t] of rounds 16..20 and
// the terms of W[23..] made of W[16..20] and the fixed words. Round 63
// computes only the new a (the digest's first word).

// The WebAssembly opcodes used.
const (
	opBlock    = 0x02
	opLoop     = 0x03
	opIf       = 0x04
	opEnd      = 0x0b
	opBr       = 0x0c
	opBrIf     = 0x0d
	opReturn   = 0x0f
	opGet      = 0x20
	opSet      = 0x21
	opTee      = 0x22
	opI32Load  = 0x28
	opI32Const = 0x41
	opI32LtU   = 0x49
	opI32GeU   = 0x4f
	opI32LeU   = 0x4d
	opI32Ctz   = 0x68
	opI32Add   = 0x6a
	opI32Sub   = 0x6b
	opI32And   = 0x71
	opI32Or    = 0x72
	opI32Xor   = 0x73
	opI32Shl   = 0x74
	opI32ShrU  = 0x76
	opI32Rotr  = 0x78
	opSIMD     = 0xfd // prefix of the SIMD opcodes below (LEB128 after it)
	typeI32    = 0x7f
	typeV128   = 0x7b
	blockEmpty = 0x40

	simdLoad32Splat = 0x09
	simdConst       = 0x0c
	simdI32x4Splat  = 0x11
	simdI32x4LeU    = 0x3e
	simdAnd         = 0x4e
	simdOr          = 0x50
	simdXor         = 0x51
	simdAnyTrue     = 0x53
	simdI32x4Bitmsk = 0xa4
	simdI32x4Shl    = 0xab
	simdI32x4ShrU   = 0xad
	simdI32x4Add    = 0xae
)

func appendULEB(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendSLEB(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// wasmKernel emits the body of run, for four lanes (simd) or one.
type wasmKernel struct {
	simd bool
	code []byte
	// nval is the number of value locals (v128, or i32 for scalar)
	// allocated after the fixed i32 ones.
	nval int
}

// The fixed locals: run's parameters, then three i32 scratch locals.
const (
	locLo, locCount, locMask0, locMask1 = 0, 1, 2, 3
	locI, locR, locRem                  = 4, 5, 6
	firstValLocal                       = 7
)

func (k *wasmKernel) op(b ...byte) { k.code = append(k.code, b...) }

func (k *wasmKernel) simdOp(o uint64) { k.code = appendULEB(append(k.code, opSIMD), o) }

func (k *wasmKernel) local() uint32 {
	k.nval++
	return uint32(firstValLocal + k.nval - 1)
}

func (k *wasmKernel) get(l uint32) { k.code = appendULEB(append(k.code, opGet), uint64(l)) }
func (k *wasmKernel) set(l uint32) { k.code = appendULEB(append(k.code, opSet), uint64(l)) }
func (k *wasmKernel) tee(l uint32) { k.code = appendULEB(append(k.code, opTee), uint64(l)) }

func (k *wasmKernel) i32(v uint32) { k.code = appendSLEB(append(k.code, opI32Const), int64(int32(v))) }

// The value operations: on v128 (four lanes) or i32.

func (k *wasmKernel) vconst(v uint32) {
	if !k.simd {
		k.i32(v)
		return
	}
	k.simdOp(simdConst)
	for range 4 {
		k.code = append(k.code, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
}

func (k *wasmKernel) binop(scalar byte, simd uint64) {
	if k.simd {
		k.simdOp(simd)
	} else {
		k.op(scalar)
	}
}

func (k *wasmKernel) add() { k.binop(opI32Add, simdI32x4Add) }
func (k *wasmKernel) xor() { k.binop(opI32Xor, simdXor) }
func (k *wasmKernel) and() { k.binop(opI32And, simdAnd) }

// shr pushes local l shifted right by n (logically).
func (k *wasmKernel) shr(l uint32, n uint32) {
	k.get(l)
	k.i32(n)
	k.binop(opI32ShrU, simdI32x4ShrU)
}

// rotr pushes local l rotated right by n.
func (k *wasmKernel) rotr(l uint32, n uint32) {
	if !k.simd {
		k.get(l)
		k.i32(n)
		k.op(opI32Rotr)
		return
	}
	k.shr(l, n)
	k.get(l)
	k.i32(32 - n)
	k.simdOp(simdI32x4Shl)
	k.simdOp(simdOr)
}

// sigma pushes rotr(l, r1) ^ rotr(l, r2) ^ rotr(l, r3), or with l
// shifted right by r3 for the last term (shift): SHA-256's four sigma
// functions of a local.
func (k *wasmKernel) sigma(l, r1, r2, r3 uint32, shift bool) {
	k.rotr(l, r1)
	k.rotr(l, r2)
	k.xor()
	if shift {
		k.shr(l, r3)
	} else {
		k.rotr(l, r3)
	}
	k.xor()
}

func (k *wasmKernel) bigSigma0(l uint32)   { k.sigma(l, 2, 13, 22, false) }
func (k *wasmKernel) bigSigma1(l uint32)   { k.sigma(l, 6, 11, 25, false) }
func (k *wasmKernel) smallSigma0(l uint32) { k.sigma(l, 7, 18, 3, true) }
func (k *wasmKernel) smallSigma1(l uint32) { k.sigma(l, 17, 19, 10, true) }

// loadPre pushes pre[i] from memory (splat into four lanes).
func (k *wasmKernel) loadPre(i int) {
	k.i32(0)
	if k.simd {
		k.simdOp(simdLoad32Splat)
	} else {
		k.op(opI32Load)
	}
	k.code = appendULEB(appendULEB(k.code, 2), uint64(4*i)) // align 4, offset
}

// The IV's first two words, added to the state to make the digest's.
const powIV0, powIV1 = 0x6a09e667, 0xbb67ae85

// powKernelBody returns run's locals declaration and code.
func powKernelBody(simd bool) []byte {
	k := &wasmKernel{simd: simd}
	// The schedule's fixed words: the padding bit, zeros, the length.
	fixed := map[int]uint32{7: 0x80000000, 8: 0, 9: 0, 10: 0, 11: 0, 12: 0, 13: 0, 14: 0, 15: 224}
	callConst := func(j int) bool { return j >= 16 && j <= 20 }

	// Before the loop: pre[0..14] into locals.
	var pre [15]uint32
	for i := range pre {
		pre[i] = k.local()
		k.loadPre(i)
		k.set(pre[i])
	}
	// The nonces' low halves: lo (+0, +1, +2, +3 in the lanes), and the
	// masks.
	x, mask0, mask1 := uint32(locLo), uint32(locMask0), uint32(locMask1)
	if simd {
		x, mask0, mask1 = k.local(), k.local(), k.local()
		k.get(locLo)
		k.simdOp(simdI32x4Splat)
		k.simdOp(simdConst)
		for i := range 4 {
			k.code = append(k.code, byte(i), 0, 0, 0)
		}
		k.add()
		k.set(x)
		for _, m := range [][2]uint32{{locMask0, mask0}, {locMask1, mask1}} {
			k.get(m[0])
			k.simdOp(simdI32x4Splat)
			k.set(m[1])
		}
	}
	// W[t], by where it lives: w[t] a local (W[16..20] are pre[8..12]).
	w := map[int]uint32{16: pre[8], 17: pre[9], 18: pre[10], 19: pre[11], 20: pre[12]}
	// kw[t] is K[t] + W[t] for rounds 16..20, computed once.
	kw := map[int]uint32{}
	for t := 16; t <= 20; t++ {
		kw[t] = k.local()
		k.get(w[t])
		k.vconst(powK[t])
		k.add()
		k.set(kw[t])
	}
	// cw[t] (t >= 23) is the sum of W[t]'s terms that do not depend on
	// the nonce's low half (fixed words and W[16..20]), computed once;
	// ccw[t] is that sum when it is only a constant.
	type term struct {
		j   int
		sig func(uint32) // pushes the sigma of a local
		f   func(uint32) uint32
	}
	terms := func(t int) []term {
		return []term{{t - 2, k.smallSigma1, sig1}, {t - 7, nil, nil}, {t - 15, k.smallSigma0, sig0}, {t - 16, nil, nil}}
	}
	// sum pushes the sum of W[t]'s terms W[j] (or their sigma) that are
	// not fixed words and for which which(j) holds; it returns how many
	// (none: nothing pushed).
	sum := func(t int, which func(j int) bool) int {
		n := 0
		for _, tm := range terms(t) {
			if _, ok := fixed[tm.j]; ok || !which(tm.j) {
				continue
			}
			if tm.sig != nil {
				tm.sig(w[tm.j])
			} else {
				k.get(w[tm.j])
			}
			if n > 0 {
				k.add()
			}
			n++
		}
		return n
	}
	cw := map[int]uint32{}
	ccw := map[int]uint32{}
	for t := 23; t < 64; t++ {
		var c uint32
		for _, tm := range terms(t) {
			if v, ok := fixed[tm.j]; ok {
				if tm.f != nil {
					v = tm.f(v)
				}
				c += v
			}
		}
		n := sum(t, callConst)
		switch {
		case n == 0:
			ccw[t] = c
			continue
		case c != 0:
			k.vconst(c)
			k.add()
		}
		cw[t] = k.local()
		k.set(cw[t])
	}

	// The state: s[i] holds the variable named 'a'+i; in round t, state
	// word i (a..h) is in s[(i-t) mod 8]. t1 and the two a^b of Maj.
	var s [8]uint32
	for i := range s {
		s[i] = k.local()
	}
	t1 := k.local()
	var ab [2]uint32
	ab[0], ab[1] = k.local(), k.local()
	at := func(t, i int) uint32 { return s[((i-t)%8+8)%8] }

	// The loop: i counts the nonces tried.
	k.op(opBlock, blockEmpty)
	k.op(opLoop, blockEmpty)
	k.get(locI)
	k.get(locCount)
	k.op(opI32GeU, opBrIf, 1)

	// The state after round 6: pre[0..7] with the low half added to a
	// and e. W[21] and W[22] add their low-half terms to pre[13], pre[14].
	for i := range 8 {
		k.get(pre[i])
		if i == 0 || i == 4 {
			k.get(x)
			k.add()
		}
		k.set(at(7, i))
	}
	w[21] = k.local()
	k.get(pre[13])
	k.smallSigma0(x)
	k.add()
	k.set(w[21])
	w[22] = k.local()
	k.get(pre[14])
	k.get(x)
	k.add()
	k.set(w[22])
	// Maj's b^c of round 7.
	k.get(at(7, 1))
	k.get(at(7, 2))
	k.xor()
	k.set(ab[0])

	for t := 7; t < 64; t++ {
		if t >= 23 {
			// W[t] = sig1(W[t-2]) + W[t-7] + sig0(W[t-15]) + W[t-16].
			sum(t, func(j int) bool { return !callConst(j) })
			if l, ok := cw[t]; ok {
				k.get(l)
				k.add()
			} else if ccw[t] != 0 {
				k.vconst(ccw[t])
				k.add()
			}
			w[t] = k.local()
			k.set(w[t])
		}
		a, b, d, e, f, g, h := at(t, 0), at(t, 1), at(t, 3), at(t, 4), at(t, 5), at(t, 6), at(t, 7)
		// t1 = h + Sigma1(e) + Ch(e, f, g) + K[t] + W[t]
		k.get(h)
		k.bigSigma1(e)
		k.add()
		k.get(g)
		k.get(f)
		k.get(g)
		k.xor()
		k.get(e)
		k.and()
		k.xor()
		k.add()
		switch {
		case fixed[t] != 0 || t < 16:
			k.vconst(powK[t] + fixed[t])
		case kw[t] != 0:
			k.get(kw[t])
		default:
			k.vconst(powK[t])
			k.add()
			k.get(w[t])
		}
		k.add()
		k.set(t1)
		if t < 63 {
			// e = d + t1
			k.get(d)
			k.get(t1)
			k.add()
			k.set(d)
		}
		// a = t1 + Sigma0(a) + Maj(a, b, c), Maj = b ^ ((a^b) & (b^c)),
		// b^c being the previous round's a^b.
		k.get(t1)
		k.bigSigma0(a)
		k.add()
		k.get(b)
		k.get(a)
		k.get(b)
		k.xor()
		k.tee(ab[t%2])
		k.get(ab[(t+1)%2])
		k.and()
		k.xor()
		k.add()
		k.set(h)
	}

	// The digest's first two words against the masks.
	atMost := func(state, iv, mask uint32) {
		k.get(state)
		k.vconst(iv)
		k.add()
		k.get(mask)
		k.binop(opI32LeU, simdI32x4LeU)
	}
	atMost(s[0], powIV0, mask0)
	atMost(s[1], powIV1, mask1)
	k.and()
	if simd {
		hit := k.local()
		k.tee(hit)
		k.simdOp(simdAnyTrue)
		k.op(opIf, blockEmpty)
		// r: the lanes that hit, as bits; past count, none.
		k.get(hit)
		k.simdOp(simdI32x4Bitmsk)
		k.set(locR)
		k.get(locCount)
		k.get(locI)
		k.op(opI32Sub)
		k.tee(locRem)
		k.i32(4)
		k.op(opI32LtU, opIf, blockEmpty)
		k.get(locR)
		k.i32(1)
		k.get(locRem)
		k.op(opI32Shl)
		k.i32(1)
		k.op(opI32Sub, opI32And)
		k.set(locR)
		k.op(opEnd)
		k.get(locR)
		k.op(opIf, blockEmpty)
		k.get(locI)
		k.get(locR)
		k.op(opI32Ctz, opI32Add, opReturn, opEnd)
		k.op(opEnd)
		// Next four.
		k.get(x)
		k.vconst(4)
		k.add()
		k.set(x)
	} else {
		k.op(opIf, blockEmpty)
		k.get(locI)
		k.op(opReturn, opEnd)
		k.get(x)
		k.i32(1)
		k.op(opI32Add)
		k.set(x)
	}
	k.get(locI)
	step := uint32(1)
	if simd {
		step = 4
	}
	k.i32(step)
	k.op(opI32Add)
	k.set(locI)
	k.op(opBr, 0, opEnd, opEnd)
	k.i32(0xffffffff)
	k.op(opEnd)

	valType := byte(typeI32)
	if simd {
		valType = typeV128
	}
	body := appendULEB(nil, 2)
	body = appendULEB(body, 3)
	body = append(body, typeI32)
	body = appendULEB(body, uint64(k.nval))
	body = append(body, valType)
	return append(body, k.code...)
}

// powWasm returns the search module, SIMD or scalar.
func powWasm(simd bool) []byte {
	section := func(out []byte, id byte, content []byte) []byte {
		out = append(out, id)
		out = appendULEB(out, uint64(len(content)))
		return append(out, content...)
	}
	name := func(b []byte, s string) []byte { return append(appendULEB(b, uint64(len(s))), s...) }
	m := []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}
	// Type 0: (i32, i32, i32, i32) -> i32.
	m = section(m, 1, []byte{1, 0x60, 4, typeI32, typeI32, typeI32, typeI32, 1, typeI32})
	// Function 0 has type 0.
	m = section(m, 3, []byte{1, 0})
	// Memory 0: one page, no maximum.
	m = section(m, 5, []byte{1, 0x00, 1})
	// Exports: run and mem.
	exp := []byte{2}
	exp = append(name(exp, "run"), 0x00, 0)
	exp = append(name(exp, "mem"), 0x02, 0)
	m = section(m, 7, exp)
	body := powKernelBody(simd)
	code := appendULEB(appendULEB(nil, 1), uint64(len(body)))
	m = section(m, 10, append(code, body...))
	return m
}

func TestPowWasm(t *testing.T) {
	for _, c := range []struct {
		name string
		simd bool
	}{{"pow-simd.wasm", true}, {"pow-scalar.wasm", false}} {
		path := filepath.Join("web", c.name)
		want := powWasm(c.simd)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./static -run TestPowWasm -update)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from powWasm(%v); run go test ./static -run TestPowWasm -update", path, c.simd)
		}
	}
}

func TestLEB128(t *testing.T) {
	for _, c := range []struct {
		v    int64
		want []byte
	}{{0, []byte{0}}, {63, []byte{0x3f}}, {64, []byte{0xc0, 0}}, {-1, []byte{0x7f}}, {-64, []byte{0x40}}, {-65, []byte{0xbf, 0x7f}}, {624485, []byte{0xe5, 0x8e, 0x26}}} {
		if got := appendSLEB(nil, c.v); !bytes.Equal(got, c.want) {
			t.Errorf("sleb(%d) = % x; want % x", c.v, got, c.want)
		}
	}
	if got := appendULEB(nil, 624485); !bytes.Equal(got, []byte{0xe5, 0x8e, 0x26}) {
		t.Errorf("uleb(624485) = % x", got)
	}
}
