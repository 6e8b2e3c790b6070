package main

import (
	"strings"
	"testing"
)

const kernelSpecHead = "[t] functional infer=same\n" +
	"aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor\n" +
	"aten::relu(Tensor self) -> Tensor\n"

func mergeKernels(t *testing.T, spec, kernels string) (*Spec, error) {
	t.Helper()
	s, err := ParseSpec("t.spec", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	ks, err := ParseKernels("k.spec", []byte(kernels))
	if err != nil {
		return nil, err
	}
	if err := s.MergeKernels("k.spec", ks); err != nil {
		return nil, err
	}
	return s, s.Validate(nil)
}

// A kernel the spec lacks becomes an out op linked to its functional op.
func TestMergeKernelsAddsAndLinks(t *testing.T) {
	s, err := mergeKernels(t, kernelSpecHead,
		"aten::hardtanh.out(Tensor self, Scalar min_val=-1, Scalar max_val=1, *, Tensor(a!) out) -> Tensor(a!) | lib=portable functional=aten::hardtanh\n"+
			"aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!) | lib=portable\n")
	if err != nil {
		t.Fatal(err)
	}
	out := s.byName["aten.hardtanh.out"]
	if out == nil || !out.Props["out"] || out.Kernel != "portable" || out.Functional != "aten.hardtanh.default" {
		t.Fatalf("hardtanh.out = %+v", out)
	}
	if fn := s.byName["aten.hardtanh.default"]; fn.Out != "aten.hardtanh.out" || fn.Kernel != "" {
		t.Fatalf("hardtanh's out twin %q kernel %q", fn.Out, fn.Kernel)
	}
	if s.byName["aten.copy_.default"] != nil {
		t.Fatalf("an in-place kernel the spec lacks was added")
	}
	if s.byName["aten.relu.default"].Out != "" {
		t.Fatalf("relu got an out twin it has no kernel for")
	}
}

func TestMergeKernelsErrors(t *testing.T) {
	cases := []struct{ name, spec, kernels, want string }{
		{"spec disagrees with the kernel list",
			kernelSpecHead + "[o] out infer=same\naten::relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!) | functional=aten::relu\n",
			"aten::relu.out(Tensor input, *, Tensor(a!) out) -> Tensor(a!) | lib=portable functional=aten::relu\n",
			"disagrees with the kernel list: argument 0"},
		{"hand-written out twin without a kernel",
			kernelSpecHead + "[o] out infer=same\naten::relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!) | functional=aten::relu\n",
			"",
			"aten.relu.out is an out variant that no ExecuTorch kernel library registers"},
		{"kernel without a library",
			kernelSpecHead,
			"aten::relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n",
			"has no lib="},
		{"kernel listed twice",
			kernelSpecHead,
			"aten::relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!) | lib=portable\naten::relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!) | lib=portable\n",
			"listed twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := mergeKernels(t, c.spec, c.kernels)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}
