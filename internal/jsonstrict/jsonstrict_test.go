package jsonstrict

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// sample is a body of every kind of field, read by readSample and, for
// comparison, by encoding/json.
type sample struct {
	S    string   `json:"s"`
	N    int64    `json:"n"`
	U    uint64   `json:"u"`
	List []string `json:"list"`
	Obj  *struct {
		A string `json:"a"`
	} `json:"obj"`
}

func readSample(body []byte) (sample, error) {
	var s sample
	err := Decode(body, func(r *Reader, name []byte) (err error) {
		if r.Null() {
			return nil
		}
		switch string(name) {
		case "s":
			s.S, err = r.String("s")
		case "n":
			s.N, err = r.Int("n", math.MinInt64, math.MaxInt64)
		case "u":
			s.U, err = r.Uint("u", math.MaxUint64)
		case "list":
			s.List, err = r.Strings("list")
		case "obj":
			s.Obj = &struct {
				A string `json:"a"`
			}{}
			err = r.Object("obj", func(r *Reader, k []byte) (err error) {
				if r.Null() {
					return nil
				}
				if string(k) != "a" {
					return UnknownField("obj", k)
				}
				s.Obj.A, err = r.String("obj.a")
				return err
			})
		case "skip":
			err = r.Skip()
		default:
			err = UnknownField("", name)
		}
		return err
	})
	return s, err
}

func TestDecodeAccepts(t *testing.T) {
	for name, c := range map[string]struct {
		body string
		want sample
	}{
		"empty object":   {`{}`, sample{}},
		"white space":    {" \t\r\n{ \"s\" : \"x\" } \n", sample{S: "x"}},
		"escapes":        {`{"s":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83c\udfab"}`, sample{S: "a\"b\\c/d\b\f\n\r\t\u00e9\U0001F3AB"}},
		"ints":           {`{"n":-9223372036854775808,"u":18446744073709551615}`, sample{N: math.MinInt64, U: math.MaxUint64}},
		"zero":           {`{"n":0,"u":0}`, sample{}},
		"negative zero":  {`{"n":-0}`, sample{}},
		"null is absent": {`{"s":null,"obj":null,"list":null}`, sample{}},
		"list":           {`{"list":["a","b"]}`, sample{List: []string{"a", "b"}}},
		"nested": {`{"obj":{"a":"x"}}`, sample{Obj: &struct {
			A string `json:"a"`
		}{A: "x"}}},
		"skipped": {`{"skip":{"x":[1,-2.5e+3,true,false,null,"\u0041",{"y":{}}]},"s":"k"}`, sample{S: "k"}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := readSample([]byte(c.body))
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("read %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestDecodeRejects is the attack table: each known-bad shape and the
// words of its refusal.
func TestDecodeRejects(t *testing.T) {
	for name, c := range map[string]struct{ body, msg string }{
		"empty":                {``, "a JSON object is required"},
		"blank":                {"  \n", "a JSON object is required"},
		"array":                {`[1]`, "must be a JSON object"},
		"string":               {`"s"`, "must be a JSON object"},
		"null":                 {`null`, "must be a JSON object"},
		"trailing data":        {`{"s":"x"} x`, "unexpected data after"},
		"second object":        {`{}{}`, "unexpected data after"},
		"trailing comma":       {`{"s":"x",}`, "malformed JSON"},
		"truncated":            {`{"s":"x"`, "truncated"},
		"truncated string":     {`{"s":"x`, "truncated"},
		"duplicate":            {`{"s":"a","s":"b"}`, `field "s" given twice`},
		"duplicate nested":     {`{"obj":{"a":"1","a":"2"}}`, `field "obj.a" given twice`},
		"duplicate skipped":    {`{"skip":{"x":1,"x":2}}`, `given twice`},
		"unknown":              {`{"t":1}`, `unknown field "t"`},
		"other case":           {`{"S":"x"}`, `unknown field "S"`},
		"unknown nested":       {`{"obj":{"b":1}}`, `unknown field "obj.b"`},
		"unknown not repeated": {`{"<script>":1}`, "the body has an unknown field"},
		"escaped name":         {`{"\u0073":"x"}`, "a field name has an escape"},
		"control in name":      {"{\"a\x01\":1}", "a field name has an escape"},
		"not UTF-8":            {"{\"s\":\"\xff\"}", "not valid UTF-8"},
		"lone surrogate":       {`{"s":"\ud800"}`, "invalid escaped character"},
		"reversed surrogates":  {`{"s":"\udc00\ud800"}`, "invalid escaped character"},
		"bad escape":           {`{"s":"\x"}`, "malformed JSON"},
		"control in string":    {"{\"s\":\"a\x01\"}", "malformed JSON"},
		"wrong type":           {`{"s":1}`, "s must be a string"},
		"fraction":             {`{"n":1.5}`, "n must be an integer"},
		"exponent":             {`{"n":1e2}`, "n must be an integer"},
		"leading zero":         {`{"n":01}`, "malformed JSON"},
		"int overflow":         {`{"n":9223372036854775808}`, "n must be an integer from"},
		"uint negative":        {`{"u":-1}`, "u must be a non-negative integer"},
		"uint overflow":        {`{"u":18446744073709551616}`, "u must be an integer from 0 to"},
		"list of numbers":      {`{"list":[1]}`, "list[0] must be a string"},
		"bad literal":          {`{"skip":nul}`, "malformed JSON"},
		"bad number":           {`{"skip":-}`, "malformed JSON"},
		"bad fraction":         {`{"skip":1.}`, "malformed JSON"},
		"too deep":             {`{"skip":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}`, "nested too deeply"},
		"too many fields":      {`{"skip":{` + manyFields(MaxFields+1) + `}}`, "too many fields"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := readSample([]byte(c.body))
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *Error", err)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("got %q, want it to say %q", err, c.msg)
			}
		})
	}
}

func manyFields(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"f` + strings.Repeat("x", i) + `":0`)
	}
	return b.String()
}

// A callback's own error comes back as it is.
func TestDecodeReturnsCallbackErrors(t *testing.T) {
	mine := errors.New("mine")
	if err := Decode([]byte(`{"a":1}`), func(*Reader, []byte) error { return mine }); err != mine {
		t.Fatalf("got %v", err)
	}
}

func TestPlain(t *testing.T) {
	var got []byte
	err := Decode([]byte(`{"h":"abc"}`), func(r *Reader, _ []byte) (err error) {
		got, err = r.Plain("h")
		return err
	})
	if err != nil || string(got) != "abc" {
		t.Fatalf("got %q, %v", got, err)
	}
	err = Decode([]byte(`{"h":"\u0061bc"}`), func(r *Reader, _ []byte) error {
		_, err := r.Plain("h")
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "without escapes") {
		t.Fatalf("escaped: %v", err)
	}
}

func TestDecodeAllocs(t *testing.T) {
	body := []byte(`{"s":"x","n":-5,"u":7,"skip":[1,{"a":"b"}]}`)
	n := testing.AllocsPerRun(100, func() {
		_ = Decode(body, func(r *Reader, name []byte) error {
			switch string(name) {
			case "s":
				_, err := r.Plain("s")
				return err
			case "n":
				_, err := r.Int("n", -10, 10)
				return err
			case "u":
				_, err := r.Uint("u", 10)
				return err
			}
			return r.Skip()
		})
	})
	if n != 0 {
		t.Fatalf("Decode allocates %.0f times, want 0", n)
	}
}

// FuzzDecode holds the decoder to encoding/json: whatever it accepts,
// encoding/json reads to the same values; whatever encoding/json finds
// malformed, it refuses; and every error it gives is an *Error.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{}`, `{"s":"x","n":-1,"u":2,"list":["a"],"obj":{"a":"b"}}`,
		`{"skip":[1,2.5e3,true,null,{"x":"\u00e9"}]}`, `{"s":"a","s":"b"}`, `{"S":"x"}`, `{"s":"\ud800"}`,
		`{"n":01}`, `{"u":-0}`, `{"s":"x"} x`, `[]`, ``, `{"\u0073":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ours, err := readSample(body)
		var e *Error
		if err != nil && !errors.As(err, &e) {
			t.Fatalf("%q: error %v is not an *Error", body, err)
		}
		if err != nil {
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted malformed JSON %q", body)
		}
		var std sample
		if err := json.Unmarshal(body, &std); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", body, err)
		}
		if ours.List != nil && len(ours.List) == 0 {
			ours.List = std.List
		}
		if !reflect.DeepEqual(ours, std) {
			t.Fatalf("%q: read %+v, encoding/json %+v", body, ours, std)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	body := []byte(`{"user":"fan-1234","seats":["S-12-345"]}`)
	b.ReportAllocs()
	for b.Loop() {
		var user string
		var seats []string
		err := Decode(body, func(r *Reader, name []byte) (err error) {
			switch string(name) {
			case "user":
				user, err = r.String("user")
			case "seats":
				seats, err = r.Strings("seats")
			default:
				err = UnknownField("", name)
			}
			return err
		})
		if err != nil || user == "" || len(seats) != 1 {
			b.Fatal(err)
		}
	}
}

func TestBool(t *testing.T) {
	for body, want := range map[string]any{
		`{"b":true}`:   true,
		`{"b":false}`:  false,
		`{"b": true }`: true,
		`{"b":"true"}`: "b must be true or false",
		`{"b":1}`:      "b must be true or false",
		`{"b":tru}`:    "malformed",
		`{"b":falsey}`: "malformed",
	} {
		var got bool
		err := Decode([]byte(body), func(r *Reader, _ []byte) (err error) {
			got, err = r.Bool("b")
			return err
		})
		switch w := want.(type) {
		case bool:
			if err != nil || got != w {
				t.Errorf("%s: %v, %v; want %v", body, got, err, w)
			}
		case string:
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want an error with %q", body, err, w)
			}
		}
	}
}
