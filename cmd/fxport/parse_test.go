package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fxport/fxport/interp"
	"github.com/fxport/fxport/interp/npy"
	"github.com/fxport/fxport/ir"
)

const untypedDump = `graph():
    %x : [num_users=1] = placeholder[target=x]
    %y : [num_users=1] = placeholder[target=y]
    %add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%x, %y), kwargs = {})
    return (add,)
`

// An untyped dump parses with unknown types; --verify-types names them;
// --input-types, --inputs (.npy headers) and --types-from (.pt2) type it.
func TestParseInputTypes(t *testing.T) {
	dir := t.TempDir()
	dump := filepath.Join(dir, "g.txt")
	require.NoError(t, os.WriteFile(dump, []byte(untypedDump), 0o644))

	out, _, code := fxport(t, "parse", dump)
	require.Equal(t, 0, code)
	require.Contains(t, out, "%add: unknown = aten.add.Tensor(%x, %y)")

	_, errOut, code := fxport(t, "parse", "--verify-types", dump)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "3 values have an unknown type: %x, %y, %add (aten.add.Tensor)")

	out, errOut, code = fxport(t, "parse", "--verify-types", "--input-types", "x=f32[2,3],y=f32[3]", dump)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "%add: f32[2, 3] = aten.add.Tensor(%x, %y)")

	_, errOut, code = fxport(t, "parse", "--input-types", "z=f32[2]", dump)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "input types name z, which the program does not take (its inputs: x, y)")

	io := filepath.Join(dir, "io")
	require.NoError(t, os.Mkdir(io, 0o755))
	require.NoError(t, npy.WriteFile(filepath.Join(io, "input_0.npy"), interp.NewTensor(ir.Int64, 4)))
	require.NoError(t, npy.WriteFile(filepath.Join(io, "y.npy"), interp.NewTensor(ir.Int64, 1)))
	out, errOut, code = fxport(t, "parse", "--verify-types", "--inputs", dir, dump)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "%add: i64[4] = aten.add.Tensor(%x, %y)")
}

// A dump torch printed of the same program as a corpus .pt2 takes its
// input types (symbolic sizes included) from the archive.
func TestParseTypesFromPT2(t *testing.T) {
	dump := "../../frontends/fxtext/testdata/dumps/gpt2_block.export.graph.txt"
	out, errOut, code := fxport(t, "parse", "--verify-types", "--types-from", "../../tests/corpus/gpt2_block/program.pt2", dump)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "%p_attn_q_attn_weight: f32[64, 64]")
	// The symbol is whatever torch named the dynamic seq dim (s0, s87, …):
	// its range comes from the archive and reaches the dump's values.
	sym := regexp.MustCompile(`symbol (s\d+): \[2, 64\]`).FindStringSubmatch(out)
	require.NotNil(t, sym, "the archive's seq symbol with range [2, 64]")
	require.Contains(t, out, ": f32[1, "+sym[1]+", 64] = aten.add.Tensor(")
}
