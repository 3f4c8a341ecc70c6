// The simulator's op table resolves dependencies, partners and memory changes from its own flat
// index; these tests hold it to the one definition in sched/dependencies.h and sim/engine/memory_model.h.
#include <catch2/catch.hpp>

#include "sched/action_index.h"
#include "sched/dependencies.h"
#include "sched/generators.h"
#include "sched/passes.h"
#include "sim/engine/op_table.h"

using namespace pipeworks;
using sched::Action;
using sched::ActionKind;

namespace {

// Every B(s,m) becomes I(s,m) W(s,m): the zero-bubble split, so I/W rules are exercised too.
sched::Schedule split_backward(sched::Schedule schedule) {
  for (sched::Program& program : schedule.programs) {
    sched::Program out;
    for (const Action& a : program) {
      if (a.kind != ActionKind::kBackward) {
        out.push_back(a);
        continue;
      }
      out.push_back({a.stage, ActionKind::kBackwardInput, a.microbatch});
      out.push_back({a.stage, ActionKind::kBackwardWeight, a.microbatch});
    }
    program = std::move(out);
  }
  return schedule;
}

std::vector<sched::Schedule> variants(sched::ScheduleKind kind, int k, int m, std::vector<int> placement) {
  auto base = sched::generate(kind, sched::ScheduleShape{k, m, std::move(placement)});
  REQUIRE(base.ok());
  std::vector<sched::Schedule> out;
  for (const auto& plain : {*base, *sched::add_recompute(*base), split_backward(*base)}) {
    out.push_back(plain);
    auto lowered = sched::lower_comm(plain);
    REQUIRE(lowered.ok());
    out.push_back(*lowered);
  }
  return out;
}

void check_against_sched(const sched::Schedule& schedule) {
  auto model = sim::uniform_cost_model(schedule.num_stages, 3, 5, 1);
  model.num_devices = schedule.num_devices();
  model.device_memory_bytes.assign(static_cast<std::size_t>(model.num_devices), 0);
  model.links.assign(1, sim::Link{1, 1e9});
  model.link_of.assign(static_cast<std::size_t>(model.num_devices * model.num_devices), 0);
  for (int d = 0; d < model.num_devices; ++d) model.link_of[static_cast<std::size_t>(d * model.num_devices + d)] = -1;
  for (std::size_t s = 0; s < model.stages.size(); ++s) {
    model.stages[s].stash_bytes = 100 + static_cast<sim::Bytes>(s);
    model.stages[s].input_bytes = 10 + static_cast<sim::Bytes>(s);
  }
  auto table = sim::build_op_table(schedule, model);
  REQUIRE(table.ok());
  auto index = sched::ActionIndex::build(schedule);
  REQUIRE(index.ok());
  const auto op_of = [&](const Action& a) {
    const auto loc = index->find(a);
    REQUIRE(loc.has_value());
    return table->device_begin[static_cast<std::size_t>(loc->device)] + loc->position;
  };
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) {
    for (std::size_t p = 0; p < schedule.programs[d].size(); ++p) {
      const Action& a = schedule.programs[d][p];
      const auto i = static_cast<std::size_t>(table->device_begin[d]) + p;
      INFO(sched::to_string(a) << " on device " << d);
      CHECK(table->kind(i) == a.kind);
      CHECK(table->device(i) == static_cast<std::int32_t>(d));
      std::int32_t expected[2] = {-1, -1};
      if (!sched::is_recv(a.kind)) {
        int n = 0;
        for (const Action& dep : sched::data_dependencies(a, *index, schedule.num_stages)) expected[n++] = op_of(dep);
      }
      CHECK(table->dependency(i, 0) == expected[0]);
      CHECK(table->dependency(i, 1) == expected[1]);
      const auto peer = sched::comm_peer(a, schedule.num_stages);
      CHECK(table->peer(i) == (peer ? op_of(*peer) : -1));
      CHECK(table->class_of(i).link == (peer ? 0 : -1));
      CHECK(table->class_of(i).memory_delta_bytes == sim::activation_delta_bytes(a, *index, model));
    }
  }
  std::int64_t classified = 0;
  for (const std::int64_t n : table->ops_per_class()) classified += n;
  CHECK(classified == static_cast<std::int64_t>(table->size()));
}

}  // namespace

TEST_CASE("op table dependencies, partners and memory changes agree with sched and memory_model", "[op_table]") {
  for (auto kind : {sched::ScheduleKind::kGPipe, sched::ScheduleKind::kOneFOneB}) {
    for (int k = 1; k <= 5; ++k) {
      for (int m = 1; m <= 6; ++m) {
        for (const auto& s : variants(kind, k, m, {})) check_against_sched(s);
      }
    }
    // Two stages per device: some pairs stay on one device and get no SEND/RECV.
    for (const auto& s : variants(kind, 4, 5, {0, 1, 1, 0})) check_against_sched(s);
  }
}

TEST_CASE("a link is shared when SENDs of more than one device use it", "[op_table]") {
  auto schedule = sched::lower_comm(*sched::gpipe(sched::ScheduleShape{3, 2, {}}));
  REQUIRE(schedule.ok());
  auto model = sim::uniform_cost_model(3, 3, 5, 1);  // one link per ordered pair
  auto table = sim::build_op_table(*schedule, model);
  REQUIRE(table.ok());
  CHECK(table->num_transfers == 2 * 2 * 2);
  for (const auto shared : table->link_shared) CHECK(shared == 0);
  for (const sim::OpClass& c : table->classes) CHECK(c.resume_ns == 0);  // none in the model
  for (const sim::OpClass& c : table->classes) CHECK(c.link_shared == 0);

  model.link_of = {-1, 0, 0, 0, -1, 0, 0, 0, -1};  // every pair on link 0
  table = sim::build_op_table(*schedule, model);
  REQUIRE(table.ok());
  CHECK(table->link_shared[0] == 1);
  for (const sim::OpClass& c : table->classes) CHECK(c.link_shared == (c.link == 0 ? 1 : 0));
}

TEST_CASE("ops of one stage and kind share a class unless their variant differs", "[op_table]") {
  // K = 2, M = 3, GPipe lowered: per stage F and B (and one SEND/RECV kind each way).
  auto schedule = sched::lower_comm(*sched::gpipe(sched::ScheduleShape{2, 3, {}}));
  REQUIRE(schedule.ok());
  auto model = sim::uniform_cost_model(2, 3, 5, 1);
  model.stages[1].first_forward_ns = 30;  // stage 1's first F gets a class of its own
  auto table = sim::build_op_table(*schedule, model);
  REQUIRE(table.ok());
  // 2 stages x (F, B) + 4 transfer kinds + stage 1's first F.
  CHECK(table->classes.size() == 2 * 2 + 4 + 1);
  const auto d1 = static_cast<std::size_t>(table->device_begin[1]);  // device 1: RECV_F0 F0 ...
  CHECK(table->class_of(d1 + 1).duration_ns == 30);
  CHECK(table->class_of(d1 + 3).duration_ns == 3);
  CHECK(table->class_of(d1 + 3).resume_ns == 0);
}
