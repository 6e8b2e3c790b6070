package pm

import (
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
)

// DumpFileFormat names dump files: <graph>_<seq>__<pass>.ir, where graph
// is the main graph's name and seq numbers the dumps of a Run from 1 (so a
// pass dumped before and after gets two files). It is the only place the
// name format is spelled.
const DumpFileFormat = "%s_%03d__%s.ir"

// DumpFileName formats a dump file name.
func DumpFileName(graph string, seq int, pass string) string {
	return fmt.Sprintf(DumpFileFormat, graph, seq, pass)
}

// Dump is one IR dump as Config.OnDump receives it.
type Dump struct {
	// Seq numbers the dumps of a Run from 1, as in DumpFileName.
	Seq int
	// When is "before" or "after" the pass.
	When string
	// Pass and Stage name the pass instance.
	Pass, Stage string
	// IR is the program's IR text (ir.Print), without the banner.
	IR string
}

// dump writes one IR dump to Out and, when set, to a file in DumpDir. The
// banner is an IR comment, so dumps parse back with ir.Parse.
func (r *runner) dump(text, when string, in Placed) error {
	r.dumpSeq++
	banner := fmt.Sprintf("# IR dump %s pass %q (stage %s)\n", when, in.Name, in.Stage)
	if r.cfg.OnDump != nil {
		r.cfg.OnDump(Dump{Seq: r.dumpSeq, When: when, Pass: in.Name, Stage: in.Stage, IR: text})
	}
	if r.out != nil {
		if _, err := io.WriteString(r.out, banner+text); err != nil {
			return fmt.Errorf("pm: dump %s %s: %w", when, in.Name, err)
		}
	}
	if r.cfg.DumpDir != "" {
		if err := os.MkdirAll(r.cfg.DumpDir, 0o755); err != nil {
			return fmt.Errorf("pm: dump: %w", err)
		}
		name := filepath.Join(r.cfg.DumpDir, DumpFileName(r.prog.Main.Name, r.dumpSeq, in.Name))
		if err := os.WriteFile(name, []byte(banner+text), 0o644); err != nil {
			return fmt.Errorf("pm: dump: %w", err)
		}
	}
	return nil
}

func hashText(s string) uint64 {
	h := fnv.New64a()
	io.WriteString(h, s)
	return h.Sum64()
}
