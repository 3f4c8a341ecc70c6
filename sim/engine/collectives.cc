// Ring and hierarchical collective times (formulas and sources in collectives.h).
#include "sim/engine/collectives.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/engine/op_costs.h"
#include "sim/spec/zero_sharding.h"

namespace pipeworks::sim {
namespace {

// `steps` ring steps, each one chunk of ceil(bytes / ranks) over `link`.
sched::Result<Nanoseconds> ring_steps_ns(Bytes bytes, int ranks, int steps_per_rank, const Link& link) {
  if (ranks < 1 || bytes < 0) return sched::Error{fmt::format("collective: {} ranks, {} bytes", ranks, bytes)};
  if (ranks == 1) return Nanoseconds{0};
  auto step = transfer_ns(link, shard_bytes(bytes, ranks));
  if (!step) return step.error();
  Nanoseconds total = 0;
  const auto steps = static_cast<Nanoseconds>(steps_per_rank) * (ranks - 1);
  if (__builtin_mul_overflow(*step, steps, &total) || total > detail::kMaxTime) {
    return sched::Error{fmt::format("collective of {} bytes over {} ranks takes too long", bytes, ranks)};
  }
  return total;
}

}  // namespace

sched::Result<Nanoseconds> ring_reduce_scatter_ns(Bytes bytes, int ranks, const Link& link) {
  return ring_steps_ns(bytes, ranks, 1, link);
}

sched::Result<Nanoseconds> ring_all_gather_ns(Bytes bytes, int ranks, const Link& link) {
  return ring_steps_ns(bytes, ranks, 1, link);
}

sched::Result<Nanoseconds> ring_all_reduce_ns(Bytes bytes, int ranks, const Link& link) {
  return ring_steps_ns(bytes, ranks, 2, link);
}

sched::Result<Link> ring_all_reduce_link(int ranks, Bytes small_bytes, Nanoseconds small_ns, Bytes large_bytes,
                                         Nanoseconds large_ns) {
  if (ranks < 2 || small_bytes < 0 || large_bytes <= small_bytes || small_ns < 0 || large_ns < 0) {
    return sched::Error{fmt::format("all-reduce link: {} ranks, {} bytes in {} ns and {} bytes in {} ns", ranks,
                                    small_bytes, small_ns, large_bytes, large_ns)};
  }
  const double steps = 2.0 * (ranks - 1);
  const double small_step = static_cast<double>(small_ns) / steps;
  const double large_step = static_cast<double>(large_ns) / steps;
  const double small_chunk = static_cast<double>(shard_bytes(small_bytes, ranks));
  const double large_chunk = static_cast<double>(shard_bytes(large_bytes, ranks));
  const double per_byte_ns = std::max(0.0, (large_step - small_step) / (large_chunk - small_chunk));
  const double bandwidth = per_byte_ns * kUnboundedBandwidth <= 1e9 ? kUnboundedBandwidth : 1e9 / per_byte_ns;
  const double latency = std::max(0.0, small_step - small_chunk * per_byte_ns);
  return Link{static_cast<Nanoseconds>(std::llround(latency)), bandwidth};
}

sched::Result<Nanoseconds> all_reduce_ns(Bytes bytes, int ranks_per_node, int nodes, const Link& intra,
                                         const Link& inter) {
  if (ranks_per_node < 1 || nodes < 1) {
    return sched::Error{fmt::format("collective: {} ranks per node on {} nodes", ranks_per_node, nodes)};
  }
  if (nodes == 1) return ring_all_reduce_ns(bytes, ranks_per_node, intra);
  if (ranks_per_node == 1) return ring_all_reduce_ns(bytes, nodes, inter);
  auto scatter = ring_reduce_scatter_ns(bytes, ranks_per_node, intra);
  auto across = all_reduce_inter_node_ns(bytes, ranks_per_node, nodes, inter);
  auto gather = ring_all_gather_ns(bytes, ranks_per_node, intra);
  if (!scatter) return scatter.error();
  if (!across) return across.error();
  if (!gather) return gather.error();
  const Nanoseconds total = *scatter + *across + *gather;  // each within kMaxTime = int64 max / 4
  if (total > detail::kMaxTime) return sched::Error{fmt::format("all-reduce of {} bytes takes too long", bytes)};
  return total;
}

sched::Result<Nanoseconds> all_reduce_inter_node_ns(Bytes bytes, int ranks_per_node, int nodes, const Link& inter) {
  if (ranks_per_node < 1 || nodes < 1) {
    return sched::Error{fmt::format("collective: {} ranks per node on {} nodes", ranks_per_node, nodes)};
  }
  if (nodes == 1) return Nanoseconds{0};
  return ring_all_reduce_ns(shard_bytes(bytes, ranks_per_node), nodes, inter);  // shard_bytes(b, 1) == b
}

sched::Result<Nanoseconds> tensor_parallel_collective_ns(Bytes bytes, int ranks, const Link& link,
                                                        bool sequence_parallel) {
  if (!sequence_parallel) return ring_all_reduce_ns(bytes, ranks, link);
  auto scatter = ring_reduce_scatter_ns(bytes, ranks, link);
  if (!scatter) return scatter;
  auto gather = ring_all_gather_ns(bytes, ranks, link);
  if (!gather) return gather;
  return *scatter + *gather;  // each within kMaxTime = int64 max / 4
}

Link shared_link(const Link& link, int sharers) {
  return Link{link.latency_ns, sharers > 1 ? link.bandwidth_bytes_per_s / sharers : link.bandwidth_bytes_per_s};
}

}  // namespace pipeworks::sim
