// Bytes of gradients and optimizer state per parameter byte (assumptions in optimizer.h).
#include "sim/spec/optimizer.h"

#include <limits>

#include <fmt/format.h>

namespace pipeworks::sim {

std::string_view optimizer_name(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd: return "sgd";
    case OptimizerKind::kMomentum: return "momentum";
    case OptimizerKind::kAdam: return "adam";
  }
  return "?";
}

sched::Result<OptimizerKind> parse_optimizer(std::string_view text) {
  for (const OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kMomentum, OptimizerKind::kAdam}) {
    if (optimizer_name(kind) == text) return kind;
  }
  return sched::Error{fmt::format("unknown optimizer '{}' (expected sgd, momentum or adam)", text),
                      std::nullopt};
}

Bytes gradient_bytes(Bytes param_bytes) { return param_bytes; }

Bytes optimizer_state_bytes(Bytes param_bytes, ParamDtype dtype, OptimizerKind kind) {
  const Bytes params = param_bytes / dtype_bytes(dtype);
  const Bytes master = dtype == ParamDtype::kFp32 ? 0 : 4;
  Bytes states = 0;
  switch (kind) {
    case OptimizerKind::kSgd: states = 0; break;
    case OptimizerKind::kMomentum: states = 4; break;
    case OptimizerKind::kAdam: states = 8; break;
  }
  Bytes total = 0;
  if (__builtin_mul_overflow(params, master + states, &total)) return std::numeric_limits<Bytes>::max();
  return total;
}

Bytes training_state_bytes(Bytes param_bytes, ParamDtype dtype, OptimizerKind kind) {
  Bytes total = 0;
  if (__builtin_add_overflow(param_bytes, gradient_bytes(param_bytes), &total) ||
      __builtin_add_overflow(total, optimizer_state_bytes(param_bytes, dtype, kind), &total)) {
    return std::numeric_limits<Bytes>::max();
  }
  return total;
}

Bytes optimizer_step_bytes(Bytes param_bytes, ParamDtype dtype, OptimizerKind kind) {
  const Bytes state = optimizer_state_bytes(param_bytes, dtype, kind);
  Bytes total = 0;
  if (__builtin_mul_overflow(param_bytes, 2, &total) ||
      __builtin_add_overflow(total, gradient_bytes(param_bytes), &total) ||
      __builtin_add_overflow(total, state, &total) || __builtin_add_overflow(total, state, &total)) {
    return std::numeric_limits<Bytes>::max();
  }
  return total;
}

}  // namespace pipeworks::sim
