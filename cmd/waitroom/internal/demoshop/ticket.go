package demoshop

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"strconv"
	"strings"

	"rsc.io/qr"

	"github.com/waitroom/waitroom/inventory"
)

// TicketPrefix starts every ticket code.
const TicketPrefix = "WRDEMO"

// maxTicketCode bounds the codes VerifyTicket reads: the prefix, the
// longest event and order ids, a MAC and three colons.
const maxTicketCode = len(TicketPrefix) + inventory.MaxEventIDLen + 64 + 22 + 3

// ErrBadTicket is VerifyTicket's error for a code this shop did not issue.
var ErrBadTicket = errors.New("demoshop: not a ticket of this shop")

// TicketCode returns the string the ticket's QR code carries:
// WRDEMO:<event>:<order>:<mac>, where mac is a truncated HMAC-SHA256 of
// the event and order under the shop's secret, so that a door scanner
// holding the secret can tell a real ticket from a made-up one without
// asking the sidecar.
func (s *Shop) TicketCode(order string) string {
	return TicketPrefix + ":" + s.event + ":" + order + ":" + s.ticketMAC(order)
}

func (s *Shop) ticketMAC(order string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte("demoshop ticket\x00" + s.event + "\x00" + order))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// VerifyTicket checks a scanned ticket code and returns its order id. It
// says nothing about whether the order is still valid (not cancelled):
// ask the sidecar (GetOrder) for that.
func (s *Shop) VerifyTicket(code string) (order string, err error) {
	if len(code) > maxTicketCode {
		return "", ErrBadTicket
	}
	parts := strings.Split(code, ":")
	if len(parts) != 4 || parts[0] != TicketPrefix || parts[1] != s.event || !inventory.ValidRecordID(parts[2]) {
		return "", ErrBadTicket
	}
	if !hmac.Equal([]byte(parts[3]), []byte(s.ticketMAC(parts[2]))) {
		return "", ErrBadTicket
	}
	return parts[2], nil
}

// qrQuietZone is the blank border around a QR code, in modules.
const qrQuietZone = 4

// qrSVG renders text as a QR code (error correction level M) in an inline
// SVG: one path of horizontal runs of dark modules on a white square with
// the quiet zone around. The markup holds only numbers of our own
// making, never text, so it is safe to embed as template.HTML.
func qrSVG(text string) (template.HTML, error) {
	code, err := qr.Encode(text, qr.M)
	if err != nil {
		return "", fmt.Errorf("demoshop: encoding a QR code: %w", err)
	}
	n := code.Size + 2*qrQuietZone
	var b strings.Builder
	b.Grow(code.Size * code.Size * 3)
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" class="qr" viewBox="0 0 `)
	b.WriteString(strconv.Itoa(n) + " " + strconv.Itoa(n))
	b.WriteString(`" shape-rendering="crispEdges" aria-hidden="true" focusable="false">`)
	b.WriteString(`<rect width="` + strconv.Itoa(n) + `" height="` + strconv.Itoa(n) + `" fill="#fff"/><path fill="#000" d="`)
	for y := range code.Size {
		for x := 0; x < code.Size; {
			if !code.Black(x, y) {
				x++
				continue
			}
			run := 1
			for x+run < code.Size && code.Black(x+run, y) {
				run++
			}
			fmt.Fprintf(&b, "M%d %dh%dv1h-%dz", x+qrQuietZone, y+qrQuietZone, run, run)
			x += run
		}
	}
	b.WriteString(`"/></svg>`)
	return template.HTML(b.String()), nil
}
