// The c10d transport between two ranks in one process (two threads, two Gloo groups over one
// TCPStore): tensors arrive intact with and without an agreed shape (without one, in the shape
// the header announces), a tensor that breaks an agreement is refused by its sender, an agreed
// payload travels without a header, a send returns once posted and finish_sends waits for its
// receiver, a receive posts the next one of the rank's order so that its send completes before
// the receiver asks for it, and a receive whose sender never comes times out naming the peer.
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

// Two ranks, K = 2 stages on ranks 0 and 1, M = 4; `timeout` is the transports' deadline. The
// ranks connect with a deadline of their own, long enough for a loaded machine: a short one
// (500 ms) once failed the connection, not the transport, under `ctest -j 8` on two cores.
Pair connect_pair(milliseconds timeout) {
  const int port = find_free_port().value();
  auto connect = [port](int rank) {
    DistributedEnv env;
    env.rank = rank;
    env.world_size = 2;
    env.master_port = static_cast<std::uint16_t>(port);
    return connect_gloo(env, milliseconds(30000));
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
  for (C10dTransport* side : {pair.rank0.get(), pair.rank1.get()}) {
    side->agree({1, ActionKind::kRecvF, 0}, meta_of(activation));
    side->agree({0, ActionKind::kRecvB, 0}, meta_of(activation));
  }
  auto receiver = std::async(std::launch::async, [&] {
    auto a = pair.rank1->recv({1, ActionKind::kRecvF, 0}, milliseconds(10000));
    auto b = pair.rank1->recv({1, ActionKind::kRecvF, 1}, milliseconds(10000));  // not agreed: a header
    auto s = pair.rank1->send({1, ActionKind::kSendB, 0}, activation * 2);  // a temporary: kept alive while sent
    auto finished = pair.rank1->finish_sends(milliseconds(10000));
    return std::make_tuple(std::move(a), std::move(b), std::move(s), std::move(finished));
  });
  REQUIRE(pair.rank0->send({0, ActionKind::kSendF, 0}, activation).ok());
  REQUIRE(pair.rank0->send({0, ActionKind::kSendF, 1}, tokens).ok());
  auto grad = pair.rank0->recv({0, ActionKind::kRecvB, 0}, milliseconds(10000));
  REQUIRE(pair.rank0->finish_sends(milliseconds(10000)).ok());
  auto [a, b, s, finished] = receiver.get();
  REQUIRE(finished.ok());
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(s.ok());
  REQUIRE(grad.ok());
  CHECK(torch::equal(*a, activation));
  CHECK(b->scalar_type() == torch::kInt64);
  CHECK(torch::equal(*b, tokens));
  CHECK(torch::equal(*grad, activation * 2));
}

TEST_CASE("c10d transport: a tensor that breaks the agreement is refused by its sender", "[c10d]") {
  Pair pair = connect_pair(milliseconds(3000));
  for (C10dTransport* side : {pair.rank0.get(), pair.rank1.get()}) {
    side->agree({1, ActionKind::kRecvF, 2}, TensorMeta{torch::kFloat32, {3, 2}});
  }
  auto receiver = std::async(std::launch::async, [&] {
    return pair.rank1->recv({1, ActionKind::kRecvF, 2}, milliseconds(300));
  });
  const auto sent = pair.rank0->send({0, ActionKind::kSendF, 2}, torch::zeros({2, 3}));
  REQUIRE_FALSE(sent.ok());
  CHECK_THAT(sent.error().message, Catch::Contains("rank 0: 0SEND_F2 to rank 1 (1RECV_F2)"));
  CHECK_THAT(sent.error().message, Catch::Contains("the tensor is Float (2, 3) but the hand-off was agreed as Float (3, 2)"));
  // Nothing was sent: the receiver waits out its deadline.
  auto received = receiver.get();
  REQUIRE_FALSE(received.ok());
  CHECK_THAT(received.error().message, Catch::Contains("rank 1: 1RECV_F2 waiting for rank 0 (0SEND_F2)"));
}

TEST_CASE("c10d transport: an agreed payload travels without a header", "[c10d]") {
  // Only the sender agrees, so the receiver waits for a header that never comes: the one
  // message sent is the payload. (A one-sided agreement is a contract violation; it ends in
  // timeouts that name the peer, never in bytes read as the wrong tensor.)
  Pair pair = connect_pair(milliseconds(500));
  pair.rank0->agree({1, ActionKind::kRecvF, 3}, TensorMeta{torch::kFloat32, {2, 3}});
  auto receiver = std::async(std::launch::async, [&] {
    return pair.rank1->recv({1, ActionKind::kRecvF, 3}, milliseconds(500));
  });
  const auto sent = pair.rank0->send({0, ActionKind::kSendF, 3}, torch::zeros({2, 3}));
  auto received = receiver.get();
  REQUIRE_FALSE(received.ok());
  CHECK_THAT(received.error().message, Catch::Contains("rank 1: 1RECV_F3 waiting for rank 0 (0SEND_F3) (header)"));
  if (!sent.ok()) CHECK_THAT(sent.error().message, Catch::Contains("rank 0: 0SEND_F3 to rank 1"));
}

TEST_CASE("c10d transport: a hand-off nobody agreed on takes the shape its header announces", "[c10d]") {
  Pair pair = connect_pair(milliseconds(3000));
  auto receiver = std::async(std::launch::async, [&] {
    return pair.rank1->recv({1, ActionKind::kRecvF, 2}, milliseconds(3000));
  });
  const auto sent = pair.rank0->send({0, ActionKind::kSendF, 2}, torch::zeros({2, 3}));
  auto received = receiver.get();
  REQUIRE(sent.ok());
  REQUIRE(received.ok());
  CHECK(received->sizes() == torch::IntArrayRef({2, 3}));
}

TEST_CASE("c10d transport: a send returns once posted, finish_sends waits for its receiver", "[c10d]") {
  Pair pair = connect_pair(milliseconds(3000));
  for (C10dTransport* side : {pair.rank0.get(), pair.rank1.get()}) {
    side->agree({1, ActionKind::kRecvF, 1}, TensorMeta{torch::kFloat32, {4096, 1024}});
  }
  // 16 MiB, more than sockets buffer: the send is posted, and the rank goes on without a receiver.
  REQUIRE(pair.rank0->send({0, ActionKind::kSendF, 1}, torch::ones({4096, 1024})).ok());
  auto unfinished = pair.rank0->finish_sends(milliseconds(300));
  REQUIRE_FALSE(unfinished.ok());
  CHECK_THAT(unfinished.error().message, Catch::Contains("rank 0: 0SEND_F1 to rank 1 (1RECV_F1)"));
  pair.rank0->abort("test over");
}

TEST_CASE("c10d transport: a receive posts the next one of the rank's order", "[c10d]") {
  Pair pair = connect_pair(milliseconds(3000));
  const Action first{1, ActionKind::kRecvF, 0}, second{1, ActionKind::kRecvF, 1};
  for (C10dTransport* side : {pair.rank0.get(), pair.rank1.get()}) {
    side->agree(first, TensorMeta{torch::kFloat32, {2, 3}});
    side->agree(second, TensorMeta{torch::kFloat32, {2, 3}});
  }
  const bool in_order = GENERATE(true, false);
  if (in_order) pair.rank1->receive_in_order({first, second});
  REQUIRE(pair.rank0->send({0, ActionKind::kSendF, 0}, torch::zeros({2, 3})).ok());
  REQUIRE(pair.rank0->send({0, ActionKind::kSendF, 1}, torch::ones({2, 3})).ok());
  REQUIRE(pair.rank1->recv(first, milliseconds(3000)).ok());
  // Gloo completes a send once its receiver has posted the receive: with the order, rank 1
  // posted micro-batch 1's before waiting for micro-batch 0's; without it, nobody has.
  const auto sends = pair.rank0->finish_sends(milliseconds(in_order ? 3000 : 300));
  CHECK(sends.ok() == in_order);
  if (!in_order) return;  // the failed wait dropped the send
  const auto second_received = pair.rank1->recv(second, milliseconds(3000));
  REQUIRE(second_received.ok());
  CHECK(torch::equal(*second_received, torch::ones({2, 3})));
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
