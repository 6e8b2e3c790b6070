// Package dynamo holds the Dynamo-stage passes every target runs first
// (docs/dynamo.md): the capture-step checks, flat input/output names
// (DYN-S05), dynamic shapes (DYN-S04) and dropping unused weights (DYN-S10),
// one file per catalog ID, each registering itself into pm.Default.
package dynamo
