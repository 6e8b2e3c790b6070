package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fxport/fxport/frontends/fxtext"
	"github.com/fxport/fxport/frontends/pt2"
	"github.com/fxport/fxport/interp/npy"
	"github.com/fxport/fxport/ir"
)

func runParse(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("parse", stderr)
	fs.Int64Var(&pt2.MaxJSONBytes, "max-json-bytes", pt2.DefaultMaxJSONBytes, "refuse a .pt2 JSON record (program, weights config) of more bytes, inflated")
	fs.Int64Var(&fxtext.MaxTextBytes, "max-text-bytes", fxtext.DefaultMaxTextBytes, "refuse an FX or IR text input of more bytes")
	fs.IntVar(&fxtext.MaxListElements, "max-list-elements", fxtext.DefaultMaxListElements, "refuse an FX text list, tuple or argument list of more elements")
	verify := fs.Bool("verify", true, "run the IR verifier")
	verifyTypes := fs.Bool("verify-types", false, "also re-run shape/dtype inference on every node, and fail naming every value whose type is still unknown")
	inputTypes := fs.String("input-types", "", "types of the inputs an FX text dump does not annotate: 'x=f32[2,3],y=i64[4]'")
	inputsDir := fs.String("inputs", "", "directory of sample inputs as .npy: NAME.npy for input NAME, or input_<i>.npy for the i-th user input")
	typesFrom := fs.String("types-from", "", "a .pt2 of the same program: its input types type the dump's inputs")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return usageErr("want one FILE, got %d", len(files))
	}
	p, err := loadProgram(files[0])
	if err != nil {
		return err
	}
	if err := applyInputTypes(p, *inputTypes, *inputsDir, *typesFrom); err != nil {
		return fmt.Errorf("%s: %w", files[0], err)
	}
	if *verify || *verifyTypes {
		if err := ir.VerifyWith(p, ir.VerifyOptions{Types: *verifyTypes}); err != nil {
			return fmt.Errorf("%s: %w", files[0], err)
		}
	}
	if _, err = io.WriteString(stdout, ir.Print(p)); err != nil {
		return err
	}
	if *verifyTypes {
		if unk := ir.UnknownValues(p); len(unk) > 0 {
			names := make([]string, len(unk))
			for i, v := range unk {
				names[i] = "%" + v.Name
				if v.Def != nil {
					names[i] += " (" + v.Def.Op.Info().Name + ")"
				}
			}
			return fmt.Errorf("%s: %d values have an unknown type: %s; give the inputs' types with --input-types, --inputs or --types-from", files[0], len(unk), strings.Join(names, ", "))
		}
	}
	return nil
}

// applyInputTypes types a program's unknown inputs from the parse flags.
func applyInputTypes(p *ir.Program, spec, dir, pt2Path string) error {
	types := map[string]ir.Type{}
	merge := func(m map[string]ir.Type) {
		for k, v := range m {
			types[k] = v
		}
	}
	if pt2Path != "" {
		m, err := typesFromPT2(p, pt2Path)
		if err != nil {
			return err
		}
		merge(m)
	}
	if dir != "" {
		m, err := typesFromNpy(p, dir)
		if err != nil {
			return err
		}
		merge(m)
	}
	if spec != "" {
		m, err := fxtext.ParseInputTypes(spec)
		if err != nil {
			return fmt.Errorf("--input-types: %w", err)
		}
		merge(m)
	}
	if len(types) == 0 {
		return nil
	}
	return fxtext.Retype(p, types)
}

// userInputs lists the names of p's user inputs in order.
func userInputs(p *ir.Program) []string {
	var out []string
	for i, in := range p.Signature.Inputs {
		if in.Kind == ir.UserInput {
			out = append(out, p.Main.Inputs[i].Name)
		}
	}
	return out
}

var inputFile = regexp.MustCompile(`^input_(\d+)\.npy$`)

// typesFromNpy reads the headers' dtypes and shapes of sample inputs.
func typesFromNpy(p *ir.Program, dir string) (map[string]ir.Type, error) {
	if st, err := os.Stat(filepath.Join(dir, "io")); err == nil && st.IsDir() {
		dir = filepath.Join(dir, "io")
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--inputs: %w", err)
	}
	users := userInputs(p)
	out := map[string]ir.Type{}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".npy") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, n := range names {
		key := strings.TrimSuffix(n, ".npy")
		if m := inputFile.FindStringSubmatch(n); m != nil {
			i, _ := strconv.Atoi(m[1])
			if i >= len(users) {
				return nil, fmt.Errorf("--inputs: %s: the program has %d user inputs", n, len(users))
			}
			key = users[i]
		} else if strings.HasPrefix(n, "output_") {
			continue
		}
		t, err := npy.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, fmt.Errorf("--inputs: %w", err)
		}
		out[key] = ir.Tensor(t.DType, t.Shape...)
	}
	return out, nil
}

// typesFromPT2 takes the input types of a .pt2 of the same program: by
// name, and the user inputs by position when the names differ.
func typesFromPT2(p *ir.Program, path string) (map[string]ir.Type, error) {
	src, err := pt2.Read(path)
	if err != nil {
		return nil, fmt.Errorf("--types-from: %w", err)
	}
	// The archive's symbols, with their ranges and hints, come along.
	for _, name := range src.Env.Symbols() {
		if _, known := p.Env.Range(name); known {
			continue
		}
		r, _ := src.Env.Range(name)
		var hint *int64
		if h, ok := src.Env.Hint(name); ok {
			hint = &h
		}
		p.Env.Declare(name, r, hint, src.Env.IsUnbacked(name))
	}
	out := map[string]ir.Type{}
	have := map[string]bool{}
	for _, in := range p.Main.Inputs {
		have[in.Name] = true
	}
	targets := map[string]bool{}
	for _, in := range p.Signature.Inputs {
		if in.Target != "" {
			targets[in.Target] = true
		}
	}
	for i, in := range src.Main.Inputs {
		if have[in.Name] {
			out[in.Name] = in.Type
		}
		if i < len(src.Signature.Inputs) {
			if t := src.Signature.Inputs[i].Target; t != "" && !have[in.Name] && targets[t] {
				out[t] = in.Type
			}
		}
	}
	mine, theirs := userInputs(p), userInputs(src)
	if len(mine) == len(theirs) {
		for i, n := range mine {
			if _, ok := out[n]; !ok {
				out[n] = src.Main.Value(theirs[i]).Type
			}
		}
	}
	return out, nil
}
