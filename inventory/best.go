package inventory

// SeatFree marks an available seat in a row's status bytes; any other byte
// is a seat that is taken. Stores keep one byte per seat so that the
// best-available search reads a row at a time.
const SeatFree = '.'

// Block is a run of adjacent seats: Section and Row index into the rows
// given to BestBlock, Start is the 0-based index of the first seat.
type Block struct {
	Section, Row, Start int
}

// blockRank orders candidate blocks: a block that leaves no single orphan
// seat beats one that does; then front rows, then earlier sections, then
// the block nearest the row's centre, then the lower seat number.
type blockRank struct {
	orphan  bool
	row     int
	section int
	dist    int
	start   int
}

func (a blockRank) less(b blockRank) bool {
	if a.orphan != b.orphan {
		return !a.orphan
	}
	if a.row != b.row {
		return a.row < b.row
	}
	if a.section != b.section {
		return a.section < b.section
	}
	if a.dist != b.dist {
		return a.dist < b.dist
	}
	return a.start < b.start
}

// BestBlock picks n adjacent free seats from sections[s][r], the status
// bytes of row r of section s (front row first). The rules, in order:
// never leave a single orphan seat between the block and a taken seat or
// the row's end when another choice exists; front rows first (row index,
// across sections); earlier sections; nearest the row's centre; lowest
// seat number. The Redis store's Lua implements the same rules and the
// conformance suite holds the two to it.
func BestBlock(sections [][][]byte, n int) (Block, bool) {
	maxRows := 0
	for _, rows := range sections {
		maxRows = max(maxRows, len(rows))
	}
	var best blockRank
	found := false
	for r := 0; r < maxRows; r++ {
		for s, rows := range sections {
			if r >= len(rows) {
				continue
			}
			if c, ok := bestInRow(rows[r], n); ok {
				c.row, c.section = r, s
				if !found || c.less(best) {
					best, found = c, true
				}
			}
		}
		// Rows behind this one can only win on the orphan rule.
		if found && !best.orphan {
			break
		}
	}
	return Block{Section: best.section, Row: best.row, Start: best.start}, found
}

// bestInRow returns the best placement of n seats within one row.
func bestInRow(row []byte, n int) (blockRank, bool) {
	var best blockRank
	found := false
	length := len(row)
	for a := 0; a < length; {
		if row[a] != SeatFree {
			a++
			continue
		}
		b := a
		for b+1 < length && row[b+1] == SeatFree {
			b++
		}
		if b-a+1 >= n {
			if c := bestInRun(a, b, n, length); !found || c.less(best) {
				best, found = c, true
			}
		}
		a = b + 1
	}
	return best, found
}

// bestInRun places n seats in the free run [a, b] of a row of length seats.
// The distance to the centre is convex in the start, and only two starts
// (a+1 and b-n) leave an orphan, so the best start is one of the run's
// ends or within two of the unconstrained optimum.
func bestInRun(a, b, n, length int) blockRank {
	lo, hi := a, b-n+1
	ideal := (length - n) / 2
	var best blockRank
	found := false
	try := func(s int) {
		if s < lo || s > hi {
			return
		}
		c := blockRank{
			orphan: s-a == 1 || b-(s+n-1) == 1,
			dist:   abs(2*s + n - length),
			start:  s,
		}
		if !found || c.less(best) {
			best, found = c, true
		}
	}
	try(lo)
	try(hi)
	for s := ideal - 2; s <= ideal+3; s++ {
		try(s)
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
