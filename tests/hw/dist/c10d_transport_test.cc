// The c10d transport between two ranks in one process (two threads, two Gloo groups over one
// TCPStore): tensors arrive intact, a shape the receiver does not expect is an error on the
// receiving side, and a receive whose sender never comes times out naming the peer.
#include <chrono>
#include <future>
#include <thread>

#include <catch2/catch.hpp>
#include <torch/torch.h>

#include "hw/dist/c10d_group.h"
#include "hw/dist/c10d_transport.h"
#include "hw/dist/launcher.h"

namespace pipeworks::hw {
namespace {

using sched::Action;
using sched::ActionKind;
using std::chrono::milliseconds;

struct Pair {
  std::unique_ptr<C10dTransport> rank0, rank1;
  C10dGroup group0, group1;
};

// Two ranks, K = 2 stages on ranks 0 and 1, M = 4.
Pair connect_pair(milliseconds timeout) {
  const int port = find_free_port().value();
  auto connect = [port, timeout](int rank) {
    DistributedEnv env;
    env.rank = rank;
    env.world_size = 2;
    env.master_port = static_cast<std::uint16_t>(port);
    return connect_gloo(env, timeout);
  };
  auto other = std::async(std::launch::async, connect, 1);
  auto g0 = connect(0);
  auto g1 = other.get();
  REQUIRE(g0.ok());
  REQUIRE(g1.ok());
  Pair pair{nullptr, nullptr, *g0, *g1};
  for (int rank : {0, 1}) {
    C10dTransportOptions options;
    options.rank = rank;
    options.placement = {0, 1};
    options.num_microbatches = 4;
    options.timeout = timeout;
    auto t = C10dTransport::create(rank == 0 ? g0->backend : g1->backend, options);
    REQUIRE(t.ok());
    (rank == 0 ? pair.rank0 : pair.rank1) = std::move(t).value();
  }
  return pair;
}

TEST_CASE("c10d transport: activations and gradients cross between two Gloo ranks", "[c10d]") {
  Pair pair = connect_pair(milliseconds(10000));
  const torch::Tensor activation = torch::arange(6, torch::kFloat32).reshape({2, 3});
  const torch::Tensor tokens = torch::arange(4, torch::kInt64).reshape({1, 4});
  pair.rank1->expect({1, ActionKind::kRecvF, 0}, meta_of(activation));
  auto receiver = std::async(std::launch::async, [&] {
    auto a = pair.rank1->recv({1, ActionKind::kRecvF, 0}, milliseconds(10000));
    auto b = pair.rank1->recv({1, ActionKind::kRecvF, 1}, milliseconds(10000));  // no expectation
    auto s = pair.rank1->send({1, ActionKind::kSendB, 0}, activation * 2);
    return std::make_tuple(std::move(a), std::move(b), std::move(s));
  });
  REQUIRE(pair.rank0->send({0, ActionKind::kSendF, 0}, activation).ok());
  REQUIRE(pair.rank0->send({0, ActionKind::kSendF, 1}, tokens).ok());
  auto grad = pair.rank0->recv({0, ActionKind::kRecvB, 0}, milliseconds(10000));
  auto [a, b, s] = receiver.get();
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(s.ok());
  REQUIRE(grad.ok());
  CHECK(torch::equal(*a, activation));
  CHECK(b->scalar_type() == torch::kInt64);
  CHECK(torch::equal(*b, tokens));
  CHECK(torch::equal(*grad, activation * 2));
}

TEST_CASE("c10d transport: a shape the receiver does not expect is an error there", "[c10d]") {
  Pair pair = connect_pair(milliseconds(3000));
  pair.rank1->expect({1, ActionKind::kRecvF, 2}, TensorMeta{torch::kFloat32, {3, 2}});
  auto receiver = std::async(std::launch::async, [&] {
    return pair.rank1->recv({1, ActionKind::kRecvF, 2}, milliseconds(3000));
  });
  const auto sent = pair.rank0->send({0, ActionKind::kSendF, 2}, torch::zeros({2, 3}));
  auto received = receiver.get();
  REQUIRE_FALSE(received.ok());
  CHECK_THAT(received.error().message, Catch::Contains("rank 1: 1RECV_F2 waiting for rank 0 (0SEND_F2)"));
  CHECK_THAT(received.error().message, Catch::Contains("(2, 3) but this stage expects"));
  CHECK_THAT(received.error().message, Catch::Contains("(3, 2)"));
  // The sender's payload has no receive: it fails within its timeout, or was buffered.
  if (!sent.ok()) CHECK_THAT(sent.error().message, Catch::Contains("rank 0: 0SEND_F2 to rank 1"));
}

TEST_CASE("c10d transport: a receive without a sender times out naming the peer", "[c10d]") {
  Pair pair = connect_pair(milliseconds(3000));
  const auto start = std::chrono::steady_clock::now();
  auto received = pair.rank0->recv({0, ActionKind::kRecvB, 3}, milliseconds(300));
  const auto waited = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(received.ok());
  CHECK_THAT(received.error().message, Catch::Contains("rank 0: 0RECV_B3 waiting for rank 1 (1SEND_B3)"));
  CHECK(waited >= milliseconds(290));
  CHECK(waited < milliseconds(3000));
  pair.rank0->abort("test abort");
  auto after = pair.rank0->recv({0, ActionKind::kRecvB, 2}, milliseconds(300));
  REQUIRE_FALSE(after.ok());
  CHECK_THAT(after.error().message, Catch::Contains("test abort"));
  CHECK_FALSE(pair.rank0->send({0, ActionKind::kRecvB, 2}, torch::zeros({1})).ok());  // not a send
}

}  // namespace
}  // namespace pipeworks::hw
