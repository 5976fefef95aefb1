package promtext

import (
	"strconv"
	"strings"
)

// Value returns the value of the first sample of name whose labels
// include every "k=v" of labels, or 0 when there is none.
func Value(text, name string, labels ...string) float64 {
	if v := Samples(text, name, labels...); len(v) > 0 {
		return v[0]
	}
	return 0
}

// Sum is the sum of the samples Value would choose from.
func Sum(text, name string, labels ...string) float64 {
	var sum float64
	for _, v := range Samples(text, name, labels...) {
		sum += v
	}
	return sum
}

// Samples returns the values of the samples of name whose labels include
// every "k=v" of labels.
func Samples(text, name string, labels ...string) []float64 {
	var out []float64
	for _, line := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		sel, val := "", rest
		if strings.HasPrefix(rest, "{") {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				continue
			}
			sel, val = rest[1:end], rest[end+1:]
		}
		match := true
		for _, l := range labels {
			k, v, _ := strings.Cut(l, "=")
			if !strings.Contains(","+sel+",", ","+k+`="`+v+`",`) {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
			out = append(out, f)
		}
	}
	return out
}
