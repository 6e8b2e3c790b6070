// Package layers holds the test that fxport's imports only point down: a
// table of layers, checked over the module's import graph.
package layers
