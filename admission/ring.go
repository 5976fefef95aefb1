package admission

// ringMinCap is a ring's capacity at its first push; it doubles from there.
const ringMinCap = 16

// ring is a growable FIFO of values, oldest first, indexed from 0: the
// history behind the rate estimator and the controller's admission log.
// It grows by doubling when full and never shrinks, so a ring that
// reaches its steady size stops allocating. The zero value is an empty
// ring. A ring is not safe for concurrent use.
type ring[T any] struct {
	buf     []T
	head, n int
}

// len is how many values the ring holds.
func (q *ring[T]) len() int { return q.n }

// at returns the i-th oldest value; 0 ≤ i < q.len().
func (q *ring[T]) at(i int) T { return q.buf[(q.head+i)%len(q.buf)] }

// setLast replaces the newest value; the ring must not be empty.
func (q *ring[T]) setLast(v T) { q.buf[(q.head+q.n-1)%len(q.buf)] = v }

// push appends v as the newest value.
func (q *ring[T]) push(v T) {
	if q.n == len(q.buf) {
		buf := make([]T, max(ringMinCap, 2*len(q.buf)))
		for i := range q.n {
			buf[i] = q.at(i)
		}
		q.buf, q.head = buf, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = v
	q.n++
}

// pop drops the oldest value; the ring must not be empty.
func (q *ring[T]) pop() {
	q.head = (q.head + 1) % len(q.buf)
	q.n--
}

// clear empties the ring, keeping its buffer.
func (q *ring[T]) clear() { q.head, q.n = 0, 0 }
