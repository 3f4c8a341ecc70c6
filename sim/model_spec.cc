// ModelSpec's arithmetic (costs at a micro-batch size, with overflow checks) and its checks.
#include "sim/model_spec.h"

#include <set>

#include <fmt/format.h>

namespace pipeworks::sim {
namespace {

template <class T>
sched::Result<T> linear(T fixed, T per_sample, int microbatch_size) {
  if (microbatch_size < 1) {
    return sched::Error{fmt::format("micro-batch size must be at least 1, got {}", microbatch_size),
                        std::nullopt};
  }
  T scaled = 0;
  T total = 0;
  if (__builtin_mul_overflow(per_sample, static_cast<T>(microbatch_size), &scaled) ||
      __builtin_add_overflow(fixed, scaled, &total)) {
    return sched::Error{fmt::format("cost {} + {} x {} overflows 64 bits", fixed, per_sample,
                                    microbatch_size),
                        std::nullopt};
  }
  return total;
}

}  // namespace

sched::Result<Nanoseconds> ScaledDuration::at(int microbatch_size) const {
  return linear(fixed_ns, per_sample_ns, microbatch_size);
}

sched::Result<Bytes> ScaledBytes::at(int microbatch_size) const {
  return linear(fixed_bytes, per_sample_bytes, microbatch_size);
}

ScaledDuration operator+(const ScaledDuration& a, const ScaledDuration& b) {
  return ScaledDuration{a.fixed_ns + b.fixed_ns, a.per_sample_ns + b.per_sample_ns};
}

void LayerSpec::set_backward(const ScaledDuration& backward) {
  backward_input = ScaledDuration{backward.fixed_ns - backward.fixed_ns / 2,
                                  backward.per_sample_ns - backward.per_sample_ns / 2};
  backward_weight = ScaledDuration{backward.fixed_ns / 2, backward.per_sample_ns / 2};
  backward_split = false;
}

std::string_view dtype_name(ParamDtype dtype) {
  switch (dtype) {
    case ParamDtype::kFp32: return "fp32";
    case ParamDtype::kFp16: return "fp16";
    case ParamDtype::kBf16: return "bf16";
  }
  return "?";
}

int dtype_bytes(ParamDtype dtype) { return dtype == ParamDtype::kFp32 ? 4 : 2; }

Bytes ModelSpec::total_param_bytes() const {
  Bytes total = 0;
  for (const LayerSpec& layer : layers) total += layer.param_bytes;
  return total;
}

sched::Status check_model_spec(const ModelSpec& spec) {
  auto fail = [&](std::string message) -> sched::Status {
    return sched::Error{fmt::format("model '{}': {}", spec.name, message), std::nullopt};
  };
  if (spec.layers.empty()) return fail("needs at least one layer");
  if (spec.input_bytes.fixed_bytes < 0 || spec.input_bytes.per_sample_bytes < 0) {
    return fail("input_bytes must not be negative");
  }
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < spec.layers.size(); ++i) {
    const LayerSpec& layer = spec.layers[i];
    if (layer.name.empty()) return fail(fmt::format("layer {} has no name", i));
    if (!names.insert(layer.name).second) {
      return fail(fmt::format("layer {}: duplicate layer name '{}'", i, layer.name));
    }
    const bool negative =
        layer.forward.fixed_ns < 0 || layer.forward.per_sample_ns < 0 ||
        layer.backward_input.fixed_ns < 0 || layer.backward_input.per_sample_ns < 0 ||
        layer.backward_weight.fixed_ns < 0 || layer.backward_weight.per_sample_ns < 0 ||
        layer.output_bytes.fixed_bytes < 0 || layer.output_bytes.per_sample_bytes < 0 ||
        layer.stash_bytes.fixed_bytes < 0 || layer.stash_bytes.per_sample_bytes < 0 ||
        layer.param_bytes < 0;
    if (negative) return fail(fmt::format("layer {} ('{}') has a negative cost", i, layer.name));
  }
  return sched::Ok{};
}

}  // namespace pipeworks::sim
