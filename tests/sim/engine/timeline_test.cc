// The predicted Timeline: lanes, flows, agreement with sched::compute_stats, link FIFO queueing,
// exact transfer times, and determinism.
#include <catch2/catch.hpp>

#include "sched/dependencies.h"
#include "sched/generators.h"
#include "sched/passes.h"
#include "sim/engine/op_table.h"
#include "sim/engine/simulator.h"

using namespace pipeworks;
using sched::ActionKind;
using sched::Lane;

namespace {

sched::Schedule lowered(sched::ScheduleKind kind, int k, int m) {
  auto s = sched::generate(kind, sched::ScheduleShape{k, m, {}});
  REQUIRE(s.ok());
  auto l = sched::lower_comm(*s);
  REQUIRE(l.ok());
  return *l;
}

}  // namespace

TEST_CASE("every action becomes one span on its lane and every transfer one flow", "[timeline]") {
  const auto schedule = lowered(sched::ScheduleKind::kOneFOneB, 4, 6);
  for (auto mode : {sim::CommMode::kOverlap, sim::CommMode::kBlocking}) {
    auto r = sim::simulate(schedule, sim::uniform_cost_model(4, 3, 5, 2, mode));
    REQUIRE(r.ok());
    const auto& tl = r->timeline;
    CHECK(tl.name == "predicted");
    CHECK(tl.spans.size() == schedule.num_actions());
    CHECK(static_cast<std::int64_t>(tl.flows.size()) == r->num_transfers);
    CHECK(r->num_transfers == 2 * 3 * 6);
    for (const auto& span : tl.spans) {
      const Lane want = sched::is_send(span.action.kind)   ? Lane::kSend
                        : sched::is_recv(span.action.kind) ? Lane::kRecv
                                                           : Lane::kCompute;
      CHECK(span.lane == want);
      CHECK(span.end_ns >= span.start_ns);
    }
    for (const auto& flow : tl.flows) {
      const auto& send = tl.spans[flow.send_span];
      const auto& recv = tl.spans[flow.recv_span];
      CHECK(sched::is_send(send.action.kind));
      CHECK(recv.action == *sched::comm_peer(send.action, 4));
      CHECK(send.start_ns == recv.start_ns);
      CHECK(send.end_ns - send.start_ns == 2);
      CHECK(recv.end_ns == send.end_ns);
    }
    // The figures agree with sched::compute_stats on the timeline, and with the timeline off.
    const auto stats = sched::compute_stats(tl);
    CHECK(stats.makespan_ns == r->makespan_ns);
    CHECK(stats.bubble_fraction == Approx(r->bubble_fraction));
    auto bare = sim::simulate(schedule, sim::uniform_cost_model(4, 3, 5, 2, mode), sim::SimOptions{false});
    REQUIRE(bare.ok());
    CHECK(bare->timeline.spans.empty());
    CHECK(bare->makespan_ns == r->makespan_ns);
    for (std::size_t d = 0; d < 4; ++d) {
      CHECK(stats.devices[d].busy_ns == r->devices[d].busy_ns);
      CHECK(bare->devices[d].busy_ns == r->devices[d].busy_ns);
      CHECK(bare->devices[d].memory.peak_bytes == r->devices[d].memory.peak_bytes);
    }
  }
}

TEST_CASE("transfers on one link queue in order of their ready time", "[timeline]") {
  // K=2, M=2, F=B=1, each transfer 10 ns, overlapped. Sends are ready at 1 and 2; the second
  // waits for the link:
  //   t:      0  1  2 ...  11 12 ... 21 22 23 24 ... 33 34 ... 43 44
  //   d0:     F0 F1                                    B0        B1
  //   0->1       [x0......][x1......]
  //   d1:                  F0        F1 B0 B1
  //   1->0                                [x0......][x1......]
  const auto schedule = lowered(sched::ScheduleKind::kGPipe, 2, 2);
  auto r = sim::simulate(schedule, sim::uniform_cost_model(2, 1, 1, 10));
  REQUIRE(r.ok());
  CHECK(r->makespan_ns == 44);
  std::vector<std::pair<std::string, std::pair<sched::Nanoseconds, sched::Nanoseconds>>> got;
  for (const auto& s : r->timeline.spans) got.push_back({sched::to_string(s.action), {s.start_ns, s.end_ns}});
  const decltype(got) expected = {
      {"0F0", {0, 1}},       {"0SEND_F0", {1, 11}},  {"0F1", {1, 2}},       {"0SEND_F1", {11, 21}},
      {"0RECV_B0", {23, 33}}, {"0B0", {33, 34}},      {"0RECV_B1", {33, 43}}, {"0B1", {43, 44}},
      {"1RECV_F0", {1, 11}},  {"1F0", {11, 12}},      {"1RECV_F1", {11, 21}}, {"1F1", {21, 22}},
      {"1B0", {22, 23}},      {"1SEND_B0", {23, 33}}, {"1B1", {23, 24}},      {"1SEND_B1", {33, 43}}};
  CHECK(got == expected);
}

TEST_CASE("a link shared by two device pairs serializes their transfers", "[timeline]") {
  // K=3 on 3 devices; 0->1 and 1->2 use the same link. GPipe M=1, F=B=1, transfers 10 ns: the
  // two forward hops happen one after the other anyway, so only the order matters; with M=2 the
  // second micro-batch's 0->1 hop (ready at 2) waits behind the first (1..11), and the 1->2 hop
  // of micro-batch 0 (ready at 12) waits behind it (11..21).
  auto model = sim::uniform_cost_model(3, 1, 1, 10);
  const int shared = model.link_of[0 * 3 + 1];
  model.link_of[1 * 3 + 2] = shared;
  auto r = sim::simulate(lowered(sched::ScheduleKind::kGPipe, 3, 2), model);
  REQUIRE(r.ok());
  auto span_of = [&](const char* text) {
    const auto a = *sched::parse_action(text);
    for (const auto& s : r->timeline.spans) {
      if (s.action == a) return std::pair{s.start_ns, s.end_ns};
    }
    FAIL("no span " << text);
    return std::pair<sched::Nanoseconds, sched::Nanoseconds>{};
  };
  CHECK(span_of("0SEND_F0") == std::pair<sched::Nanoseconds, sched::Nanoseconds>{1, 11});
  CHECK(span_of("0SEND_F1") == std::pair<sched::Nanoseconds, sched::Nanoseconds>{11, 21});
  CHECK(span_of("1SEND_F0") == std::pair<sched::Nanoseconds, sched::Nanoseconds>{21, 31});
}

TEST_CASE("transfer time is latency plus ceil(bytes / bandwidth), exact", "[timeline]") {
  CHECK(*sim::transfer_ns(sim::Link{5, 3.0}, 1000) == 5 + 333'333'333'334);
  CHECK(*sim::transfer_ns(sim::Link{0, 1e9}, 1000) == 1000);
  CHECK(*sim::transfer_ns(sim::Link{7, 450e9}, 0) == 7);
  CHECK(*sim::transfer_ns(sim::Link{0, 2.5}, 5) == 2'000'000'000);
  CHECK_FALSE(sim::transfer_ns(sim::Link{0, 1e-9}, std::int64_t{1} << 50).ok());
}

TEST_CASE("the simulation is deterministic", "[timeline]") {
  const auto schedule = lowered(sched::ScheduleKind::kOneFOneB, 6, 12);
  auto model = sim::uniform_cost_model(6, 3, 5, 4, sim::CommMode::kOverlap);
  model.link_of[0 * 6 + 1] = model.link_of[2 * 6 + 3];  // some contention
  auto a = sim::simulate(schedule, model);
  auto b = sim::simulate(schedule, model);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->timeline == b->timeline);
}
