package explorer

import "time"

// Page is one export, as the explorer shows it.
type Page struct {
	// Title names the input program (its file).
	Title string
	// Target, Backend and Pipeline are the export's target, backend and
	// pipeline text; Version is the fxport version.
	Target, Backend, Pipeline, Version string
	// Times shows the pass durations; leave it off for goldens.
	Times bool
	// Input is the IR text before the first pass.
	Input string
	// Passes are the pipeline's pass instances, in order.
	Passes []Pass
	// Summary describes the artifact the export wrote.
	Summary Summary
	// Error, when set, is why the export stopped (the page shows the
	// passes up to the failing one).
	Error string
}

// Pass is one pass instance.
type Pass struct {
	Name, Kind, Stage string
	Disabled, Changed bool
	Duration          time.Duration
	Stats             []Stat
	// IR is the program's IR text after the pass when the pass changed it
	// (the pass manager's print-after-change dump); "" when it did not.
	IR string
	// Fired lists what the pass, or the patches and fixes it drives, acted on.
	Fired []Firing
}

// Stat is a pass's statistics counter.
type Stat struct {
	Name  string
	Value int64
}

// Firing is one action of a workaround (pm.Firing).
type Firing struct {
	// Entry is the patch, fix or pass that acted and Kind its registry;
	// ID its catalog ID ("" for entries without a catalog row).
	Entry, Kind, ID string
	// Graph and Node ("%add (aten.add.Tensor)") locate the node; empty
	// for program-level actions.
	Graph, Node string
	Detail      string
}

// Summary describes the written artifact.
type Summary struct {
	// Artifact is the artifact's file name, Format its kind ("ONNX",
	// "ExecuTorch .pte", …) and Bytes its size.
	Artifact, Format string
	Bytes            int64
	// Facts are name/value lines (opset, IR version, methods, …).
	Facts []Fact
	// Ops counts the artifact's nodes or instructions per operator.
	Ops []Count
	// Delegates are the backend delegates of a .pte.
	Delegates []Delegate
	// Arenas are the planned memory buffers of a .pte.
	Arenas []Arena
}

// Fact is one line of a summary.
type Fact struct{ Name, Value string }

// Count is how many nodes an operator has.
type Count struct {
	Name string
	N    int
}

// Delegate is one backend delegate: its backend ID, the nodes of its graph
// (when decoded) and its payload size.
type Delegate struct {
	Backend string
	Nodes   int
	Bytes   int
}

// Arena is one planned memory buffer: its name, its size in bytes, the number of
// instructions of the method (the time axis) and the tensors placed in it.
type Arena struct {
	// Name says which method and buffer ("forward, buffer 1").
	Name  string
	Size  uint64
	Steps int
	// Tensors are live from instruction First to Last (inclusive) at
	// [Offset, Offset+Size) of the buffer.
	Tensors []Tensor
}

// Tensor is one planned tensor: its value index in the method.
type Tensor struct {
	Value        int
	Offset, Size uint64
	First, Last  int
}
