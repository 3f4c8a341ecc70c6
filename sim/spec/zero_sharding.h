// How a stage's training state is split over its data-parallel group (ZeRO, Rajbhandari et al.
// 2020, "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models", sec. 5.1-5.3):
// what each of the group's `dp` devices holds of the stage's parameters, gradients and optimizer
// state under each sharding stage.
//
//   per device, Psi = the stage's parameter bytes of one replica, K = optimizer bytes per param byte
//                   params      grads       optimizer state
//   none            Psi         Psi         K Psi             (plain data parallelism, DDP)
//   ZeRO-1 (P_os)   Psi         Psi         K Psi / dp        (Megatron's distributed optimizer)
//   ZeRO-2 (P_os+g) Psi         Psi / dp    K Psi / dp
//   ZeRO-3 (+p)     Psi / dp    Psi / dp    K Psi / dp        (FSDP; parameters gathered to compute)
//
// A shard that does not divide evenly is rounded up: each device holds its whole shard.
#pragma once

#include <cstdint>
#include <string_view>

#include "sched/result.h"
#include "sim/spec/model_spec.h"
#include "sim/spec/optimizer.h"

namespace pipeworks::sim {

enum class ZeroStage : std::uint8_t {
  kNone = 0,        // every replica holds everything
  kOptimizer = 1,   // ZeRO-1: optimizer state sharded
  kGradients = 2,   // ZeRO-2: + gradients (reduce-scatter instead of all-reduce)
  kParameters = 3,  // ZeRO-3 / FSDP: + parameters (all-gathered before use: UNSHARD/RESHARD)
};

// "0", "1", "2", "3": the numbers `--zero` takes and reports print.
std::string_view zero_stage_name(ZeroStage stage);
sched::Result<ZeroStage> parse_zero_stage(std::string_view text);

// What one device of a `dp`-way group holds of a stage whose replica has `param_bytes` of
// parameters in `dtype`, trained with `optimizer`, under `zero`. Sums saturate at the int64
// maximum, as optimizer.h's do.
struct ShardedState {
  Bytes param_bytes = 0;
  Bytes grad_bytes = 0;
  Bytes optimizer_bytes = 0;
  Bytes total_bytes() const;
  friend bool operator==(const ShardedState&, const ShardedState&) = default;
};
ShardedState sharded_state(Bytes param_bytes, ParamDtype dtype, OptimizerKind optimizer, ZeroStage zero, int dp);

// ceil(bytes / parts): one device's shard of `bytes` split `parts` ways (parts >= 1).
Bytes shard_bytes(Bytes bytes, int parts);

}  // namespace pipeworks::sim
