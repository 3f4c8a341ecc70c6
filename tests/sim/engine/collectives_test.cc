// Collective times on the cluster's links (sim/engine/collectives.h), exact to the nanosecond:
// each ring step moves ceil(S / n) bytes over one link, a latency and a wire time.
#include <catch2/catch.hpp>

#include <limits>

#include "sim/engine/collectives.h"

namespace pipeworks::sim {
namespace {

const Link kOneBytePerNs{1000, 1e9};  // 1 us latency, 1 GB/s

TEST_CASE("collectives: ring reduce-scatter, all-gather and all-reduce step by step", "[collectives]") {
  // 1 MB over 4 ranks: chunks of 250,000 bytes, 250 us on the wire + 1 us latency a step.
  CHECK(*ring_reduce_scatter_ns(1'000'000, 4, kOneBytePerNs) == 3 * 251'000);
  CHECK(*ring_all_gather_ns(1'000'000, 4, kOneBytePerNs) == 3 * 251'000);
  CHECK(*ring_all_reduce_ns(1'000'000, 4, kOneBytePerNs) == 6 * 251'000);  // 2 (n-1)/n S/B + 2 (n-1) a
  // Chunks that do not divide round up: 10 bytes over 3 ranks are chunks of 4.
  CHECK(*ring_all_reduce_ns(10, 3, Link{0, 1e9}) == 4 * 4);
  // One rank has nothing to exchange; nothing to send costs the latencies only.
  CHECK(*ring_all_reduce_ns(1'000'000, 1, kOneBytePerNs) == 0);
  CHECK(*ring_all_reduce_ns(0, 4, kOneBytePerNs) == 6 * 1000);
}

TEST_CASE("collectives: the hierarchical all-reduce is reduce-scatter, all-reduce across, all-gather", "[collectives]") {
  const Link nvlink{0, 1e11};     // 100 GB/s
  const Link nic{5000, 1e10};     // 10 GB/s, 5 us
  // 1.6 MB on 8 ranks x 4 nodes: inside, 7 steps of 200,000 bytes (2 us) each way; across, a
  // ring of 4 on the 200,000-byte shard: 6 steps of 50,000 bytes (5 us + 5 us).
  CHECK(*all_reduce_ns(1'600'000, 8, 4, nvlink, nic) == 7 * 2000 + 6 * 10'000 + 7 * 2000);
  // One node: a ring inside it; one rank a node: a ring across the nodes.
  CHECK(*all_reduce_ns(1'600'000, 8, 1, nvlink, nic) == *ring_all_reduce_ns(1'600'000, 8, nvlink));
  CHECK(*all_reduce_ns(1'600'000, 1, 4, nvlink, nic) == *ring_all_reduce_ns(1'600'000, 4, nic));
  // What of it runs on the NICs: the ring across, all of a ring of one rank a node, none inside.
  CHECK(*all_reduce_inter_node_ns(1'600'000, 8, 4, nic) == 6 * 10'000);
  CHECK(*all_reduce_inter_node_ns(1'600'000, 1, 4, nic) == *ring_all_reduce_ns(1'600'000, 4, nic));
  CHECK(*all_reduce_inter_node_ns(1'600'000, 8, 1, nic) == 0);
  CHECK_FALSE(all_reduce_inter_node_ns(1'600'000, 0, 4, nic).ok());
}

TEST_CASE("collectives: a node's egress shared by its ranks divides its bandwidth", "[collectives]") {
  const Link egress{5000, 8e10};
  const Link share = shared_link(egress, 8);
  CHECK(share.latency_ns == 5000);
  CHECK(share.bandwidth_bytes_per_s == 1e10);
  CHECK(shared_link(egress, 1).bandwidth_bytes_per_s == 8e10);
}

TEST_CASE("collectives: impossible groups and times out of range are errors", "[collectives]") {
  CHECK_FALSE(ring_all_reduce_ns(100, 0, kOneBytePerNs).ok());
  CHECK_FALSE(ring_all_reduce_ns(-1, 4, kOneBytePerNs).ok());
  CHECK_FALSE(all_reduce_ns(100, 0, 2, kOneBytePerNs, kOneBytePerNs).ok());
  CHECK_FALSE(all_reduce_ns(100, 2, 0, kOneBytePerNs, kOneBytePerNs).ok());
  auto slow = ring_all_reduce_ns(std::numeric_limits<Bytes>::max() / 2, 3, Link{0, 1.0});
  REQUIRE_FALSE(slow.ok());
  CHECK_THAT(slow.error().message, Catch::Contains("too long"));
}

}  // namespace
TEST_CASE("collectives: a tensor-parallel collective is one all-reduce, or reduce-scatter + all-gather with SP",
          "[collectives]") {
  // 1 MB over 4 ranks: 6 ring steps of 251 us either way; SP pays the same wire time.
  CHECK(*tensor_parallel_collective_ns(1'000'000, 4, kOneBytePerNs, false) == 6 * 251'000);
  CHECK(*tensor_parallel_collective_ns(1'000'000, 4, kOneBytePerNs, true) == 3 * 251'000 + 3 * 251'000);
  CHECK(*tensor_parallel_collective_ns(1'000'000, 1, kOneBytePerNs, true) == 0);
  CHECK_FALSE(tensor_parallel_collective_ns(-1, 4, kOneBytePerNs, false).ok());
}

}  // namespace pipeworks::sim
