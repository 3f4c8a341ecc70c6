// The up-front check of a run's settings (see run_config_check.h).
#include "hw/run/run_config_check.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "hw/run/run_limits.h"
#include "sched/generators.h"
#include "sched/limits.h"
#include "sim/plan/partition_text.h"
#include "sim/spec/batch_split.h"
#include "sim/spec/parallel_layout.h"

namespace pipeworks::hw {
namespace {

sched::Status in_range(std::string_view name, long long value, long long low, long long high) {
  if (value >= low && value <= high) return sched::Ok{};
  return sched::Error{fmt::format("{} must be from {} to {}, got {}", name, low, high, value)};
}

sched::Status check_sizes(const RunConfig& c) {
  if (auto s = sched::check_schedule_size(c.num_stages, c.num_microbatches); !s) return s;
  if (auto s = in_range("batch size", c.batch_size, 1, kMaxBatchSize); !s) return s;
  if (auto s = sim::microbatch_size(c.batch_size, c.num_microbatches); !s) return s.error();
  if (auto s = in_range("steps", c.steps, 1, kMaxSteps); !s) return s;
  return in_range("threads per worker", c.threads_per_worker, 0, kMaxThreadsPerWorker);
}

// Replicas: a count, a sharding real runs implement, and a batch every replica splits evenly.
sched::Status check_replicas(const RunConfig& c) {
  if (auto s = in_range("data-parallel replicas", c.data_parallel, 1, kMaxRunDevices); !s) return s;
  if (c.zero == sim::ZeroStage::kGradients || c.zero == sim::ZeroStage::kParameters) {
    return sched::Error{fmt::format("--zero {}: runs shard the optimizer state only (--zero 0 or 1); ZeRO-2 and -3 "
                                    "are simulated (simulate, sweep, plan)",
                                    sim::zero_stage_name(c.zero))};
  }
  if (auto s = sim::check_zero_has_replicas(c.zero, c.data_parallel); !s) return s;
  if (c.data_parallel > 1 && c.pin_workers == WorkerPinning::kOn) {
    return sched::Error{"--pin-workers on pins each device's worker to cores of its own, which the replicas of a "
                        "device would share: use auto or off with --dp"};
  }
  if (c.tensor_parallel > 1 && c.pin_workers == WorkerPinning::kOn) {
    return sched::Error{"--pin-workers on pins each device's worker to cores of its own, which the tensor-parallel "
                        "ranks of a device would share: use auto or off with --tp"};
  }
  const long long parts = static_cast<long long>(c.data_parallel) * c.num_microbatches;
  if (c.data_parallel > 1 && c.batch_size % parts != 0) {
    return sched::Error{fmt::format("batch size {} does not split into {} replicas x {} micro-batches",
                                    c.batch_size, c.data_parallel, c.num_microbatches)};
  }
  return sched::Ok{};
}

// Tensor-parallel ranks: a count, a model that splits into that many shards, the CPU (the
// layers' all-reduces run over Gloo).
sched::Status check_tensor_parallel(const RunConfig& c) {
  if (auto s = in_range("tensor-parallel ranks", c.tensor_parallel, 1, kMaxRunDevices); !s) return s;
  if (c.tensor_parallel == 1) return sched::Ok{};
  if (c.device != DeviceKind::kCpu) {
    return sched::Error{fmt::format("--tp {}: tensor-parallel layers all-reduce over Gloo: run --tp with --device cpu",
                                    c.tensor_parallel)};
  }
  return check_tensor_parallel_split(c.model, c.tensor_parallel);
}

sched::Status check_layout(const RunConfig& c) {
  const int layers = num_model_layers(c.model);
  if (c.num_stages > layers) {
    return sched::Error{fmt::format("{} stages is more than the model's {} layers", c.num_stages, layers)};
  }
  int devices = c.num_stages;
  if (c.given_schedule) {  // the file places its stages
    devices = c.given_schedule->num_devices();
  } else if (sched::has_virtual_stages(c.schedule)) {  // several stages per device: the generator places them
    auto v = sched::generate(c.schedule, {c.num_stages, c.num_microbatches, c.placement}, c.virtual_stages);
    if (!v) return v.error();
    devices = v->num_devices();
  } else if (!c.placement.empty()) {
    auto placement = sched::resolve_placement({c.num_stages, c.num_microbatches, c.placement});
    if (!placement) return placement.error();
    devices = *std::max_element(placement->begin(), placement->end()) + 1;
  }
  const long long ranks = devices * static_cast<long long>(c.data_parallel) * c.tensor_parallel;
  if (ranks > kMaxRunDevices) {
    return sched::Error{fmt::format("{} devices is more than a run's limit of {}", ranks, kMaxRunDevices)};
  }
  if (c.partition.rule != sim::PartitionChoice::Rule::kCounts) return sched::Ok{};
  auto partition = sim::fixed_partition(c.partition, layers, c.num_stages);
  if (!partition) return partition.error();
  return sched::Ok{};
}

}  // namespace

sched::Status check_run_config(const RunConfig& c) {
  if (auto s = in_range("virtual stages", c.virtual_stages, 1, sched::kMaxStages); !s) return s;
  const bool interleaved = sched::has_virtual_stages(c.schedule) && !sched::is_v_shaped(c.schedule);
  if (c.given_schedule && (c.virtual_stages != 1 || !c.placement.empty())) {
    return sched::Error{"--virtual-stages and --placement do not apply to --schedule-file (the file places its stages)"};
  }
  if (c.given_schedule && (c.given_schedule->num_stages != c.num_stages ||
                           c.given_schedule->num_microbatches != c.num_microbatches)) {
    return sched::Error{fmt::format("the schedule file has {} stages and {} micro-batches, the run {} and {}",
                                    c.given_schedule->num_stages, c.given_schedule->num_microbatches, c.num_stages,
                                    c.num_microbatches)};
  }
  if (c.virtual_stages != 1 && !interleaved && !c.given_schedule) {
    return sched::Error{fmt::format("--virtual-stages applies to interleaved-1f1b, looped-bfs and interleaved-zb, "
                                    "not {} (zb-v and dualpipe-v place 2 stages per device by construction)",
                                    sched::schedule_kind_name(c.schedule))};
  }
  if (auto s = check_model_config(c.model); !s) return s;
  const ScriptedModelConfig& scripted = c.model.scripted;
  if (c.model.kind == ModelKind::kScripted && scripted.layer_names.empty()) {
    return sched::Error{fmt::format("'{}' has not been loaded", scripted.path)};
  }
  if (c.model.kind == ModelKind::kScripted && c.recompute && !scripted.random_layers.empty()) {
    return sched::Error{fmt::format(
        "--recompute: child '{}' of '{}' draws random numbers (dropout) from the global generator, so a "
        "re-materialized forward would draw others and the gradients would be wrong; run without --recompute or "
        "save the model with dropout 0",
        scripted.random_layers.front(), scripted.path)};
  }
  if (auto s = check_sizes(c); !s) return s;
  if (auto s = check_replicas(c); !s) return s;
  if (auto s = check_tensor_parallel(c); !s) return s;
  if (auto s = check_layout(c); !s) return s;
  const double lr = c.optimizer.learning_rate;
  if (!(std::isfinite(lr) && lr >= 0 && lr <= kMaxLearningRate)) {
    return sched::Error{fmt::format("learning rate must be a number from 0 to {:g}, got {}", kMaxLearningRate, lr)};
  }
  if (c.recv_timeout.count() <= 0) return sched::Error{"the receive timeout must be positive"};
  return sched::Ok{};
}

}  // namespace pipeworks::hw
