// A multi-process run measured and predicted (see distributed_prediction.h).
#include "hw/dist/distributed_prediction.h"

#include <algorithm>

#include <fmt/format.h>

#include "hw/dist/comm_profile.h"
#include "hw/dist/rank_run.h"
#include "hw/exec/cpu_affinity.h"
#include "hw/exec/threads.h"
#include "hw/predict/stage_memory.h"
#include "sched/units_text.h"

namespace pipeworks::hw {
namespace {


ReplicaCommCosts replica_costs(const CommProfile& comm) {
  ReplicaCommCosts out;
  out.handoff_latency_ns = comm.handoff_latency_ns;
  out.handoff_bandwidth_bytes_per_s = comm.handoff_bandwidth_bytes_per_s;
  out.send_overhead_ns = comm.send_overhead_ns;
  out.largest_handoff_bytes = comm.largest_handoff_bytes;
  for (const StageCommCosts& s : comm.stages) out.stages.push_back({s.reduce_ns, s.gather_ns, s.optimizer_ns});
  out.tensor_link = comm.tensor_link;
  out.tensor_bytes = comm.tensor_bytes;
  out.tensor_small_ns = comm.tensor_small_ns;
  out.tensor_large_ns = comm.tensor_large_ns;
  out.core_slice_ns = comm.core_slice_ns;
  return out;
}

// Rank 0: the layers at one replica's micro-batch size (with tp > 1, tensor rank 0's shard alone,
// its all-reduces counted), and the machine with as many workers as the run has ranks (they share
// its cores as in-process workers would).
sched::Result<Profile> profile_replica(const RankRun& run, const DistributedPredictionSettings& settings) {
  const RunConfig& c = run.config;
  ProfileOptions po;
  po.model = c.model;
  po.device = c.device;
  po.microbatch_sizes = {c.batch_size / (c.num_microbatches * c.data_parallel)};
  po.repetitions = settings.repetitions;
  po.rounds = settings.profile_rounds;
  po.round_gap_s = settings.profile_round_gap_s;
  po.threads = run.executor->threads_per_worker();
  po.workers = std::min(run.env.world_size, run.setup.report.spec.num_layers());
  po.worker_cpus = bound_device_cpus(run);  // bound ranks: its workers on their cores
  po.measure_machine = true;
  po.measure_stage_temporaries = false;  // this partition's stages are measured below
  po.tensor_parallel = c.tensor_parallel;
  auto profile = profile_model(po);
  if (!profile) return profile.error();
  const sim::Partition& partition = run.setup.report.partition;
  auto extra = measure_stage_extra_bytes(c.model, partition, po.microbatch_sizes.front(), kStageMemoryRepetitions,
                                         c.device, c.tensor_parallel);
  if (!extra) return extra.error();
  profile->stage_boundaries = partition.boundaries;
  profile->stage_extra_bytes = std::move(extra).value();
  return profile;
}

// The ranks share this machine's C cores: P = tp x pp x dp processes of t intra-op threads. A
// device of the simulated replica stands for its tp ranks and its dp replicas, which compute in
// step with it: it holds n = tp x dp x t cores. More than C / n devices never compute at once, the
// others wait for a core (ClusterSpec::cores, compute slots); when n > C its ranks share the cores
// they have, each computing at C / n of its speed. With P t > C a process woken while every core
// computes waits for a running one's time slice: the slots hold the slice the ranks measured
// (core_slice_probe.h), or, where they measured none (pp 1), a warning says it is left out.
void share_cores(const RankRun& run, std::optional<sched::Nanoseconds> slice, sim::ClusterSpec& cluster,
                 std::vector<std::string>& notes, std::vector<std::string>& warnings) {
  const int cores = static_cast<int>(std::max<std::size_t>(1, run.machine_cpus.size()));
  const int t = run.executor->threads_per_worker();
  const int replicas = run.place.layout.dp * run.place.layout.tp;  // the ranks a device stands for
  const double alone = std::max(1.0, static_cast<double>(replicas * t) / cores);
  for (sim::DeviceSpec& d : cluster.devices) d.relative_speed /= alone;
  cluster.cores = cores;
  cluster.threads_per_device = replicas * t;
  const int pp = run.place.layout.pp;
  const std::string waits =
      cluster.compute_slots() >= pp
          ? fmt::format("the replica's {} never wait{} for a core", sched::counted(pp, "device"), pp == 1 ? "s" : "")
          : fmt::format("at most {} of the replica's {} devices compute at once, the others wait for a core",
                        cluster.compute_slots(), pp);
  notes.push_back(fmt::format("{} processes x {} threads on {} cores: {}{}", run.place.layout.devices(), t, cores,
                              waits,
                              alone > 1.0 ? fmt::format("; each computes at 1/{:.2f} of its speed (its {} ranks at "
                                                        "once)", alone, replicas)
                                          : std::string()));
  if (!run.bound_cpus.empty()) {
    notes.push_back(fmt::format("each rank bound to cores of its own (rank 0 to {}; --pin-workers off leaves them "
                                "unbound)", format_cpu_list(run.bound_cpus)));
  }
  cluster.core_slice_ns = slice.value_or(0);
  if (slice) {
    notes.push_back(fmt::format("a rank woken while the others computed waited {:.2f} ms for a core (median): the "
                                "compute slots hold a time slice of {:.2f} ms",
                                static_cast<double>(*slice) / 2e6, static_cast<double>(*slice) / 1e6));
  } else if (run.place.layout.devices() * t > cores) {
    warnings.push_back(fmt::format(
        "{} processes x {} threads on {} cores: a process woken while every core computes waits for the running one's "
        "time slice, which this prediction does not model; the measured step is likely longer (docs/data_parallel.md)",
        run.place.layout.devices(), t, cores));
  }
}

// With tp > 1: a pipeline rank of the simulated replica is its tp ranks (the cluster gets at least
// tp x pp devices, one node), and their all-reduces run on the link fitted to the measured ones.
void use_tensor_link(const RankRun& run, DistributedPrediction& out) {
  const sim::ParallelLayout& layout = run.place.layout;
  if (layout.tp < 2 || !out.comm.tensor_link) return;
  const std::size_t needed = static_cast<std::size_t>(layout.tp * layout.pp);
  if (out.cluster.devices.size() < needed) out.cluster.devices.resize(needed, out.cluster.devices.front());
  out.cluster.devices_per_node = out.cluster.num_devices();
  out.cluster.tensor_parallel_link = out.comm.tensor_link;
  out.notes.push_back(fmt::format(
      "tensor-parallel all-reduce over Gloo ({} ranks): {:.1f} us at 4 bytes, {:.1f} us at {} bytes (means), the "
      "simulator's ring on latency {:.1f} us a step and {:.2f} GB/s",
      layout.tp, static_cast<double>(out.comm.tensor_small_ns) / 1e3, static_cast<double>(out.comm.tensor_large_ns) / 1e3,
      out.comm.tensor_bytes, static_cast<double>(out.comm.tensor_link->latency_ns) / 1e3,
      out.comm.tensor_link->bandwidth_bytes_per_s / 1e9));
}

// One replica's schedule (out.run's) simulated on the profile, with the measured hand-off as every
// link, the measured collectives and optimizer steps, and the cores the ranks share.
sched::Status predict_replica(const RankRun& run, DistributedPrediction& out) {
  RunConfig replica = run.config;
  replica.batch_size /= run.config.data_parallel;
  replica.data_parallel = 1;
  replica.zero = sim::ZeroStage::kNone;
  out.cluster = out.profile->cluster;
  share_cores(run, out.comm.core_slice_ns, out.cluster, out.notes, out.warnings);
  if (out.comm.handoff_bandwidth_bytes_per_s > 0) {
    out.cluster.intra_node =
        sim::LinkSpec{out.comm.handoff_bandwidth_bytes_per_s, out.comm.handoff_latency_ns, out.comm.send_overhead_ns};
    out.cluster.inter_node = out.cluster.intra_node;
  }
  use_tensor_link(run, out);
  if (run.place.layout.dp > 1) {
    out.warnings.push_back(fmt::format(
        "the {} replicas are simulated as one, in step: a REDUCE_GRAD that waits for a slower replica is not modelled, "
        "so the measured step is likely longer (docs/data_parallel.md)",
        run.place.layout.dp));
  }
  auto prediction = predict_run(replica, out.run.schedule, out.run.partition, out.profile->spec, out.cluster,
                                &*out.profile, nullptr, &out.comm.stages);
  if (!prediction) return prediction.error();
  out.prediction = std::move(prediction).value();
  out.notes.push_back(
      "the hand-off, collectives and optimizer steps were timed with every rank idle but the ones timing; in the "
      "steps they share the cores with the other ranks' compute");
  return sched::Ok{};
}

// The warm-up and measured steps; rank 0 keeps the measured ones merged.
sched::Status run_steps(RankRun& run, const DistributedPredictionSettings& settings,
                        const std::function<void(const StepStats&)>& on_step) {
  StepMeter meter(*run.where, run.setup.report.schedule.num_devices());
  const int total = settings.warmup + run.config.steps;
  for (int step = 0; step < total; ++step) {
    auto outcome = run_rank_step(run, meter, step);
    if (!outcome) return outcome.error();
    const auto report_step = step >= settings.warmup ? on_step : std::function<void(const StepStats&)>();
    if (auto s = record_step(run, step, std::move(outcome).value(), report_step); !s) return s.error();
  }
  std::vector<StepStats>& steps = run.setup.report.steps;
  steps.erase(steps.begin(), steps.begin() + settings.warmup);
  return sched::Ok{};
}

sched::Nanoseconds median_step_ns(const std::vector<StepStats>& steps) {
  std::vector<sched::Nanoseconds> ns;
  for (const StepStats& s : steps) ns.push_back(s.step_ns);
  if (ns.empty()) return 0;
  std::sort(ns.begin(), ns.end());
  return ns[ns.size() / 2];
}

}  // namespace

sched::Result<DistributedPrediction> predict_distributed(const RunConfig& config,
                                                         const DistributedPredictionSettings& settings,
                                                         const DistributedOptions& options,
                                                         const std::function<void(const StepStats&)>& on_step) {
  if (settings.warmup < 0 || settings.repetitions < 1 || settings.comm_repetitions < 1) {
    return sched::Error{"--warmup must be >= 0, --profile-repetitions >= 1"};
  }
  if (options.backend != Backend::kGloo) {
    return sched::Error{"run --distributed --predict times its hand-offs and collectives over Gloo: use --device cpu"};
  }
  auto set_up = set_up_rank(config, options);
  if (!set_up) return set_up.error();
  RankRun& run = *set_up;
  DistributedPrediction out;
  out.rank = run.env.rank;
  out.world_size = run.env.world_size;
  // The collectives and optimizer steps are timed on this thread with the intra-op threads the
  // steps use: LibTorch's default (every core, in every process) oversubscribes the cores and
  // times an OpenMP team waiting for its descheduled threads.
  set_worker_threads(run.executor->threads_per_worker());
  auto comm = profile_comm(run, settings.comm_repetitions, settings.profile_rounds);
  if (!comm) return comm.error();
  out.comm = replica_costs(*comm);
  if (out.rank == 0) {
    // The profile's workers stand for every rank: they start on the machine's cores, not this
    // rank's own (bind_rank), while the other ranks wait at the barrier below.
    if (!run.bound_cpus.empty()) {
      if (auto s = pin_current_thread(run.machine_cpus); !s) return rank_error(0, s.error().message);
    }
    auto profile = profile_replica(run, settings);
    if (!run.bound_cpus.empty()) {
      if (auto s = pin_current_thread(run.bound_cpus); !s) return rank_error(0, s.error().message);
    }
    if (!profile) return rank_error(0, profile.error().message);
    out.profile = std::move(profile).value();
  }
  if (auto s = store_barrier(run.group, "profiled"); !s) return s.error();
  set_worker_threads(run.executor->threads_per_worker());  // the profile set its own
  if (auto s = run_steps(run, settings, on_step); !s) return s.error();
  if (auto s = store_barrier(run.group, "end"); !s) return s.error();
  if (auto s = store_farewell(run.group); !s) return s.error();
  out.run = std::move(run.setup.report);
  out.run.threads_per_worker = run.executor->threads_per_worker();
  out.measured_step_ns = median_step_ns(out.run.steps);
  if (out.rank != 0) return out;
  if (auto s = predict_replica(run, out); !s) return rank_error(0, s.error().message);
  return out;
}

}  // namespace pipeworks::hw
