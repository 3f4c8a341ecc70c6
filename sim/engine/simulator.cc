// Public entry of the simulator: compile, run the event loop, assemble timeline and figures.
#include "sim/engine/simulator.h"

#include <algorithm>
#include <cmath>

#include "sim/engine/contention.h"
#include "sim/engine/engine.h"
#include "sim/engine/op_table.h"

namespace pipeworks::sim {
namespace {

sched::Timeline build_timeline(const sched::Schedule& schedule, const OpTable& table, EngineOutput& out) {
  sched::Timeline tl;
  tl.name = "predicted";
  tl.num_devices = schedule.num_devices();
  tl.num_stages = schedule.num_stages;
  tl.num_microbatches = schedule.num_microbatches;
  tl.spans.reserve(table.size());
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) {
    const sched::Program& program = schedule.programs[d];
    for (std::size_t p = 0; p < program.size(); ++p) {
      const auto i = static_cast<std::size_t>(table.device_begin[d]) + p;
      tl.spans.push_back(
          sched::Span{static_cast<int>(d), sched::lane_of(program[p].kind), program[p], out.times[i].start_ns, out.times[i].end_ns});
    }
  }
  tl.flows.reserve(static_cast<std::size_t>(table.num_transfers));
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (sched::is_send(table.kind(i))) tl.flows.push_back(sched::Flow{i, static_cast<std::size_t>(table.peer(i))});
  }
  for (auto& samples : out.memory) tl.memory.insert(tl.memory.end(), samples.begin(), samples.end());
  return tl;
}

// Per device, the compute ops' intervals of an engine run.
std::vector<std::vector<BusyInterval>> busy_intervals(const OpTable& table, const EngineOutput& out,
                                                      std::size_t num_devices) {
  std::vector<std::vector<BusyInterval>> busy(num_devices);
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (!sched::is_compute(table.kind(i))) continue;
    busy[static_cast<std::size_t>(table.device(i))].push_back(BusyInterval{out.times[i].start_ns, out.times[i].end_ns});
  }
  return busy;
}

// The classes' durations with every compute class slowed by its device's factor; fails when
// the slowed ops overflow the simulator's time range.
sched::Status slow_down(OpTable& table, const std::vector<OpClass>& unslowed, const std::vector<std::int64_t>& ops,
                        const std::vector<double>& slowdown) {
  // The op table keeps the sum of all durations within int64 / 4, so every time the engine
  // computes fits; slowed durations must keep that bound.
  constexpr double kTimeRange = 2.3e18;
  double total = 0;
  for (std::size_t c = 0; c < table.classes.size(); ++c) {
    OpClass& slowed = table.classes[c];
    const auto n = static_cast<double>(ops[c]);
    if (slowed.link >= 0 || sched::is_stage_level(slowed.kind)) {  // a transfer or a collective: not slowed
      total += n * static_cast<double>(slowed.duration_ns);
      continue;
    }
    const double f = slowdown[static_cast<std::size_t>(slowed.device)];
    const double d = std::round(static_cast<double>(unslowed[c].duration_ns) * f);
    const double r = std::round(static_cast<double>(unslowed[c].resume_ns) * f);
    total += n * (d + r);
    if (!(total < kTimeRange)) return sched::Error{"contention: the slowed actions overflow the simulator's time range"};
    slowed.duration_ns = static_cast<Nanoseconds>(d);
    slowed.resume_ns = static_cast<Nanoseconds>(r);
  }
  return sched::Ok{};
}

// The engine's run with every device slowed by its contention (contention.h), refined
// kContentionRounds times from the durations `table` was built with; `slowdown` per device.
sched::Result<EngineOutput> run_contended(OpTable& table, const sched::Schedule& schedule, const CostModel& model,
                                          bool record_memory, std::vector<double>& slowdown) {
  const auto devices = static_cast<std::size_t>(schedule.num_devices());
  slowdown.assign(devices, 1.0);
  const bool contended = has_contention(model);
  auto out = run_engine(table, schedule, model.links.size(), model.comm_mode, record_memory && !contended);
  if (!out || !contended) return out;
  const std::vector<OpClass> unslowed = table.classes;
  const std::vector<std::int64_t> ops = table.ops_per_class();
  for (int round = 0; round < kContentionRounds; ++round) {
    slowdown = contention_slowdowns(model, overlap_fractions(busy_intervals(table, *out, devices), model.contention_group));
    if (auto st = slow_down(table, unslowed, ops, slowdown); !st) return st.error();
    out = run_engine(table, schedule, model.links.size(), model.comm_mode,
                     record_memory && round + 1 == kContentionRounds);
    if (!out) return out;
  }
  return out;
}

// What device d does once a step after its program and its last collective: the optimizer step
// of its stages, then (ZeRO-1, -2) the all-gather of their updated shards.
Nanoseconds optimizer_tail(const sched::Schedule& schedule, const CostModel& model, std::size_t d) {
  Nanoseconds tail = 0;
  for (std::size_t s = 0; s < schedule.placement.size(); ++s) {
    if (static_cast<std::size_t>(schedule.placement[s]) != d) continue;
    tail += model.stages[s].optimizer_step_ns + model.stages[s].param_gather_ns;
  }
  return tail;
}

// The step: the latest device end plus its optimizer tail, at least the makespan.
Nanoseconds step_end(const sched::Schedule& schedule, const CostModel& model, const EngineOutput& out,
                     Nanoseconds makespan) {
  Nanoseconds step = makespan;
  for (std::size_t d = 0; d < out.end_ns.size(); ++d) {
    step = std::max(step, out.end_ns[d] + optimizer_tail(schedule, model, d));
  }
  return step;
}

}  // namespace

sched::Result<SimResult> simulate(const sched::Schedule& schedule, const CostModel& model, const SimOptions& options) {
  auto table = build_op_table(schedule, model);
  if (!table) return table.error();
  std::vector<double> slowdown;
  auto out = run_contended(*table, schedule, model, options.build_timeline, slowdown);
  if (!out) return out.error();

  SimResult result;
  result.makespan_ns = out->makespan_ns;
  result.step_ns = step_end(schedule, model, *out, result.makespan_ns);
  result.compute_end_ns = out->compute_end_ns;
  result.num_actions = static_cast<std::int64_t>(table->size());
  result.num_transfers = table->num_transfers;
  result.num_stage_level_actions = table->num_stage_level;
  result.num_composites = static_cast<std::int64_t>(schedule.composites.size());
  result.overlapped_pass_share = model.overlapped_pass_share;
  result.num_microbatches = schedule.num_microbatches;
  result.microbatch_size = model.microbatch_size;
  result.comm_mode = model.comm_mode;
  if (options.build_timeline) result.timeline = build_timeline(schedule, *table, *out);

  const auto num_devices = static_cast<std::size_t>(schedule.num_devices());
  // Busy: the sum of the device's compute durations (they never overlap on one stream).
  const std::vector<Nanoseconds>& busy = out->busy_ns;
  // A double: the sum only feeds a fraction, and over many devices it may pass int64 (each
  // device's idle time can be near the simulator's time range, int64 / 4).
  double total_idle = 0;
  result.devices.resize(num_devices);
  for (std::size_t d = 0; d < num_devices; ++d) {
    DeviceResult& dr = result.devices[d];
    dr.device = static_cast<int>(d);
    dr.busy_ns = busy[d];
    dr.collective_ns = out->collective_ns[d];
    dr.optimizer_ns = optimizer_tail(schedule, model, d);
    dr.contention_slowdown = slowdown[d];
    dr.idle_ns = result.makespan_ns - dr.busy_ns;
    dr.bubble_fraction =
        result.makespan_ns > 0 ? static_cast<double>(dr.idle_ns) / static_cast<double>(result.makespan_ns) : 0.0;
    dr.memory = memory_report(table->static_memory[d], out->peak_activation_bytes[d], model.device_memory_bytes[d]);
    result.fits = result.fits && dr.memory.fits;
    total_idle += static_cast<double>(dr.idle_ns);
  }
  for (std::size_t s = 0; s < schedule.placement.size(); ++s) {
    result.devices[static_cast<std::size_t>(schedule.placement[s])].stages.push_back(static_cast<int>(s));
  }
  if (result.makespan_ns > 0 && num_devices > 0) {
    // At most 1 exactly; the rounded sum can pass it by an ulp where every device idles nearly
    // the whole makespan (times near the simulator's range; found by tests/fuzz/simulate_fuzz.cc).
    result.bubble_fraction = std::min(
        1.0, total_idle / (static_cast<double>(result.makespan_ns) * static_cast<double>(num_devices)));
    result.throughput_samples_per_s = static_cast<double>(schedule.num_microbatches) * model.microbatch_size * 1e9 /
                                      static_cast<double>(result.step_ns);
  }
  return result;
}

}  // namespace pipeworks::sim
