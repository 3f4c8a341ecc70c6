// One sweep configuration end to end: balanced partition (under the memory cap when one fits),
// cost model, schedule (generated, re-materialized, comm-lowered), simulation without a Timeline.
#include <algorithm>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "sched/generators.h"
#include "sched/limits.h"
#include "sched/passes.h"
#include "sim/engine/simulator.h"
#include "sim/engine/timed_orders.h"
#include "sim/plan/cost_model_builder.h"
#include "sim/plan/sweep.h"
#include "sim/spec/size_extrapolation.h"
#include "sim/spec/tensor_parallel.h"

namespace pipeworks::sim {
namespace {

// Device memory and the sweep's cap, whichever is smaller (0: no limit).
Bytes effective_capacity(Bytes device_bytes, const std::optional<Bytes>& cap) {
  if (!cap) return device_bytes;
  return device_bytes == 0 ? *cap : std::min(device_bytes, *cap);
}

// The generated schedule, before recompute and comm lowering (from `memo` when given): its
// placement says which of the pipeline's devices each stage runs on.
sched::Result<std::shared_ptr<const sched::Schedule>> generated_schedule(const SweepConfig& c, ScheduleMemo* memo) {
  if (memo) return memo->generated(c.schedule, c.num_stages, c.num_microbatches, c.virtual_stages);
  auto schedule = sched::generate(c.schedule, {c.num_stages, c.num_microbatches, {}}, c.virtual_stages);
  if (!schedule) return schedule.error();
  return std::make_shared<const sched::Schedule>(std::move(schedule).value());
}

// Re-materialized when asked, with the layout's data-parallel actions, lowered to SEND/RECV.
sched::Result<sched::Schedule> lowered_schedule(sched::Schedule schedule, bool recompute, const ParallelLayout& layout) {
  if (recompute) {
    auto recomputed = sched::add_recompute(schedule);
    if (!recomputed) return recomputed.error();
    schedule = std::move(recomputed).value();
  }
  auto replicated = add_data_parallel_actions(schedule, layout);
  if (!replicated) return replicated.error();
  return sched::lower_comm(*replicated);
}

// The schedule the configuration simulates: timed on the costs where its kind decides on them,
// then lowered_schedule's; from `memo` when given, keyed on the rule's times where it is timed.
sched::Result<std::shared_ptr<const sched::Schedule>> simulated_schedule(const SweepConfig& config,
                                                                         const sched::Schedule& generated,
                                                                         const CostModel& costs,
                                                                         const ParallelLayout& layout, ScheduleMemo* memo) {
  auto times = rule_times(config.schedule, generated, costs);
  if (!times) return times.error();
  std::vector<std::int64_t> decided_on;  // part of the timed order's key and of the lowered one's
  if (*times) {
    decided_on = (*times)->flat();
    decided_on.push_back(kSweepOrderSearch);
  }
  const auto time = [&] { return timed_schedule(config.schedule, generated, **times, kSweepOrderSearch); };
  const auto build = [&]() -> sched::Result<sched::Schedule> {
    if (!*times) return lowered_schedule(generated, config.recompute, layout);
    if (!memo) {
      auto timed = time();
      if (!timed) return timed.error();
      return lowered_schedule(std::move(timed).value(), config.recompute, layout);
    }
    auto timed = memo->timed(config.schedule, config.num_stages, config.num_microbatches, config.virtual_stages,
                             decided_on, time);
    if (!timed) return timed.error();
    return lowered_schedule(**timed, config.recompute, layout);
  };
  if (!memo) {
    auto lowered = build();
    if (!lowered) return lowered.error();
    return std::make_shared<const sched::Schedule>(std::move(lowered).value());
  }
  return memo->lowered(config.schedule, config.num_stages, config.num_microbatches, config.virtual_stages,
                       config.recompute, data_parallel_actions(layout), decided_on, build);
}

// The step's figures over all replicas: samples/s, tokens/s and MFU (sweep.h).
void add_rates(const SweepSpec& spec, const SweepConfig& config, SweepRow& row) {
  if (row.makespan_ns <= 0) return;
  const double seconds = static_cast<double>(row.makespan_ns) * 1e-9;
  row.samples_per_s = config.batch_size / seconds;
  row.tokens_per_s = row.samples_per_s * static_cast<double>(spec.model.tokens_per_sample);
  const double peak = spec.cluster.devices.front().peak_flops_per_s;
  if (peak > 0 && spec.model.flops_per_sample > 0) {
    row.mfu = spec.model.flops_per_sample * config.batch_size / (seconds * config.total_devices() * peak);
  }
}

Nanoseconds slowest_stage_compute_ns(const CostModel& model, bool recompute) {
  Nanoseconds slowest = 0;
  const int actions = recompute ? 3 : 2;
  for (const StageCost& stage : model.stages) {
    const Nanoseconds t = stage.forward_ns + stage.backward_ns + (recompute ? stage.recompute_ns : 0) +
                          actions * model.per_action_overhead_ns;
    slowest = std::max(slowest, t);
  }
  return slowest;
}

// The balanced partition under the memory caps when one fits; else the uncapped one, with the
// partitioner's reason in `note`.
sched::Result<Partition> row_partition(const SweepSpec& spec, const ModelSpec& model, const SweepConfig& config,
                                       const sched::Schedule& generated, const ParallelLayout& layout, PartitionMemo* memo,
                                       std::string& note) {
  BalanceOptions balance;
  balance.microbatch_size = config.microbatch_size();
  balance.optimizer = spec.optimizer;
  balance.recompute = config.recompute;
  balance.in_flight = sched::peak_in_flight(generated);
  balance.zero = layout.zero;
  balance.dp = layout.dp;
  const std::vector<int> devices = replica_devices(layout);
  for (const int rank : generated.placement) {
    const DeviceSpec& d = spec.cluster.devices[static_cast<std::size_t>(devices[static_cast<std::size_t>(rank)])];
    balance.stage_speed.push_back(d.relative_speed);
    balance.capacity_bytes.push_back(effective_capacity(d.memory_bytes, spec.memory_cap_bytes));
  }
  auto problem = partition_problem_of_checked(model, balance);
  if (!problem) return problem.error();
  auto partition = balanced_partition(*problem, config.num_stages, memo);
  if (partition) return partition;
  note = "under the memory caps: " + partition.error().message;
  problem->capacity_bytes.clear();
  return balanced_partition(*problem, config.num_stages, memo);
}

// The model a configuration's ranks run, checked, when run_sweep did not give it: the spec's
// model and cluster checked, then tensor_parallel_view of the model for config.tp, checked.
sched::Result<ModelSpec> checked_rank_model(const SweepSpec& spec, const SweepConfig& config) {
  for (const auto& status : {check_model_spec(spec.model), check_cluster_spec(spec.cluster)}) {
    if (!status) return status.error();
  }
  const bool split = config.tp > 1;
  auto view = tensor_parallel_view(spec.model, config.tp, split && spec.sequence_parallel, split && spec.tp_comm_overlap);
  if (!view) return view.error();
  if (auto valid = check_model_spec(*view); !valid) return valid.error();
  return view;
}

// A simulated row's memory: the fullest device, and for the note of a row that does not fit the
// device that overflows its cap most.
void record_memory(const SimResult& result, SweepRow& row) {
  row.fits = result.fits;
  const auto by_peak = [](const DeviceResult& a, const DeviceResult& b) { return a.memory.peak_bytes < b.memory.peak_bytes; };
  const auto fullest = std::max_element(result.devices.begin(), result.devices.end(), by_peak);
  if (fullest != result.devices.end()) {
    row.peak_device = fullest->device;
    row.peak_bytes = fullest->memory.peak_bytes;
    row.capacity_bytes = fullest->memory.capacity_bytes;
  }
  if (!row.fits) {
    const auto overflow = [](const DeviceResult& d) {
      return d.memory.capacity_bytes > 0 ? d.memory.peak_bytes - d.memory.capacity_bytes : Bytes{0};
    };
    const auto worst = std::max_element(result.devices.begin(), result.devices.end(),
                                        [&](const auto& a, const auto& b) { return overflow(a) < overflow(b); });
    row.overflow_bytes = overflow(*worst);
    row.note = fmt::format("device {} needs {}, {} over its {} cap", worst->device, format_bytes(worst->memory.peak_bytes),
                           format_bytes(row.overflow_bytes), format_bytes(worst->memory.capacity_bytes));
  }
}

}  // namespace

SweepRow evaluate_config(const SweepSpec& spec, const SweepConfig& config, SweepMemo* memo,
                         const ModelSpec* rank_model) {
  SweepRow row;
  row.config = config;
  if (auto e = size_extrapolation(spec.model, config.microbatch_size())) row.extrapolated_tables = e->tables;
  const auto fail = [&row](std::string_view step, const sched::Error& error) {
    row.note = fmt::format("{}: {}", step, error.message);
    return row;
  };
  if (auto size = sched::check_schedule_size(config.num_stages, config.num_microbatches); !size) {
    return fail("too large to simulate", size.error());
  }
  auto generated_or = generated_schedule(config, memo ? &memo->schedules : nullptr);
  if (!generated_or) return fail("schedule", generated_or.error());
  const sched::Schedule& generated = **generated_or;
  const ParallelLayout layout = config.layout(spec.rank_order);
  std::optional<ModelSpec> own_view;
  const ModelSpec* model = rank_model;
  if (model == nullptr) {
    auto view = checked_rank_model(spec, config);
    if (!view) return fail("tensor parallelism", view.error());
    own_view = std::move(view).value();
    model = &*own_view;
  }
  auto partition =
      row_partition(spec, *model, config, generated, layout, memo ? &memo->partitions : nullptr, row.partition_note);
  if (!partition) return fail("partition", partition.error());
  row.partition = *partition;

  auto costs = build_cost_model_of_checked(*model, spec.cluster, *partition, generated.placement,
                                           config.microbatch_size(), spec.optimizer, layout, spec.data_parallel);
  if (!costs) return fail("cost model", costs.error());
  for (Bytes& device_bytes : costs->device_memory_bytes) device_bytes = effective_capacity(device_bytes, spec.memory_cap_bytes);
  row.stage_compute_ns = slowest_stage_compute_ns(*costs, config.recompute);

  auto schedule = simulated_schedule(config, generated, *costs, layout, memo ? &memo->schedules : nullptr);
  if (!schedule) return fail("schedule", schedule.error());
  SimOptions options;
  options.build_timeline = false;
  auto result = simulate(**schedule, *costs, options);
  if (!result) return fail("simulation", result.error());

  row.simulated = true;
  row.makespan_ns = result->step_ns;
  row.tail_ns = result->step_ns - result->compute_end_ns;
  add_rates(spec, config, row);
  row.bubble_fraction = result->bubble_fraction;
  record_memory(*result, row);
  return row;
}

}  // namespace pipeworks::sim
