// Per-device training state under ZeRO sharding (the table in zero_sharding.h).
#include "sim/spec/zero_sharding.h"

#include <array>
#include <limits>

#include <fmt/format.h>

namespace pipeworks::sim {
namespace {

constexpr std::array<ZeroStage, 4> kStages{ZeroStage::kNone, ZeroStage::kOptimizer, ZeroStage::kGradients,
                                           ZeroStage::kParameters};

}  // namespace

std::string_view zero_stage_name(ZeroStage stage) {
  switch (stage) {
    case ZeroStage::kNone: return "0";
    case ZeroStage::kOptimizer: return "1";
    case ZeroStage::kGradients: return "2";
    case ZeroStage::kParameters: return "3";
  }
  return "?";
}

sched::Result<ZeroStage> parse_zero_stage(std::string_view text) {
  for (const ZeroStage stage : kStages) {
    if (zero_stage_name(stage) == text) return stage;
  }
  return sched::Error{fmt::format("unknown ZeRO stage '{}' (expected 0, 1, 2 or 3)", text)};
}

Bytes shard_bytes(Bytes bytes, int parts) {
  if (parts <= 1) return bytes;
  return bytes / parts + (bytes % parts != 0 ? 1 : 0);
}

Bytes ShardedState::total_bytes() const {
  Bytes total = 0;
  if (__builtin_add_overflow(param_bytes, grad_bytes, &total) ||
      __builtin_add_overflow(total, optimizer_bytes, &total)) {
    return std::numeric_limits<Bytes>::max();
  }
  return total;
}

ShardedState sharded_state(Bytes param_bytes, ParamDtype dtype, OptimizerKind optimizer, ZeroStage zero, int dp) {
  const Bytes grads = gradient_bytes(param_bytes);
  const Bytes states = optimizer_state_bytes(param_bytes, dtype, optimizer);
  const auto at_least = [zero](ZeroStage stage) { return static_cast<int>(zero) >= static_cast<int>(stage); };
  ShardedState out;
  out.param_bytes = at_least(ZeroStage::kParameters) ? shard_bytes(param_bytes, dp) : param_bytes;
  out.grad_bytes = at_least(ZeroStage::kGradients) ? shard_bytes(grads, dp) : grads;
  out.optimizer_bytes = at_least(ZeroStage::kOptimizer) ? shard_bytes(states, dp) : states;
  return out;
}

}  // namespace pipeworks::sim
