package admission

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The claims' JSON names and the kid header are a contract with origins
// that verify passes themselves.
func TestTokenClaimNames(t *testing.T) {
	ring := mustRing(t, hsKey("k1"))
	for _, kind := range tokenKinds {
		t.Run(kind.name, func(t *testing.T) {
			tok := mustSign(t)(kind.sign(ring))
			header, payload := decodeToken(t, tok)
			if header["kid"] != "k1" || header["alg"] != "HS256" {
				t.Errorf("header = %v, want kid k1 and alg HS256", header)
			}
			want := []string{"typ", "ev", "vid", "lane", "num", "bind", "iat", "exp"}
			if kind.typ == "wr_ticket" {
				want = append(want, "tr")
			} else {
				want = append(want, "jti")
			}
			if len(payload) != len(want) {
				t.Errorf("payload has %d claims, want %d: %v", len(payload), len(want), payload)
			}
			for _, name := range want {
				if _, ok := payload[name]; !ok {
					t.Errorf("claim %q missing from %v", name, payload)
				}
			}
			if payload["typ"] != kind.typ {
				t.Errorf("typ = %v, want %s", payload["typ"], kind.typ)
			}
			if vid, _ := payload["vid"].(string); len(vid) != 32 || strings.ToLower(vid) != vid {
				t.Errorf("vid = %q, want 32 lower-case hex digits", vid)
			}
			if payload["iat"] != float64(tokenT0.Unix()) {
				t.Errorf("iat = %v, want %d", payload["iat"], tokenT0.Unix())
			}
		})
	}
}

// Claims of the wrong shape are refused even when properly signed.
func TestTokenClaimShapes(t *testing.T) {
	key := hsKey("k1")
	ring := mustRing(t, key)
	now := tokenT0.Add(time.Minute)
	hdr := map[string]any{"alg": "HS256", "kid": "k1", "typ": "JWT"}
	ticket := func(mod func(m map[string]any)) []byte {
		m := map[string]any{
			"typ": "wr_ticket", "ev": "ev", "vid": strings.Repeat("ab", 16), "lane": "public",
			"tr": 0, "num": 0, "bind": "b", "iat": tokenT0.Unix(), "exp": tokenT0.Add(time.Hour).Unix(),
		}
		mod(m)
		b, _ := json.Marshal(m)
		return b
	}
	pass := func(mod func(m map[string]any)) []byte {
		m := map[string]any{
			"typ": "wr_pass", "jti": "abc_-DEF", "ev": "ev", "vid": strings.Repeat("ab", 16), "lane": "public",
			"num": 1, "bind": "b", "iat": tokenT0.Unix(), "exp": tokenT0.Add(time.Hour).Unix(),
		}
		mod(m)
		b, _ := json.Marshal(m)
		return b
	}
	set := func(k string, v any) func(map[string]any) { return func(m map[string]any) { m[k] = v } }
	del := func(k string) func(map[string]any) { return func(m map[string]any) { delete(m, k) } }
	ok := func(map[string]any) {}

	cases := []struct {
		name   string
		mod    func(map[string]any)
		ticket bool // the ticket variant is rejected
		pass   bool // the pass variant is rejected
	}{
		{"well formed", ok, false, false},
		{"vid upper case", set("vid", strings.Repeat("AB", 16)), true, true},
		{"vid short", set("vid", strings.Repeat("a", 31)), true, true},
		{"vid long", set("vid", strings.Repeat("a", 33)), true, true},
		{"vid not hex", set("vid", strings.Repeat("g", 32)), true, true},
		{"vid number", set("vid", 12), true, true},
		{"vid missing", del("vid"), true, true},
		{"num negative", set("num", -1), true, true},
		{"num fraction", set("num", 1.5), true, true},
		{"num string", set("num", "1"), true, true},
		{"num max", set("num", uint64(1<<64-1)), false, false},
		{"tr negative", set("tr", -1), true, true},
		{"tr fraction", set("tr", 0.5), true, true},
		{"tr in a pass", set("tr", 1), false, true},
		{"tr too big", set("tr", uint64(1<<63)), true, true},
		{"tr missing", del("tr"), true, false},
		{"adm in a pass", set("adm", tokenT0.Unix()), true, false},
		{"adm before iat", set("adm", tokenT0.Unix()-3600), true, false},
		{"adm after iat", set("adm", tokenT0.Unix()+1), true, true},
		{"adm zero", set("adm", 0), true, true},
		{"adm negative", set("adm", -1), true, true},
		{"adm string", set("adm", "1"), true, true},
		{"ADM re-cased", set("ADM", tokenT0.Unix()), true, true},
		{"lane empty", set("lane", ""), true, true},
		{"lane 64 bytes", set("lane", strings.Repeat("l", 64)), false, false},
		{"lane 65 bytes", set("lane", strings.Repeat("l", 65)), true, true},
		{"lane missing", del("lane"), true, true},
		{"ev empty", set("ev", ""), true, true},
		{"typ missing", del("typ"), true, true},
		{"typ other", set("typ", "wr_other"), true, true},
		{"iat missing", del("iat"), true, true},
		{"iat zero", set("iat", 0), true, true},
		{"iat fraction", set("iat", float64(tokenT0.Unix())+0.5), true, true},
		{"exp missing", del("exp"), true, true},
		{"exp equals iat", set("exp", tokenT0.Unix()), true, true},
		{"exp before iat", set("exp", tokenT0.Unix()-1), true, true},
		{"exp after year 9999", set("exp", int64(maxUnix+1)), true, true},
		{"jti in a ticket", set("jti", "abc"), true, false},
		{"jti empty", set("jti", ""), true, true},
		{"jti missing", del("jti"), false, true},
		{"jti not base64url", set("jti", "a/b"), true, true},
		{"jti 65 bytes", set("jti", strings.Repeat("j", 65)), true, true},
		{"jti number", set("jti", 5), true, true},
		{"ev number", set("ev", 5), true, true},
		{"ev null", set("ev", nil), true, true},
		{"lane object", set("lane", map[string]any{"a": 1}), true, true},
		{"bind array", set("bind", []any{"b"}), true, true},
		{"bind missing", del("bind"), true, true},
		{"typ number", set("typ", 1), true, true},
		{"num beyond uint64", set("num", json.Number("18446744073709551616")), true, true},
		{"iat negative", set("iat", -5), true, true},
		{"unknown claim", set("extra", 1), false, false},
		{"unknown nested claim", set("extra", map[string]any{"a": []any{1, "}", map[string]any{}}}), false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tok := resignRaw(t, key, hdr, ticket(c.mod))
			_, err := ring.VerifyTicket(tok, "ev", "b", now)
			if c.ticket != (err != nil) || (err != nil && !errors.Is(err, ErrBadToken)) {
				t.Errorf("VerifyTicket = %v, want rejected %v (ErrBadToken)", err, c.ticket)
			}
			tok = resignRaw(t, key, hdr, pass(c.mod))
			_, err = ring.VerifyPass(tok, "ev", "b", now)
			if c.pass != (err != nil) || (err != nil && !errors.Is(err, ErrBadToken)) {
				t.Errorf("VerifyPass = %v, want rejected %v (ErrBadToken)", err, c.pass)
			}
		})
	}
}

// Payloads no signer of this package writes are refused, signed or not.
func TestTokenRawPayloads(t *testing.T) {
	key := hsKey("k1")
	ring := mustRing(t, key)
	hdr := map[string]any{"alg": "HS256", "kid": "k1"}
	const tail = `"vid":"abababababababababababababababab","lane":"public","num":7,"bind":"b","iat":1900000000,"exp":1900003600}`
	now := time.Unix(1900000060, 0)
	ok := `{"typ":"wr_pass","jti":"abc","ev":"ev",` + tail
	if _, err := ring.VerifyPass(resignRaw(t, key, hdr, []byte(ok)), "ev", "b", now); err != nil {
		t.Fatalf("the base payload is refused: %v", err)
	}
	for name, payload := range map[string]string{
		"duplicate claim":                      `{"typ":"wr_pass","jti":"abc","ev":"ev","ev":"ev",` + tail,
		"escaped claim name":                   `{"typ":"wr_pass","jti":"abc","\u0065v":"ev",` + tail,
		"escaped duplicate claim":              `{"typ":"wr_pass","jti":"abc","ev":"ev","\u0065v":"other",` + tail,
		"claim name in other case":             `{"typ":"wr_pass","jti":"abc","EV":"ev",` + tail,
		"claim name in other case, duplicated": `{"typ":"wr_pass","jti":"abc","ev":"ev","Ev":"other",` + tail,
		"event not UTF-8":                      "{\"typ\":\"wr_pass\",\"jti\":\"abc\",\"ev\":\"ev\xff\"," + tail,
		"escaped typ":                          `{"typ":"wr_p\u0061ss","jti":"abc","ev":"ev",` + tail,
		"escaped vid":                          `{"typ":"wr_pass","jti":"abc","ev":"ev","vid":"\u0061bababababababababababababababab",` + tail[len(`"vid":"abababababababababababababababab",`):],
		"num exponent":                         `{"typ":"wr_pass","jti":"abc","ev":"ev",` + strings.Replace(tail, `"num":7`, `"num":7e0`, 1),
		"num leading zero":                     `{"typ":"wr_pass","jti":"abc","ev":"ev",` + strings.Replace(tail, `"num":7`, `"num":07`, 1),
		"num negative zero":                    `{"typ":"wr_pass","jti":"abc","ev":"ev",` + strings.Replace(tail, `"num":7`, `"num":-0`, 1),
		"trailing data":                        ok + `{}`,
		"trailing comma":                       strings.TrimSuffix(ok, "}") + `,}`,
		"not an object":                        `["typ","wr_pass"]`,
		"null":                                 `null`,
		"string":                               `"wr_pass"`,
		"empty":                                ``,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ring.VerifyPass(resignRaw(t, key, hdr, []byte(payload)), "ev", "b", now)
			if !errors.Is(err, ErrBadToken) {
				t.Errorf("VerifyPass(%s) = %v, want ErrBadToken", payload, err)
			}
		})
	}
	// Escapes in values are decoded.
	escaped := `{"typ":"wr_pass","jti":"abc","ev":"e\u0076\n\"",` + strings.Replace(tail, `"b"`, `"\u00e9\ud83d\ude00"`, 1)
	p, err := ring.VerifyPass(resignRaw(t, key, hdr, []byte(escaped)), "ev\n\"", "é😀", now)
	if err != nil || p.Event != "ev\n\"" || p.Binding != "é😀" {
		t.Errorf("escaped values: %+v, %v", p, err)
	}
	// White space anywhere JSON allows it.
	spaced := " {\n\t\"typ\" : \"wr_pass\" ,\r\n \"jti\":\"abc\", \"ev\":\"ev\", \"extra\" : [ 1 , {\"}\":\"]\"} ] ," + tail + " \n"
	if _, err := ring.VerifyPass(resignRaw(t, key, hdr, []byte(spaced)), "ev", "b", now); err != nil {
		t.Errorf("white space: %v", err)
	}
}

// Random claims, including odd strings, round trip exactly; what cannot
// (invalid UTF-8) is refused when signing.
func TestTokenRandomClaimsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rings := []*Keyring{mustRing(t, hsKey("h")), mustRing(t, edKey("e"))}
	alphabet := []rune("aZ09-_./ \"\\<>&\x00\x1f\u00e9\u2028\U0001F600")
	str := func(maxLen int) string {
		n := rng.IntN(maxLen + 1)
		if rng.IntN(20) == 0 { // raw bytes, maybe invalid UTF-8
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.UintN(256))
			}
			return string(b)
		}
		var s strings.Builder
		for s.Len() < n {
			s.WriteRune(alphabet[rng.IntN(len(alphabet))])
		}
		return s.String()
	}
	var signed, refused int
	for i := range 3000 {
		ring := rings[i%2]
		var vid VisitorID
		for j := range vid {
			vid[j] = byte(rng.UintN(256))
		}
		iatS := rng.Int64N(maxUnix/2) + 1
		expS := iatS + 1 + rng.Int64N(maxUnix/2)
		if rng.IntN(2) == 0 {
			expS = iatS + 1 + rng.Int64N(1000)
		}
		iat, exp := time.Unix(iatS, 0).UTC(), time.Unix(expS, 0).UTC()
		now := iat
		tk := Ticket{
			Event: str(40), Visitor: vid, Lane: str(64), Tranche: rng.IntN(1 << 30),
			Number: rng.Uint64(), Binding: str(100), IssuedAt: iat, ExpiresAt: exp,
		}
		p := Pass{
			ID: NewPassID(), Event: tk.Event, Visitor: vid, Lane: tk.Lane, Number: rng.Uint64(),
			Binding: tk.Binding, IssuedAt: iat, ExpiresAt: exp,
		}
		if rng.IntN(10) == 0 {
			p.Number, tk.Number = 0, 0
		}
		valid := tk.Event != "" && tk.Lane != "" && len(tk.Lane) <= 64 &&
			utf8.ValidString(tk.Event) && utf8.ValidString(tk.Lane) && utf8.ValidString(tk.Binding)

		tokT, errT := ring.SignTicket(tk)
		tokP, errP := ring.SignPass(p)
		if !valid {
			if errT == nil || errP == nil {
				t.Fatalf("signing %+v: %v, %v; want refused", tk, errT, errP)
			}
			refused++
			continue
		}
		if errT != nil || errP != nil {
			t.Fatalf("signing %+v: %v, %v", tk, errT, errP)
		}
		gotT, err := ring.VerifyTicket(tokT, tk.Event, tk.Binding, now)
		if err != nil || gotT != tk {
			t.Fatalf("ticket round trip: %v\n got %+v\nwant %+v", err, gotT, tk)
		}
		gotP, err := ring.VerifyPass(tokP, p.Event, p.Binding, now)
		if err != nil || gotP != p {
			t.Fatalf("pass round trip: %v\n got %+v\nwant %+v", err, gotP, p)
		}
		signed++
	}
	if signed < 1000 || refused == 0 {
		t.Errorf("signed %d, refused %d: the generator does not cover both", signed, refused)
	}
}
