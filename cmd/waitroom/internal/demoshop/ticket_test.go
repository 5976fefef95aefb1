package demoshop

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"rsc.io/qr"

	"github.com/waitroom/waitroom/inventory"
	"github.com/waitroom/waitroom/inventory/client"
)

func testShop(t testing.TB, event, secret string) *Shop {
	t.Helper()
	s, err := New(Options{Inventory: client.New("http://127.0.0.1:1", "t"), Event: event, Secret: []byte(secret)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTicketCodes(t *testing.T) {
	s := testShop(t, testEvent, "0123456789abcdef0123")
	order := inventory.NewID(inventory.OrderIDPrefix)
	code := s.TicketCode(order)
	if got, err := s.VerifyTicket(code); err != nil || got != order {
		t.Fatalf("VerifyTicket(%q) = %q, %v", code, got, err)
	}
	mac := code[strings.LastIndexByte(code, ':')+1:]
	flipped := []byte(mac)
	flipped[0] ^= 1
	tests := []struct {
		name string
		shop *Shop
		code string
	}{
		{"tampered order", s, "WRDEMO:" + testEvent + ":" + inventory.NewID(inventory.OrderIDPrefix) + ":" + mac},
		{"tampered mac", s, "WRDEMO:" + testEvent + ":" + order + ":" + string(flipped)},
		{"no mac", s, "WRDEMO:" + testEvent + ":" + order + ":"},
		{"another event", testShop(t, "other", "0123456789abcdef0123"), code},
		{"another secret", testShop(t, testEvent, "another secret 0123"), code},
		{"another prefix", s, "WRDEMX" + strings.TrimPrefix(code, "WRDEMO")},
		{"extra part", s, code + ":x"},
		{"bad order id", s, "WRDEMO:" + testEvent + ":ord/x:" + mac},
		{"empty", s, ""},
		{"too long", s, code + strings.Repeat("A", maxTicketCode)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := tt.shop.VerifyTicket(tt.code); !errors.Is(err, ErrBadTicket) || got != "" {
				t.Fatalf("VerifyTicket(%q) = %q, %v; want ErrBadTicket", tt.code, got, err)
			}
		})
	}
}

var runRe = regexp.MustCompile(`M(\d+) (\d+)h(\d+)v1h-(\d+)z`)

// TestQRSVG reads the modules back out of the SVG and compares them with
// the library's own encoding of the ticket code.
func TestQRSVG(t *testing.T) {
	s := testShop(t, testEvent, "0123456789abcdef0123")
	for _, text := range []string{s.TicketCode(inventory.NewID(inventory.OrderIDPrefix)), "WRDEMO", strings.Repeat("x", 300)} {
		t.Run(strconv.Itoa(len(text)), func(t *testing.T) {
			svg, err := qrSVG(text)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := qrSVG(text)
			if svg != again {
				t.Fatal("the SVG is not deterministic")
			}
			code, err := qr.Encode(text, qr.M)
			if err != nil {
				t.Fatal(err)
			}
			n := code.Size + 2*qrQuietZone
			if !strings.Contains(string(svg), `viewBox="0 0 `+strconv.Itoa(n)+" "+strconv.Itoa(n)+`"`) {
				t.Fatalf("viewBox is not %d modules:\n%s", n, svg)
			}
			dark := make([]bool, code.Size*code.Size)
			for _, m := range runRe.FindAllStringSubmatch(string(svg), -1) {
				x, _ := strconv.Atoi(m[1])
				y, _ := strconv.Atoi(m[2])
				run, _ := strconv.Atoi(m[3])
				if m[3] != m[4] {
					t.Fatalf("run %q is not a 1-module-high rectangle", m[0])
				}
				x, y = x-qrQuietZone, y-qrQuietZone
				for i := range run {
					if x+i < 0 || x+i >= code.Size || y < 0 || y >= code.Size || dark[y*code.Size+x+i] {
						t.Fatalf("run %q leaves the code or overlaps another", m[0])
					}
					dark[y*code.Size+x+i] = true
				}
			}
			for y := range code.Size {
				for x := range code.Size {
					if dark[y*code.Size+x] != code.Black(x, y) {
						t.Fatalf("module (%d,%d) is %v in the SVG, %v in the code", x, y, dark[y*code.Size+x], code.Black(x, y))
					}
				}
			}
		})
	}
	if _, err := qrSVG(strings.Repeat("x", 5000)); err == nil {
		t.Fatal("a text too long for a QR code was encoded")
	}
}

// FuzzVerifyTicket: no input panics, and only the shop's own codes pass.
func FuzzVerifyTicket(f *testing.F) {
	s := testShop(f, testEvent, "0123456789abcdef0123")
	good := s.TicketCode("ord_abcdefghijklmnopqrstuvwxyz")
	for _, c := range []string{good, good[:len(good)-1], "WRDEMO:::", "WRDEMO:" + testEvent + ":ord_x:", ":::", ""} {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, code string) {
		order, err := s.VerifyTicket(code)
		if err != nil {
			if !errors.Is(err, ErrBadTicket) || order != "" {
				t.Fatalf("VerifyTicket(%q) = %q, %v", code, order, err)
			}
			return
		}
		if s.TicketCode(order) != code {
			t.Fatalf("VerifyTicket accepted %q, which is not the code of %q", code, order)
		}
	})
}
