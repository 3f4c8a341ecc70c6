// The pieces a rank of a multi-process run shares with the in-process run, without processes:
// the backend's choice of devices, the check folded the one way every run folds it
// (gradient_check.h), and a rank's own tensors beside the reference's at the same positions.
#include "hw/hw_test_support.h"  // first: LibTorch (glog's CHECK is undefined there for Catch's)

#include <catch2/catch.hpp>

#include "hw/dist/rank_backend.h"
#include "hw/dist/rank_tensors.h"
#include "hw/run/device_support.h"
#include "hw/run/gradient_check.h"

namespace pipeworks::hw {
namespace {

TEST_CASE("rank backend: gloo computes on the CPU, the backend follows the device kind") {
  CHECK(backend_for(DeviceKind::kCpu) == Backend::kGloo);
  CHECK(backend_for(DeviceKind::kCuda) == Backend::kNccl);
  CHECK(backend_name(Backend::kGloo) == "gloo");
  CHECK(backend_name(Backend::kNccl) == "nccl");
  CHECK(check_backend(Backend::kGloo).ok());
  auto nccl = check_backend(Backend::kNccl);
  CHECK(nccl.ok() == built_with_cuda());
  if (!nccl.ok()) CHECK_THAT(nccl.error().message, Catch::Contains("backend nccl needs a LibTorch with CUDA"));
  DistributedEnv env;
  env.rank = 1;
  env.world_size = 2;
  auto where = rank_compute_devices(env, Backend::kGloo);
  REQUIRE(where.ok());
  CHECK((*where)->kind() == DeviceKind::kCpu);
  CHECK((*where)->device_of(1) == torch::Device(torch::kCPU));
  CHECK((*where)->executor_meters_memory());
}

TEST_CASE("gradient check: parts fold into maxima and a conjunction, an empty total becomes the first part") {
  std::optional<GradientCheck> total;
  merge_check(total, GradientCheck{1e-7, 1e-6, false, true, 1e-5, 4e-5});
  REQUIRE(total);
  CHECK(total->max_abs_diff == 1e-7);
  CHECK_FALSE(total->exactly_equal);
  merge_check(total, GradientCheck{2e-7, 1e-8, true, false, 1.0, 1.0});
  CHECK(total->max_abs_diff == 2e-7);
  CHECK(total->max_rel_diff == 1e-6);
  CHECK_FALSE(total->exactly_equal);
  CHECK_FALSE(total->passed);
  CHECK(total->rtol == 1e-5);  // the total's tolerances
}

TEST_CASE("rank tensors: each rank holds its own cells' tensors, matched with the reference's") {
  const Model model = build_model(testing::tiny_mlp()).value();
  const sched::Schedule schedule = testing::lowered(sched::ScheduleKind::kOneFOneB, 2, 2, false);
  const sim::Partition partition = sim::uniform_partition(static_cast<int>(model.layers.size()), 2).value();
  Reference reference(model, {});
  auto executor = Executor::create(schedule, make_cells(model, partition, schedule.placement).value(),
                                   testing::one_thread());
  REQUIRE(executor.ok());
  const std::uint64_t seed = 7;
  const MicroBatches batch = split_batch(make_batch(model.config, 4, seed), 2).value();
  REQUIRE((*executor)->step(batch, seed).ok());
  REQUIRE(reference.step(batch, seed, ReferenceMode::kMicrobatches).ok());

  std::size_t total = 0;
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    const RankTensors own = rank_tensors((*executor)->cells(), rank, &reference);
    REQUIRE_FALSE(own.parameters.empty());
    REQUIRE(own.gradients.size() == own.parameters.size());
    REQUIRE(own.reference_parameters.size() == own.parameters.size());
    REQUIRE(own.reference_gradients.size() == own.parameters.size());
    total += own.parameters.size();
    const GradientCheck check = check_rank_tensors(own);
    CHECK(check.exactly_equal);  // the same micro-batches in the same order, one thread
    CHECK(check.passed);
    const RankTensors alone = rank_tensors((*executor)->cells(), rank, nullptr);
    CHECK(alone.parameters.size() == own.parameters.size());
    CHECK(alone.reference_parameters.empty());
  }
  CHECK(total == reference.parameters().size());
}

}  // namespace
}  // namespace pipeworks::hw
