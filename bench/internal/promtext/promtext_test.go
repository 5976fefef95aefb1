package promtext

import "testing"

const text = `# HELP waitroom_joins_total Joins.
# TYPE waitroom_joins_total counter
waitroom_joins_total{event="a",result="joined"} 3
waitroom_joins_total{event="a",result="shadowed"} 2
waitroom_joins_total{event="b",result="joined"} 5
waitroom_joins_total_other 7
waitroom_up 1
`

func TestSamples(t *testing.T) {
	for _, c := range []struct {
		name   string
		labels []string
		value  float64
		sum    float64
	}{
		{"waitroom_joins_total", []string{"event=a", "result=joined"}, 3, 3},
		{"waitroom_joins_total", []string{"event=a"}, 3, 5},
		{"waitroom_joins_total", nil, 3, 10},
		{"waitroom_joins_total", []string{"result=refused"}, 0, 0},
		{"waitroom_up", nil, 1, 1},
		{"waitroom_missing", nil, 0, 0},
	} {
		if v := Value(text, c.name, c.labels...); v != c.value {
			t.Errorf("Value(%s, %v) = %v, want %v", c.name, c.labels, v, c.value)
		}
		if v := Sum(text, c.name, c.labels...); v != c.sum {
			t.Errorf("Sum(%s, %v) = %v, want %v", c.name, c.labels, v, c.sum)
		}
	}
}
