package emit

import (
	"encoding/json"
	"strings"

	"github.com/fxport/fxport/ir"
	"github.com/fxport/fxport/provenance"
)

// MetadataMethod is the constant method holding the export metadata JSON
// (ET-L04; the ONNX target stores the same document in metadata_props under
// the same key).
const MetadataMethod = "fxport.export_metadata"

// exportMetadata is the JSON document of MetadataMethod: producer, the
// names of the method's inputs (user and constant inputs, as plan.inputs
// lists them), the user output names and the program metadata (the memory
// plan's own keys left out), and the provenance when one is given. Keys
// are sorted; the bytes are deterministic.
func exportMetadata(p *ir.Program, rec *provenance.Record) (string, error) {
	if rec != nil && rec.Workarounds == nil {
		r := *rec
		r.Workarounds = []provenance.Workaround{}
		rec = &r
	}
	md := struct {
		Producer        string             `json:"producer"`
		Provenance      *provenance.Record `json:"provenance,omitempty"`
		InputNames      []string           `json:"input_names"`
		OutputNames     []string           `json:"output_names"`
		UserOutputCount int                `json:"user_output_count"`
		Program         map[string]string  `json:"program_meta,omitempty"`
	}{Producer: "fxport", Provenance: rec, InputNames: []string{}, OutputNames: []string{}}
	for i, v := range p.Main.Inputs {
		if i < len(p.Signature.Inputs) && (p.Signature.Inputs[i].Kind == ir.UserInput || p.Signature.Inputs[i].Kind == ir.ConstantInput) {
			md.InputNames = append(md.InputNames, v.Name)
		}
	}
	for i, a := range p.Main.Outputs() {
		if i < len(p.Signature.Outputs) && p.Signature.Outputs[i].Kind != ir.UserOutput {
			continue
		}
		name := a.String()
		if a.Kind == ir.ArgValue {
			name = a.Value.Name
		}
		md.OutputNames = append(md.OutputNames, name)
	}
	md.UserOutputCount = len(md.OutputNames)
	for _, kv := range p.Meta.Entries() {
		if strings.HasPrefix(kv.Key, "executorch.mem.") {
			continue
		}
		if md.Program == nil {
			md.Program = map[string]string{}
		}
		md.Program[kv.Key] = kv.Value
	}
	// encoding/json sorts the map keys.
	b, err := json.Marshal(md)
	return string(b), err
}
