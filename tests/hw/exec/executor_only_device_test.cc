// The executor's single-device mode (ExecutorOptions::only_device), the building block of
// multi-process runs: only that device's worker runs; its peers must come through the transport.
#include <catch2/catch.hpp>

#include "hw/hw_test_support.h"

namespace pipeworks::hw {
namespace {

TEST_CASE("executor: only_device runs one device's program and rejects devices out of range") {
  const Model model = build_model(testing::tiny_mlp()).value();
  const sched::Schedule schedule = testing::lowered(sched::ScheduleKind::kOneFOneB, 2, 2, false);
  const sim::Partition partition = sim::uniform_partition(static_cast<int>(model.layers.size()), 2).value();
  ExecutorOptions options = testing::one_thread();
  options.recv_timeout = std::chrono::milliseconds(200);
  for (int bad : {-1, 2}) {
    options.only_device = bad;
    CHECK_FALSE(Executor::create(schedule, make_cells(model, partition, schedule.placement).value(), options).ok());
  }
  // Device 1 alone: its first action, RECV_F0, has no sender in this process and times out.
  options.only_device = 1;
  auto executor = Executor::create(schedule, make_cells(model, partition, schedule.placement).value(), options);
  REQUIRE(executor.ok());
  const MicroBatches batch = split_batch(make_batch(model.config, 4, 7), 2).value();
  auto step = (*executor)->step(batch, 7);
  REQUIRE_FALSE(step.ok());
  CHECK_THAT(step.error().message, Catch::Contains("1RECV_F0"));
  CHECK_THAT(step.error().message, Catch::Contains("timed out"));
  // Device 0's parameters were never touched: no gradients.
  for (const StageCell& c : (*executor)->cells()) {
    if (c.device == 0) {
      for (const torch::Tensor& p : c.parameters()) CHECK_FALSE(p.grad().defined());
    }
  }
}

}  // namespace
}  // namespace pipeworks::hw
