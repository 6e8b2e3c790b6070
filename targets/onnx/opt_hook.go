package onnx

import (
	"fmt"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/targets/onnx/opt"
)

// OptimizeMode selects whether Emit runs the graph optimizer (package opt).
type OptimizeMode int

const (
	// OptimizeAuto (the zero value) optimizes unless DisableOptimize names
	// the program's model class (MetaModelClass).
	OptimizeAuto OptimizeMode = iota
	// OptimizeOn always optimizes (fxport export --optimize).
	OptimizeOn
	// OptimizeOff never optimizes (fxport export --no-optimize).
	OptimizeOff
)

// Optimization records what Emit decided and what the optimizer did.
type Optimization struct {
	Ran   bool
	Why   string // why it ran or did not
	Stats opt.Stats
}

// optimize runs the optimizer on the emitted proto per opts.Optimize and
// drops the pending weights of initializers it removed.
func (m *Model) optimize(p *ir.Program, opts Options) error {
	switch opts.Optimize {
	case OptimizeOff:
		m.Optimization = Optimization{Why: "disabled by the caller"}
		return nil
	case OptimizeOn:
		m.Optimization.Why = "enabled by the caller"
	case OptimizeAuto:
		if off, why := OptimizeDisabled(ModelClass(p), DynamicExport(p)); off {
			m.Optimization = Optimization{Why: "disable-optimization table: " + why}
			return nil
		}
		m.Optimization.Why = "default"
	default:
		return fmt.Errorf("unknown optimize mode %d", opts.Optimize)
	}
	st, err := opt.Optimize(m.Proto, opts.OptimizeOptions)
	if err != nil {
		return err
	}
	m.Optimization.Ran, m.Optimization.Stats = true, st
	if len(st.RemovedInitializers) > 0 {
		live := map[string]bool{}
		for _, t := range m.Proto.GetGraph().GetInitializer() {
			live[t.GetName()] = true
		}
		kept := m.weights[:0]
		for _, pw := range m.weights {
			if live[pw.tensor.GetName()] {
				kept = append(kept, pw)
			}
		}
		m.weights = kept
	}
	return nil
}
