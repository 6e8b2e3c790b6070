package pte

import (
	"strings"
	"testing"

	etfb "github.com/fxport/fxport/targets/executorch/fb/executorch_flatbuffer"
)

// cloneSuites deep-copies suites so that a test can break one field.
func cloneSuites(in []BundledSuite) []BundledSuite {
	out := make([]BundledSuite, len(in))
	for i, s := range in {
		out[i] = BundledSuite{Method: s.Method}
		for _, c := range s.Cases {
			out[i].Cases = append(out[i].Cases, BundledCase{Inputs: cloneValues(c.Inputs), ExpectedOutputs: cloneValues(c.ExpectedOutputs)})
		}
	}
	return out
}

func cloneValues(vs []BundledValue) []BundledValue {
	out := make([]BundledValue, len(vs))
	for i, v := range vs {
		out[i] = v
		if v.Tensor != nil {
			t := *v.Tensor
			t.Sizes = append([]int32(nil), t.Sizes...)
			t.DimOrder = append([]uint8(nil), t.DimOrder...)
			t.Data = append([]byte(nil), t.Data...)
			out[i].Tensor = &t
		}
	}
	return out
}

// Bundled files whose test data disagree with themselves or with the
// program are rejected with an error naming the suite, the case and the
// value; none panics.
func TestDecodeBundledMalformed(t *testing.T) {
	_, f, prog := readGenuineBundled(t)
	for _, tc := range []struct {
		name   string
		break_ func(s []BundledSuite)
		want   string
	}{
		{"short data", func(s []BundledSuite) { s[0].Cases[2].Inputs[1].Tensor.Data = s[0].Cases[2].Inputs[1].Tensor.Data[:12] },
			`method_test_suites[0] ("forward"): test_cases[2]: inputs[1]: tensor: 12 data bytes for int sizes [2,2] (want 16`},
		{"long data", func(s []BundledSuite) {
			x := s[0].Cases[0].ExpectedOutputs[0].Tensor
			x.Data = append(x.Data, 0, 0, 0, 0)
		}, `test_cases[0]: expected_outputs[0]: tensor: 20 data bytes`},
		{"negative size", func(s []BundledSuite) { s[0].Cases[1].Inputs[0].Tensor.Sizes[0] = -2 },
			`test_cases[1]: inputs[0]: tensor: sizes[0] = -2 is negative`},
		{"dim order", func(s []BundledSuite) { s[0].Cases[4].Inputs[0].Tensor.DimOrder = []uint8{1, 1} },
			`test_cases[4]: inputs[0]: tensor: dim_order [1,1] is not a permutation`},
		{"dim order length", func(s []BundledSuite) { s[0].Cases[4].Inputs[0].Tensor.DimOrder = nil },
			`test_cases[4]: inputs[0]: tensor: dim_order [] has 0 entries for sizes [2,2]`},
		{"scalar type", func(s []BundledSuite) { s[0].Cases[5].ExpectedOutputs[0].Tensor.ScalarType = 99 },
			`test_cases[5]: expected_outputs[0]: tensor: scalar type 99`},
		{"unknown kind", func(s []BundledSuite) { s[0].Cases[6].Inputs[1] = BundledValue{Kind: 9} },
			`test_cases[6]: inputs[1]: value kind 9 is not one of Tensor, Int, Bool, Double`},
		{"no kind", func(s []BundledSuite) { s[0].Cases[7].Inputs[0] = BundledValue{Kind: 0} },
			`method_test_suites[0].test_cases[7].inputs[0].val: union value without a type tag`},
		{"no method", func(s []BundledSuite) { s[0].Method = "backward" },
			`method_test_suites[0] ("backward"): the embedded program has no method "backward"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			suites := cloneSuites(f.Bundled.TestSuites)
			tc.break_(suites)
			_, err := Decode("bad.bpte", packBundled(prog, suites))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "bad.bpte: ") {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// EncodeBundled refuses suites that do not fit the program they test.
func TestEncodeBundledRejects(t *testing.T) {
	_, f, prog := readGenuineBundled(t)
	for _, tc := range []struct {
		name   string
		break_ func(s []BundledSuite) []BundledSuite
		want   string
	}{
		{"inputs", func(s []BundledSuite) []BundledSuite { s[0].Cases[1].Inputs = s[0].Cases[1].Inputs[:1]; return s },
			`method "forward": test case 1: 1 inputs, the method takes 2`},
		{"outputs", func(s []BundledSuite) []BundledSuite { s[0].Cases[0].ExpectedOutputs = nil; return s },
			`method "forward": test case 0: 0 expected outputs, the method returns 1`},
		{"dtype", func(s []BundledSuite) []BundledSuite {
			s[0].Cases[3].Inputs[0].Tensor.ScalarType = etfb.ScalarTypeFLOAT
			return s
		}, `test case 3: input 0: float[2,2] dim_order [0,1] [0 0 0 0] for the method's int[2,2]`},
		{"kind", func(s []BundledSuite) []BundledSuite {
			s[0].Cases[2].Inputs[1] = BundledValue{Kind: BundledInt, Int: 3}
			return s
		}, `test case 2: input 1: a Int for the method's Tensor value`},
		{"bad tensor", func(s []BundledSuite) []BundledSuite {
			s[0].Cases[2].ExpectedOutputs[0].Tensor.Data = nil
			return s
		}, `test case 2: expected output 0: tensor: 0 data bytes`},
		{"method", func(s []BundledSuite) []BundledSuite { s[0].Method = "nope"; return s },
			`test suite for method "nope": the program has no such method (methods: [forward])`},
		{"duplicate", func(s []BundledSuite) []BundledSuite { return append(s, s[0]) },
			`two test suites for method "forward"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EncodeBundled(prog, tc.break_(cloneSuites(f.Bundled.TestSuites)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if _, err := EncodeBundled(prog[:100], nil); err == nil {
		t.Error("a truncated program was embedded")
	}
}

// Truncated and bit-flipped bundled files fail to decode with an error,
// never a panic.
func TestDecodeBundledCorrupt(t *testing.T) {
	data, _, _ := readGenuineBundled(t)
	for _, n := range []int{8, 64, 1000, 3000} {
		if _, err := Decode("cut.bpte", data[:n]); err == nil {
			t.Errorf("truncated to %d bytes: decoded", n)
		}
	}
	for i := 0; i < len(data); i += 7 {
		b := append([]byte(nil), data...)
		b[i] ^= 0xff
		g, err := Decode("flipped.bpte", b)
		if err != nil && strings.Contains(err.Error(), "decoder panic") {
			t.Fatalf("byte %d flipped: %v", i, err)
		}
		if err == nil {
			if err := g.Summary(discard{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
