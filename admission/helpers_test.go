package admission

import "time"

func testTime() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) }

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
