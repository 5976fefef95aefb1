package ledger

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Limits of an orders file.
const (
	// MaxOrderLine bounds one line of a JSON Lines orders file.
	MaxOrderLine = 1 << 20
	// MaxIDLen bounds an order id and a seat id.
	MaxIDLen = 256
)

// ErrOrdersFile is wrapped by every error about an orders file's content.
var ErrOrdersFile = errors.New("ledger: bad orders file")

// Orders are the origin's sold seats: each seat with the order that
// bought it.
type Orders struct {
	// Seats maps a seat id to its order id.
	Seats map[string]string
	// Orders counts the distinct orders.
	Orders int
}

// ReadOrders reads the origin's orders file: JSON Lines or CSV, told
// apart by the first character that is not white space ('{' is JSON).
//
// JSON Lines: one order per line, {"order_id":"A-1001","seats":["A-1-1","A-1-2"]}
// (other fields are ignored; blank lines are skipped).
//
// CSV: a header row naming an order_id column and a seat column (one
// seat per row; an order spans several rows) or a seats column (the
// order's seats separated by spaces or semicolons); other columns are
// ignored.
//
// An order id or seat id must be 1 to MaxIDLen bytes without control
// characters; a seat sold to two different orders is an error. Errors
// wrap ErrOrdersFile and name the line.
func ReadOrders(r io.Reader) (*Orders, error) {
	br := bufio.NewReader(r)
	for {
		c, _, err := br.ReadRune()
		if err == io.EOF {
			return &Orders{Seats: map[string]string{}}, nil
		}
		if err != nil {
			return nil, err
		}
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\ufeff' {
			continue
		}
		br.UnreadRune()
		if c == '{' {
			return readJSONLines(br)
		}
		return readCSV(br)
	}
}

type orderSet struct {
	o      Orders
	orders map[string]bool
}

func (s *orderSet) add(line int, order string, seats []string) error {
	if !validID(order) {
		return fmt.Errorf("%w: line %d: order id must be 1 to %d characters without control characters", ErrOrdersFile, line, MaxIDLen)
	}
	if !s.orders[order] {
		s.orders[order] = true
		s.o.Orders++
	}
	for _, seat := range seats {
		if !validID(seat) {
			return fmt.Errorf("%w: line %d: seat id must be 1 to %d characters without control characters", ErrOrdersFile, line, MaxIDLen)
		}
		if prev, ok := s.o.Seats[seat]; ok && prev != order {
			return fmt.Errorf("%w: line %d: seat %q is in orders %q and %q", ErrOrdersFile, line, seat, prev, order)
		}
		s.o.Seats[seat] = order
	}
	return nil
}

func validID(s string) bool {
	return s != "" && len(s) <= MaxIDLen && !strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0x7f || r == '\ufffd' })
}

func newOrderSet() *orderSet {
	return &orderSet{o: Orders{Seats: map[string]string{}}, orders: map[string]bool{}}
}

func readJSONLines(r *bufio.Reader) (*Orders, error) {
	set := newOrderSet()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxOrderLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var o struct {
			OrderID *string  `json:"order_id"`
			Seats   []string `json:"seats"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&o); err != nil || dec.More() {
			return nil, fmt.Errorf("%w: line %d: not one JSON object with order_id and seats", ErrOrdersFile, line)
		}
		if o.OrderID == nil {
			return nil, fmt.Errorf("%w: line %d: no order_id", ErrOrdersFile, line)
		}
		if err := set.add(line, *o.OrderID, o.Seats); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: line %d: longer than %d bytes", ErrOrdersFile, line+1, MaxOrderLine)
		}
		return nil, err
	}
	return &set.o, nil
}

func readCSV(r io.Reader) (*Orders, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: line 1: no CSV header: %v", ErrOrdersFile, err)
	}
	head = slices.Clone(head)
	orderCol, seatCol, seatsCol := -1, -1, -1
	for i, h := range head {
		switch strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))) {
		case "order_id":
			orderCol = i
		case "seat", "seat_id":
			seatCol = i
		case "seats":
			seatsCol = i
		}
	}
	if orderCol < 0 || (seatCol < 0) == (seatsCol < 0) {
		return nil, fmt.Errorf("%w: line 1: the header needs an order_id column and one of seat or seats", ErrOrdersFile)
	}
	set := newOrderSet()
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrOrdersFile, err)
		}
		line, _ := cr.FieldPos(0)
		col := max(orderCol, seatCol, seatsCol)
		if len(rec) <= col {
			return nil, fmt.Errorf("%w: line %d: %d fields, want at least %d", ErrOrdersFile, line, len(rec), col+1)
		}
		var seats []string
		if seatCol >= 0 {
			seats = []string{strings.TrimSpace(rec[seatCol])}
		} else {
			seats = strings.FieldsFunc(rec[seatsCol], func(r rune) bool { return r == ' ' || r == ';' || r == '\t' })
		}
		if err := set.add(line, strings.TrimSpace(rec[orderCol]), seats); err != nil {
			return nil, err
		}
	}
	return &set.o, nil
}
