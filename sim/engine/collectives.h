// The time of a data-parallel group's collectives on the cluster's links, one function per
// algorithm, each exact in integer nanoseconds (transfer_ns per step). `bytes` is the whole
// buffer every rank contributes (a stage's gradients); `ranks` the group's size.
//
// Ring algorithms (Thakur, Rabenseifner and Gropp 2005, "Optimization of Collective
// Communication Operations in MPICH", sec. 4; Patarasuk and Yuan 2009, "Bandwidth optimal
// all-reduce algorithms for clusters of workstations"): the buffer is cut into `ranks` chunks
// and every step each rank sends one chunk to its neighbour, all links busy at once.
//
//   reduce-scatter   (n-1) steps          t = (n-1) (a + ceil(S/n) / B)
//   all-gather       (n-1) steps          t = (n-1) (a + ceil(S/n) / B)
//   all-reduce       2(n-1) steps         t = 2(n-1) (a + ceil(S/n) / B)   (reduce-scatter, all-gather)
//
// Hierarchical all-reduce over g ranks on each of N nodes (Jia et al. 2018, "Highly Scalable
// Deep Learning Training System with Mixed-Precision", sec. 3.3; NCCL's rings do the same when a
// ring crosses nodes once per node): reduce-scatter inside each node, all-reduce of each rank's
// 1/g shard across the nodes (g rings at once, one per local rank, each rank on its share of the
// node's egress), all-gather inside the node:
//
//   node 0: r0 r1 | node 1: r2 r3        RS intra (g)   -> r0 holds sum of chunk 0 of r0, r1
//   r0 <-> r2, r1 <-> r3                  AR inter (N) on S/g bytes, one ring per local rank
//                                         AG intra (g)   -> every rank holds the whole sum
//
//   t = RS_ring(S, g, intra) + AR_ring(ceil(S/g), N, inter) + AG_ring(S, g, intra)
#pragma once

#include "sched/result.h"
#include "sim/engine/cost_model.h"

namespace pipeworks::sim {

sched::Result<Nanoseconds> ring_reduce_scatter_ns(Bytes bytes, int ranks, const Link& link);
sched::Result<Nanoseconds> ring_all_gather_ns(Bytes bytes, int ranks, const Link& link);
sched::Result<Nanoseconds> ring_all_reduce_ns(Bytes bytes, int ranks, const Link& link);

// The link on which ring_all_reduce_ns over `ranks` (>= 2) takes `small_ns` at `small_bytes` and
// `large_ns` at `large_bytes` (two measured all-reduces, small_bytes < large_bytes): per ring step
// s = t / (2(n-1)) and chunk c = ceil(S/n), B = (c_large - c_small) / (s_large - s_small) (unbounded
// when the larger took no longer), a = s_small - c_small / B clamped to >= 0.
sched::Result<Link> ring_all_reduce_link(int ranks, Bytes small_bytes, Nanoseconds small_ns, Bytes large_bytes,
                                         Nanoseconds large_ns);

// A group of `ranks_per_node` ranks on each of `nodes` nodes: a ring inside the node when there
// is one node, a ring across nodes when each node holds one rank, the hierarchical form
// otherwise. `inter` is what one rank gets of the node's egress while every local rank sends
// (inter_link_per_rank).
sched::Result<Nanoseconds> all_reduce_ns(Bytes bytes, int ranks_per_node, int nodes, const Link& intra,
                                         const Link& inter);

// The part of all_reduce_ns that runs on the inter-node links: all of it for a ring across nodes,
// the middle ring of the hierarchical form, 0 on one node.
sched::Result<Nanoseconds> all_reduce_inter_node_ns(Bytes bytes, int ranks_per_node, int nodes, const Link& inter);

// One collective of a tensor-parallel layer's pass over `ranks` ranks inside a node: an all-reduce
// of the buffer, or, with sequence parallelism, the reduce-scatter and all-gather that replace it
// (Korthikanti et al. 2022, sec. 4.2.2: the same bytes on the wire, one more latency per ring step).
sched::Result<Nanoseconds> tensor_parallel_collective_ns(Bytes bytes, int ranks, const Link& link, bool sequence_parallel);

// One rank's share of a link `sharers` ranks drive at once: the bandwidth divided, the latency
// as it is (the cluster spec's inter-node link is one egress a node, shared by its devices).
Link shared_link(const Link& link, int sharers);

}  // namespace pipeworks::sim
