// Checks a CostModel before the simulator trusts it, and builds the uniform model the tests use.
//
// What is accepted (everything else is an error naming the offending field):
//   forward_ns, backward_ns          > 0: every schedule runs them; a zero-length F or B would
//                                       make the bubble of an empty pipeline meaningless
//   backward_input/weight_ns,
//   recompute_ns                     >= 0: optional kinds; 0 models "free" (e.g. I/W unused)
//   resume_*_ns                      >= 0 (0 = resuming after a wait costs nothing extra)
//   first_*_ns                       >= 0 (0 = the first of a step costs as the others)
//   per_action_overhead_ns           >= 0
//   all *_bytes                      >= 0 (0 = nothing stored / nothing sent)
//   link latency_ns                  >= 0 (0 = instantaneous)
//   link bandwidth                   finite and > 0
//   every duration and size          <= kMaxCostValue, so that sums over a whole schedule
//                                       stay far from int64 overflow (the simulator also
//                                       checks its sums)
#include "sim/engine/cost_model.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "sim/spec/cluster_spec.h"

namespace pipeworks::sim {
namespace {

// 2^50 ns is about 13 days; 2^50 bytes is 1 PiB.
constexpr std::int64_t kMaxCostValue = std::int64_t{1} << 50;

// `where()` names the field; it is called only for the message (the simulator checks its whole
// cost model on every call, thousands of links on a large cluster).
template <typename Where>
sched::Status check_value(std::int64_t value, std::int64_t minimum, const Where& where) {
  if (value < minimum) {
    return sched::Error{fmt::format("cost model: {} is {}, must be {}", where(), value,
                                    minimum == 0 ? ">= 0" : fmt::format(">= {}", minimum))};
  }
  if (value > kMaxCostValue) {
    return sched::Error{fmt::format("cost model: {} is {}, larger than the limit {}", where(), value, kMaxCostValue)};
  }
  return sched::Ok{};
}

sched::Status check_stage(const StageCost& c, std::size_t s) {
  const struct {
    std::int64_t value;
    std::int64_t minimum;
    const char* name;
  } fields[] = {
      {c.forward_ns, 1, "forward_ns"},
      {c.backward_ns, 1, "backward_ns"},
      {c.backward_input_ns, 0, "backward_input_ns"},
      {c.backward_weight_ns, 0, "backward_weight_ns"},
      {c.recompute_ns, 0, "recompute_ns"},
      {c.forward_no_grad_ns, 0, "forward_no_grad_ns"},
      {c.resume_forward_ns, 0, "resume_forward_ns"},
      {c.resume_recompute_ns, 0, "resume_recompute_ns"},
      {c.resume_backward_ns, 0, "resume_backward_ns"},
      {c.first_forward_ns, 0, "first_forward_ns"},
      {c.first_recompute_ns, 0, "first_recompute_ns"},
      {c.first_backward_ns, 0, "first_backward_ns"},
      {c.input_bytes, 0, "input_bytes"},
      {c.output_bytes, 0, "output_bytes"},
      {c.stash_bytes, 0, "stash_bytes"},
      {c.param_bytes, 0, "param_bytes"},
      {c.grad_bytes, 0, "grad_bytes"},
      {c.optimizer_bytes, 0, "optimizer_bytes"},
      {c.extra.first, 0, "extra.first"},
      {c.extra.later, 0, "extra.later"},
      {c.extra.forward, 0, "extra.forward"},
      {c.extra.forward_no_grad, 0, "extra.forward_no_grad"},
      {c.extra.split_held, 0, "extra.split_held"},
      {c.reduce_grad_ns, 0, "reduce_grad_ns"},
      {c.reduce_grad_buckets, 1, "reduce_grad_buckets"},
      {c.reduce_grad_link, -1, "reduce_grad_link"},
      {c.reduce_grad_link_ns, 0, "reduce_grad_link_ns"},
      {c.unshard_ns, 0, "unshard_ns"},
      {c.unshard_bytes, 0, "unshard_bytes"},
      {c.optimizer_step_ns, 0, "optimizer_step_ns"},
      {c.param_gather_ns, 0, "param_gather_ns"},
  };
  for (const auto& f : fields) {
    if (auto st = check_value(f.value, f.minimum, [&] { return fmt::format("stages[{}].{}", s, f.name); }); !st) return st;
  }
  return sched::Ok{};
}

sched::Status check_contention(const CostModel& model) {
  const auto d = static_cast<std::size_t>(model.num_devices);
  if (!model.contention_factor.empty() && model.contention_factor.size() != d) {
    return sched::Error{fmt::format("cost model: contention_factor has {} entries for {} devices",
                                    model.contention_factor.size(), d)};
  }
  if (!model.contention_group.empty() && model.contention_group.size() != d) {
    return sched::Error{fmt::format("cost model: contention_group has {} entries for {} devices",
                                    model.contention_group.size(), d)};
  }
  if (model.compute_slots < 0 || model.compute_slots > kMaxCostModelDevices) {
    return sched::Error{fmt::format("cost model: compute_slots is {}, must be 0 (no limit) to {}", model.compute_slots,
                                    kMaxCostModelDevices)};
  }
  if (model.compute_slice_ns < 0) {
    return sched::Error{fmt::format("cost model: compute_slice_ns is {}, must not be negative", model.compute_slice_ns)};
  }
  if (!valid_idle_slowdown(model.idle_slowdown, model.idle_slowdown_after_ns)) {
    return sched::Error{fmt::format("cost model: idle_slowdown is {}, must be in [1, 1000], and above 1 needs a "
                                    "positive idle_slowdown_after_ns ({})",
                                    model.idle_slowdown, model.idle_slowdown_after_ns)};
  }
  if (!(model.overlapped_pass_share >= 0 && model.overlapped_pass_share <= 1)) {
    return sched::Error{fmt::format("cost model: overlapped_pass_share is {}, must be in [0, 1]", model.overlapped_pass_share)};
  }
  for (std::size_t i = 0; i < model.contention_factor.size(); ++i) {
    const double f = model.contention_factor[i];
    if (!(std::isfinite(f) && f >= 1.0 && f <= 1000.0)) {
      return sched::Error{fmt::format("cost model: contention_factor[{}] is {}, must be in [1, 1000]", i, f)};
    }
  }
  return sched::Ok{};
}

// Each link's latency, overhead and bandwidth, and every link index (a stage's gradient
// reduction's, link_of's; -1 on link_of's diagonal) naming a link.
sched::Status check_links(const CostModel& model) {
  const auto d = static_cast<std::size_t>(model.num_devices);
  for (std::size_t i = 0; i < model.links.size(); ++i) {
    const Link& l = model.links[i];
    if (auto st = check_value(l.latency_ns, 0, [&] { return fmt::format("links[{}].latency_ns", i); }); !st) return st;
    if (auto st = check_value(l.send_overhead_ns, 0, [&] { return fmt::format("links[{}].send_overhead_ns", i); }); !st) {
      return st;
    }
    if (!std::isfinite(l.bandwidth_bytes_per_s) || !(l.bandwidth_bytes_per_s > 0)) {
      return sched::Error{fmt::format("cost model: links[{}].bandwidth_bytes_per_s is {}, must be finite and > 0", i,
                                      l.bandwidth_bytes_per_s)};
    }
  }
  const auto num_links = static_cast<int>(model.links.size());
  for (std::size_t s = 0; s < model.stages.size(); ++s) {
    if (model.stages[s].reduce_grad_link >= num_links) {
      return sched::Error{fmt::format("cost model: stages[{}].reduce_grad_link is {}, not a link index in [-1, {})", s,
                                      model.stages[s].reduce_grad_link, num_links)};
    }
  }
  for (std::size_t src = 0; src < d; ++src) {
    for (std::size_t dst = 0; dst < d; ++dst) {
      const int id = model.link_of[src * d + dst];
      if (src == dst && id != -1) {
        return sched::Error{fmt::format("cost model: link_of[{}*{}+{}] is {}, the diagonal must be -1", src, d, dst, id)};
      }
      if (id < -1 || id >= num_links) {
        return sched::Error{fmt::format("cost model: link_of[{}*{}+{}] is {}, not a link index in [-1, {})", src, d,
                                        dst, id, num_links)};
      }
    }
  }
  return sched::Ok{};
}

}  // namespace

sched::Status check_cost_model_devices(std::int64_t num_devices) {
  if (num_devices <= kMaxCostModelDevices) return sched::Ok{};
  const double entries = static_cast<double>(num_devices) * static_cast<double>(num_devices);
  return sched::Error{fmt::format("{} devices need a {} x {} link table ({:.0f} entries, {:.1f} GB); the simulator "
                                  "takes at most {} devices",
                                  num_devices, num_devices, num_devices, entries,
                                  entries * sizeof(int) / 1e9, kMaxCostModelDevices)};
}

sched::Status check_cost_model(const CostModel& model) {
  if (model.stages.empty()) return sched::Error{"cost model: no stages"};
  if (model.num_devices < 1) {
    return sched::Error{fmt::format("cost model: num_devices is {}, must be >= 1", model.num_devices)};
  }
  if (auto devices = check_cost_model_devices(model.num_devices); !devices) {
    return sched::Error{fmt::format("cost model: {}", devices.error().message)};
  }
  const auto d = static_cast<std::size_t>(model.num_devices);
  if (model.device_memory_bytes.size() != d) {
    return sched::Error{fmt::format("cost model: device_memory_bytes has {} entries for {} devices",
                                    model.device_memory_bytes.size(), d)};
  }
  if (model.link_of.size() != d * d) {
    return sched::Error{fmt::format("cost model: link_of has {} entries, expected num_devices^2 = {}",
                                    model.link_of.size(), d * d)};
  }
  if (model.microbatch_size < 1) {
    return sched::Error{fmt::format("cost model: microbatch_size is {}, must be >= 1", model.microbatch_size)};
  }
  if (auto st = check_value(model.per_action_overhead_ns, 0, [] { return "per_action_overhead_ns"; }); !st) return st;
  for (std::size_t s = 0; s < model.stages.size(); ++s) {
    if (auto st = check_stage(model.stages[s], s); !st) return st;
  }
  for (std::size_t i = 0; i < d; ++i) {
    if (auto st = check_value(model.device_memory_bytes[i], 0, [&] { return fmt::format("device_memory_bytes[{}]", i); }); !st) {
      return st;
    }
  }
  if (auto links = check_links(model); !links) return links;
  return check_contention(model);
}

CostModel uniform_cost_model(int num_stages, Nanoseconds forward_ns, Nanoseconds backward_ns, Nanoseconds transfer_ns,
                             CommMode mode) {
  CostModel model;
  const int k = num_stages < 0 ? 0 : num_stages;
  StageCost stage;
  stage.forward_ns = forward_ns;
  stage.backward_ns = backward_ns;
  // I + W == B exactly (I gets the smaller half when B is odd).
  stage.backward_input_ns = backward_ns / 2;
  stage.backward_weight_ns = backward_ns - backward_ns / 2;
  stage.recompute_ns = forward_ns;
  model.stages.assign(static_cast<std::size_t>(k), stage);
  model.num_devices = k;
  model.device_memory_bytes.assign(static_cast<std::size_t>(k), 0);
  const auto d = static_cast<std::size_t>(k);
  model.link_of.assign(d * d, -1);
  // One link per ordered device pair; bandwidth 1e18 B/s makes any byte count cost at most a
  // nanosecond or so, and exactly 0 ns for the uniform model's zero-byte activations.
  for (std::size_t src = 0; src < d; ++src) {
    for (std::size_t dst = 0; dst < d; ++dst) {
      if (src == dst) continue;
      model.link_of[src * d + dst] = static_cast<int>(model.links.size());
      model.links.push_back(Link{transfer_ns, 1e18});
    }
  }
  model.comm_mode = mode;
  return model;
}

}  // namespace pipeworks::sim
