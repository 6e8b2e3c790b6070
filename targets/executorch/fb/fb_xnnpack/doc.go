// Package fb_xnnpack is flatc-generated FlatBuffers code for the XNNPACK delegate graph (XN01) tables
// (schema in targets/executorch/schema; regenerate with targets/executorch/fb/gen.sh).
package fb_xnnpack
