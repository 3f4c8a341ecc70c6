// `run --partition balanced`: the run's cells are cut by the simulator's balanced partitioner
// over a model spec, and without a spec the error says one is needed.
#include "hw/hw_test_support.h"  // first: LibTorch (glog's CHECK is undefined there for Catch's)

#include <catch2/catch.hpp>

#include "hw/run/describe_model.h"
#include "hw/run/layer_partition.h"

namespace pipeworks::hw {
namespace {

// The --partition text as the command line reads it.
sim::PartitionChoice choice(std::string_view text) { return sim::parse_partition_choice(text).value(); }

using namespace testing;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The tiny mlp's 5 layers with forward times 1, 1, 2, 3, 3 us (backward 2x): the only cuts with
// the smallest slowest stage are 3 | 2 for 2 stages (forward 4 | 6; 2 | 3 gives 8) and 3 | 1 | 1
// for 3 stages (4 | 3 | 3).
sim::ModelSpec skewed_spec() {
  const Model model = build_model(tiny_mlp()).value();
  sim::ModelSpec spec = describe_model(model).value();
  const std::vector<sched::Nanoseconds> forward_ns{1000, 1000, 2000, 3000, 3000};
  for (std::size_t l = 0; l < spec.layers.size(); ++l) {
    spec.layers[l].forward = {forward_ns[l], 0};
    spec.layers[l].set_backward({2 * forward_ns[l], 0});
  }
  return spec;
}

TEST_CASE("run_partition: balanced cuts by the simulator's partitioner over the spec") {
  const sim::ModelSpec spec = skewed_spec();
  REQUIRE(spec.num_layers() == 5);
  for (sched::ScheduleKind kind : {sched::ScheduleKind::kGPipe, sched::ScheduleKind::kOneFOneB}) {
    const sched::Schedule two = lowered(kind, 2, 4, false);
    RunBalance balance{&two, kind, 2, sim::OptimizerKind::kSgd, false};
    auto p2 = run_partition(choice("balanced"), 5, &spec, balance);
    REQUIRE(p2.ok());
    CHECK(p2->boundaries == std::vector<int>{0, 3, 5});
    const sched::Schedule three = lowered(kind, 3, 4, false);
    balance.schedule = &three;
    auto p3 = run_partition(choice("balanced"), 5, &spec, balance);
    REQUIRE(p3.ok());
    CHECK(p3->boundaries == std::vector<int>{0, 3, 4, 5});
    // The same cut as sim::balanced_partition over the same problem.
    sim::BalanceOptions options;
    options.microbatch_size = 2;
    options.optimizer = sim::OptimizerKind::kSgd;
    for (int s = 0; s < 3; ++s) options.in_flight.push_back(kind == sched::ScheduleKind::kGPipe ? 4 : 3 - s);
    CHECK(p3->boundaries == sim::balanced_partition(spec, 3, options).value().boundaries);
  }
}

TEST_CASE("run_partition: uniform and counts as before, balanced without a spec or with the wrong one fails") {
  const sim::ModelSpec spec = skewed_spec();
  const sched::Schedule two = lowered(sched::ScheduleKind::kOneFOneB, 2, 4, false);
  const RunBalance balance{&two, sched::ScheduleKind::kOneFOneB, 2, sim::OptimizerKind::kSgd, false};
  CHECK(run_partition(choice("uniform"), 5, nullptr, balance).value().boundaries ==
        sim::uniform_partition(5, 2).value().boundaries);
  CHECK(run_partition(choice("1,4"), 5, nullptr, balance).value().boundaries == std::vector<int>{0, 1, 5});
  auto missing = run_partition(choice("balanced"), 5, nullptr, balance);
  REQUIRE_FALSE(missing.ok());
  CHECK(contains(missing.error().message, "needs a model spec"));
  auto wrong = run_partition(choice("balanced"), 6, &spec, balance);
  REQUIRE_FALSE(wrong.ok());
  CHECK(contains(wrong.error().message, "has 5 layers, the model 6"));
  CHECK_FALSE(run_partition(choice("balanced"), 5, &spec, RunBalance{}).ok());
}

}  // namespace
}  // namespace pipeworks::hw
