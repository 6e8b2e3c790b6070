// Package partition holds the partitioning steps that ExecuTorch's
// delegate backends share: grouping the nodes a backend claims into convex
// groups greedily, in graph order (Group, Convex, InGraphOrder), and
// outlining one group into the region of a
// higher_order.executorch_call_delegate node (Boundary, Outline, CopyNode,
// Remap, MapValues), and ordering what exir's to_backend orders: the
// groups, fused latest-first (LatestFirst), and the whole graph, re-sorted
// after each fusion as torch.fx's legalize_graph does (Legalize). What a
// backend claims, and what it does with the calls
// afterwards, stays in the backend's package: xnnpack and openvino group
// and outline with this package; cuda, which splits its partitions at host
// nodes and adds device copies, uses Boundary and MapValues; extcompile
// copies a region out again with CopyNode.
//
// A set of nodes is convex when no path leaves it and re-enters it through
// a node outside it; only a convex set can become one delegate call, since
// the call runs once all its operands are ready.
package partition
