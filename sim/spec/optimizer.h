// Training state held per parameter besides the parameter itself: its gradient and the
// optimizer's state. One place for the precision assumptions the partitioner and the
// cost-model builder share.
#pragma once

#include <cstdint>
#include <string_view>

#include "sched/result.h"
#include "sim/spec/model_spec.h"

namespace pipeworks::sim {

enum class OptimizerKind : std::uint8_t { kSgd, kMomentum, kAdam };

std::string_view optimizer_name(OptimizerKind kind);  // "sgd", "momentum", "adam"
sched::Result<OptimizerKind> parse_optimizer(std::string_view text);

// Gradients are kept in the parameters' precision: grad bytes == param bytes.
Bytes gradient_bytes(Bytes param_bytes);

// Optimizer state, always fp32 (4 bytes per value), per parameter:
//   sgd 0, momentum 1 value (velocity), adam 2 values (first and second moment);
// plus, when parameters are fp16/bf16 (mixed precision), an fp32 master copy (4 bytes).
// So fp32 Adam = 2x param bytes; bf16 Adam = 12 bytes/param = 6x param bytes, i.e. the
// 16 bytes/param of mixed-precision Adam counted by ZeRO (Rajbhandari et al. 2020, sec. 3.1).
// Saturates at the int64 maximum rather than overflow (a spec may state exabytes of parameters;
// the cost model's size limit then rejects them).
Bytes optimizer_state_bytes(Bytes param_bytes, ParamDtype dtype, OptimizerKind kind);

// param + gradient + optimizer state, saturating likewise.
Bytes training_state_bytes(Bytes param_bytes, ParamDtype dtype, OptimizerKind kind);
// The bytes one optimizer step moves through memory: it reads and writes each parameter and its
// state and reads its gradient once (a fused, element-wise update, as apex's FusedAdam and
// torch's foreach/fused optimizers do): 2 param + grad + 2 state. bf16 Adam: 30 bytes a parameter.
// Saturates likewise.
Bytes optimizer_step_bytes(Bytes param_bytes, ParamDtype dtype, OptimizerKind kind);

}  // namespace pipeworks::sim
