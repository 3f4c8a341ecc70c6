// Per-device training state under each ZeRO stage (sim/spec/zero_sharding.h), against the ZeRO
// paper's own figures: Rajbhandari et al. 2020, Figure 1, a 7.5B-parameter model trained with
// mixed-precision Adam (K = 12 bytes of optimizer state per parameter) on 64 data-parallel GPUs:
// 120 GB, 31.4 GB, 16.6 GB and 1.9 GB per device.
#include <catch2/catch.hpp>

#include <limits>

#include "sim/spec/zero_sharding.h"

namespace pipeworks::sim {
namespace {

constexpr Bytes kParams = 7'500'000'000;  // Psi
constexpr Bytes kBf16Bytes = 2 * kParams;

TEST_CASE("zero sharding: the ZeRO paper's 7.5B model on 64 GPUs, byte for byte", "[zero]") {
  const auto at = [](ZeroStage zero) {
    return sharded_state(kBf16Bytes, ParamDtype::kBf16, OptimizerKind::kAdam, zero, 64);
  };
  CHECK(at(ZeroStage::kNone) == ShardedState{15'000'000'000, 15'000'000'000, 90'000'000'000});
  CHECK(at(ZeroStage::kNone).total_bytes() == 120'000'000'000);            // 16 Psi
  CHECK(at(ZeroStage::kOptimizer).total_bytes() == 31'406'250'000);        // 4 Psi + 12 Psi / 64
  CHECK(at(ZeroStage::kGradients).total_bytes() == 16'640'625'000);        // 2 Psi + 14 Psi / 64
  CHECK(at(ZeroStage::kParameters).total_bytes() == 1'875'000'000);        // 16 Psi / 64
  CHECK(at(ZeroStage::kGradients) == ShardedState{15'000'000'000, 234'375'000, 1'406'250'000});
}

TEST_CASE("zero sharding: one replica or no optimizer state shards nothing more", "[zero]") {
  for (const ZeroStage zero : {ZeroStage::kNone, ZeroStage::kOptimizer, ZeroStage::kGradients, ZeroStage::kParameters}) {
    CHECK(sharded_state(4000, ParamDtype::kFp32, OptimizerKind::kAdam, zero, 1) == ShardedState{4000, 4000, 8000});
  }
  CHECK(sharded_state(4000, ParamDtype::kFp32, OptimizerKind::kSgd, ZeroStage::kOptimizer, 8) ==
        ShardedState{4000, 4000, 0});
}

TEST_CASE("zero sharding: uneven shards round up, sums saturate", "[zero]") {
  CHECK(shard_bytes(10, 3) == 4);
  CHECK(shard_bytes(9, 3) == 3);
  CHECK(shard_bytes(0, 3) == 0);
  CHECK(shard_bytes(7, 1) == 7);
  CHECK(sharded_state(10, ParamDtype::kFp32, OptimizerKind::kSgd, ZeroStage::kParameters, 3) ==
        ShardedState{4, 4, 0});
  const Bytes huge = std::numeric_limits<Bytes>::max() / 2;
  CHECK(sharded_state(huge, ParamDtype::kFp32, OptimizerKind::kAdam, ZeroStage::kNone, 2).total_bytes() ==
        std::numeric_limits<Bytes>::max());
}

TEST_CASE("zero sharding: stages are read and printed as 0 to 3", "[zero]") {
  for (const char* name : {"0", "1", "2", "3"}) {
    auto stage = parse_zero_stage(name);
    REQUIRE(stage.ok());
    CHECK(zero_stage_name(*stage) == name);
  }
  for (const char* bad : {"4", "", "zero-1", "-1", "1 "}) {
    auto stage = parse_zero_stage(bad);
    REQUIRE_FALSE(stage.ok());
    CHECK_THAT(stage.error().message, Catch::Contains("expected 0, 1, 2 or 3"));
  }
}

}  // namespace
}  // namespace pipeworks::sim
