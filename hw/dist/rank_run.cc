// One rank's set-up and steps (see rank_run.h).
#include "hw/dist/rank_run.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/dist/c10d_group.h"
#include "hw/dist/c10d_replica_sync.h"
#include "hw/dist/c10d_transport.h"
#include "hw/dist/die_at.h"
#include "hw/dist/rank_backend.h"
#include "hw/dist/rank_layout.h"
#include "hw/dist/rank_report.h"
#include "hw/dist/rank_tensor_parallel.h"
#include "hw/dist/rank_tensors.h"
#include "hw/dist/replica_checks.h"
#include "hw/dist/tensor_parallel_checks.h"
#include "hw/run/reference_check.h"
#include "hw/dist/run_agreement.h"
#include "hw/exec/compute_devices.h"
#include "hw/exec/cpu_affinity.h"
#include "hw/exec/executor.h"
#include "hw/exec/threads.h"
#include "hw/model/model_zoo.h"
#include "hw/model/reference.h"
#include "hw/model/stage_cell.h"
#include "hw/run/run_setup.h"
#include "hw/run/step_inputs.h"
#include "sched/dependencies.h"

namespace pipeworks::hw {
namespace {

using sched::Action;
using sched::ActionKind;



// The dtype and shape of every stage's output for one micro-batch (of B / (M x dp) samples), from
// one forward of micro-batch 0 of step 0 through all cells (eval mode, no graph): what RECV_F(s+1) and
// RECV_B(s) expect.
sched::Result<std::vector<TensorMeta>> stage_output_metas(const RunConfig& config, std::vector<StageCell>& cells) {
  auto first = split_batch(make_batch(config.model, config.batch_size, step_seed(config.model, 0)),
                           config.num_microbatches * config.data_parallel);
  if (!first) return first.error();
  const torch::NoGradGuard no_grad;
  std::vector<TensorMeta> metas;
  torch::Tensor x = first->inputs.front();
  for (StageCell& c : cells) {
    c.layers->eval();
    x = c.forward(x);
    metas.push_back(meta_of(x));
    c.layers->train();
  }
  return metas;
}

// This rank's configuration against every other rank's, so that ranks started differently fail
// here naming the field instead of waiting on each other until the timeout (run_agreement.h).
sched::Status check_same_config(C10dGroup& group, const std::string& summary) {
  auto all = exchange_all(group, "run-config", summary);
  if (!all) return all.error();
  for (int r = 0; r < group.env.world_size; ++r) {
    if (r == group.env.rank) continue;
    if (auto difference = first_difference(summary, (*all)[static_cast<std::size_t>(r)], r)) {
      return rank_error(group.env.rank, "the ranks were started with different configurations: " + *difference);
    }
  }
  return sched::Ok{};
}

// What the hand-off into `recv` carries: stage s's output into RECV_F(s+1), and the gradient of
// that output into RECV_B(s).
const TensorMeta& handoff_meta(const Action& recv, const std::vector<TensorMeta>& metas) {
  const int producer = recv.kind == ActionKind::kRecvF ? recv.stage - 1 : recv.stage;
  return metas.at(static_cast<std::size_t>(producer));
}

// The c10d transport of this rank's program, agreeing with its peers on every hand-off's dtype
// and shape (both sides from the same table, so payloads travel without headers) and posting
// each receive ahead in the program's order, wrapped by the die-at hook when it names a SEND or RECV.
sched::Result<std::unique_ptr<Transport>> rank_transport(const RankRun& run, const std::vector<TensorMeta>& metas,
                                                         const DistributedOptions& options,
                                                         const std::optional<Action>& die_at) {
  const int rank = run.env.rank;
  const sched::Schedule& schedule = run.setup.report.schedule;
  C10dTransportOptions transport_options;
  transport_options.rank = rank;
  transport_options.placement = run.place.stage_ranks;
  transport_options.num_microbatches = schedule.num_microbatches;
  transport_options.timeout = options.timeout;
  transport_options.device = run.where->device_of(run.place.device);
  auto c10d_transport = C10dTransport::create(run.group.backend, transport_options);
  if (!c10d_transport) return rank_error(rank, c10d_transport.error().message);
  std::vector<Action> receives;
  for (const Action& a : schedule.programs[static_cast<std::size_t>(run.place.device)]) {
    const auto received = sched::is_send(a.kind) ? sched::comm_peer(a, schedule.num_stages) : std::optional<Action>(a);
    if (!received || !sched::is_recv(received->kind)) continue;
    (*c10d_transport)->agree(*received, handoff_meta(*received, metas));
    if (sched::is_recv(a.kind)) receives.push_back(a);
  }
  (*c10d_transport)->receive_in_order(std::move(receives));
  std::unique_ptr<Transport> transport = std::move(c10d_transport).value();
  if (die_at && sched::is_comm(die_at->kind) && run.place.replica == 0) transport = dying_transport(std::move(transport), *die_at, rank);
  return transport;
}

// With data parallelism: the Gloo group of this rank's replicas and the ReplicaSync over it,
// holding handles to the parameters of the cells this rank runs.
sched::Status connect_replicas(RankRun& run, const DistributedOptions& options) {
  if (run.place.layout.dp == 1) return sched::Ok{};
  if (options.backend != Backend::kGloo) {
    return rank_error(run.env.rank, "data-parallel replicas reduce over Gloo: run --dp with --device cpu");
  }
  // One group per (device, tensor rank): the store keys of each apart.
  auto group = connect_gloo_subgroup(
      run.group, fmt::format("dp-of-device{}-tensor{}", run.place.device, run.place.tensor_rank),
      run.place.replica_group);
  if (!group) return group.error();
  ReplicaSyncOptions sync_options;
  sync_options.group_ranks = run.place.replica_group;
  sync_options.replica = run.place.replica;
  sync_options.zero = run.config.zero;
  sync_options.optimizer = run.config.optimizer;
  sync_options.timeout = options.timeout;
  auto sync = C10dReplicaSync::create(std::move(group).value(),
                                      replicated_parameters(run.setup.cells, run.place.device), sync_options);
  if (!sync) return rank_error(run.env.rank, sync.error().message);
  run.replicas = std::move(sync).value();
  return sched::Ok{};
}

// A rank's intra-op threads: the machine's cores shared by every rank of every replica (with one
// pipeline the executor resolves the same against its schedule's devices, the pipeline ranks).
int rank_threads(const RankRun& run) {
  return resolve_threads_per_worker(run.config.threads_per_worker, run.place.layout.devices());
}

// The executor of this rank's program: its device only, its replica's micro-batches and, with
// data parallelism, its ReplicaSync in place of its own optimizers.
sched::Status make_rank_executor(RankRun& run, const DistributedOptions& options,
                                 std::unique_ptr<Transport> transport) {
  ExecutorOptions executor_options = hw::executor_options(run.config);
  executor_options.recv_timeout = options.timeout;
  executor_options.only_device = run.place.device;
  if (run.place.layout.devices() > run.place.layout.pp) {
    // The machine's cores shared by every rank of every replica; pinning is by device, which the
    // replicas and tensor-parallel ranks of a device would share (check_run_config refuses
    // --pin-workers on).
    executor_options.threads_per_worker = rank_threads(run);
    executor_options.pin_workers = WorkerPinning::kOff;
  }
  if (!run.bound_cpus.empty()) executor_options.pin_workers = WorkerPinning::kOff;  // bound whole (bind_rank)
  executor_options.replicas = run.replicas;
  executor_options.microbatch_offset = run.place.replica * run.config.num_microbatches;
  auto executor = make_executor_on(*run.where, run.setup.report.schedule, std::move(run.setup.cells),
                                   executor_options, std::move(transport));
  if (!executor) return rank_error(run.env.rank, executor.error().message);
  run.executor = std::move(executor).value();
  return sched::Ok{};
}



// With replicas, after the reference's accumulate(): the reduced gradients against its own, then
// its optimizer step on the replicas' gradients, the parameters against its, and the replicas'
// parameters against each other (replica_checks.h).
sched::Result<GradientCheck> check_replicated_step(RankRun& run, Reference& reference, int step) {
  const std::vector<StageCell>& cells = run.executor->cells();
  auto check = check_replica_gradients(*run.replicas, cells, reference, run.place, run.config.num_microbatches);
  if (!check) return check.error();
  auto gradients = pipeline_gradients(run.group, *run.replicas, cells, run.place, step);
  if (!gradients) return gradients.error();
  reference.set_gradients(*gradients);
  if (auto stepped = reference.apply_step(); !stepped) return stepped.error();
  const RankTensors own = rank_tensors(cells, run.place.device, &reference);
  check_tensors(*check, own.parameters, own.reference_parameters);
  if (auto s = check_replicas_agree(run.group, run.place, bytes_digest(own.parameters), step); !s) return s.error();
  return check;
}

// With tensor-parallel ranks, after the reference's accumulate(): this rank's shards against the
// reference's slices, the reference's step, the replicated parameters across the tensor-parallel
// group (tensor_parallel_checks.h) and, with replicas, the replicas' parameters against each other.
sched::Result<GradientCheck> check_tensor_parallel_rank(RankRun& run, Reference& reference, int step) {
  const std::vector<StageCell>& cells = run.executor->cells();
  const TensorParallelCheckInputs in{&run.config.model, &run.group, &run.place, &cells, run.replicas.get(),
                                     &run.tensor_parallel.shards};
  auto check = check_tensor_parallel_step(in, reference, step);
  if (!check || !run.replicas) return check;
  const RankTensors own = rank_tensors(cells, run.place.device, nullptr);
  if (auto s = check_replicas_agree(run.group, run.place, bytes_digest(own.parameters), step); !s) return s.error();
  return check;
}

// After the step: this rank's tensors against the reference's (with --check; with replicas or
// tensor-parallel ranks as above), and the test dump after the last step.
sched::Result<std::optional<GradientCheck>> check_rank_step(RankRun& run, int step) {
  const int rank = run.env.rank;
  std::optional<Reference>& reference = run.setup.reference;
  std::optional<GradientCheck> check;
  if (reference && run.tensor_parallel.group) {
    auto split = check_tensor_parallel_rank(run, *reference, step);
    if (!split) return rank_error(rank, split.error().message);
    check = *split;
  } else if (reference && run.replicas) {
    auto replicated = check_replicated_step(run, *reference, step);
    if (!replicated) return rank_error(rank, replicated.error().message);
    check = *replicated;
  }
  const RankTensors own = rank_tensors(run.executor->cells(), run.place.device, reference ? &*reference : nullptr);
  if (reference && !run.replicas && !run.tensor_parallel.group) check = check_rank_tensors(own);
  if (step + 1 == run.config.steps) {
    if (auto s = dump_rank_tensors(own, rank); !s) return rank_error(rank, s.error().message);
  }
  return check;
}


// Rank 0: every rank's report of the step merged into one row and one timeline (rank_report.h).
sched::Result<MergedStep> merge_gathered(const RankRun& run, const std::vector<std::string>& gathered, int step) {
  std::vector<RankStep> steps;
  for (const std::string& text : gathered) {
    auto decoded = decode_rank_step(text);
    if (!decoded) return rank_error(run.env.rank, decoded.error().message);
    steps.push_back(std::move(decoded).value());
  }
  auto merged =
      merge_rank_steps(steps, run.setup.report.schedule, step, run.config.batch_size, run.place.layout.dp,
                       run.place.layout.tp);
  if (!merged) return rank_error(run.env.rank, merged.error().message);
  return merged;
}

// The set-up every run makes (set_up_run), with a schedule of one device per process of each
// replica and, with tensor-parallel ranks, cells cut from this rank's shard of the model; the
// die-at hook. Errors in the order the steps are taken, each naming the rank.
sched::Result<RankRun> prepare_rank(const RunConfig& config, const DistributedOptions& options,
                                    const DistributedEnv& env, const std::optional<Action>& die_at) {
  const int rank = env.rank;
  auto wrong_shard = read_wrong_shard();
  if (!wrong_shard) return rank_error(rank, wrong_shard.error().message);
  std::optional<RankPlace> checked;
  const ScheduleCheck one_process_per_device = [&](const sched::Schedule& schedule) -> sched::Status {
    auto place = rank_place(config, schedule, env.rank, env.world_size);
    if (!place) return place.error();
    checked = std::move(place).value();
    return sched::Ok{};
  };
  RankTensorParallel tensor_parallel;
  ModelTransform shard;
  if (config.tensor_parallel > 1) {
    shard = [&](const Model& model) {
      return tensor_parallel_model(model, *checked, options.timeout, *wrong_shard, tensor_parallel);
    };
  }
  auto setup = set_up_run(config, one_process_per_device, shard);
  if (!setup) return rank_error(rank, setup.error().message);
  RankRun run{config, env, std::move(setup).value(), std::move(*checked), nullptr, {}, std::move(tensor_parallel),
              nullptr, nullptr, {}, {}, {}};
  if (die_at && run.place.replica == 0) install_die_at(run.setup.cells, *die_at, rank);
  return run;
}

// A CPU rank's process on cores of its own (plan_rank_cpus): every thread it has (pin_process),
// and, bound before its backend connects and its executor starts, its worker, LibTorch's threads
// and its backend's (Gloo's loop) inherit them. Unbound, the kernel wakes a rank's Gloo thread on
// the core of the rank that sent to it, which goes on computing, and the hand-off waits up to a
// scheduler tick (bench/README.md, "ranks bound to cores"). Pipelines only: with replicas or
// tensor-parallel ranks Gloo's collectives run on threads of their own, which a bound rank's
// worker then shares its cores with (measured slower with tp 2, no faster with dp 2);
// check_run_config refuses --pin-workers on there.
sched::Status bind_rank(RankRun& run) {
  run.machine_cpus = usable_cpus();
  const sim::ParallelLayout& layout = run.place.layout;
  if (run.config.device != DeviceKind::kCpu || layout.dp > 1 || layout.tp > 1) return sched::Ok{};
  auto cpus = plan_rank_cpus(run.config.pin_workers, run.env.local_rank, run.env.local_world_size,
                             rank_threads(run), run.machine_cpus);
  if (!cpus) return sched::Error{"--pin-workers: " + cpus.error().message};
  if (cpus->empty()) return sched::Ok{};
  if (auto pinned = pin_process(*cpus); !pinned) return pinned.error();
  run.bound_cpus = std::move(cpus).value();
  return sched::Ok{};
}

}  // namespace

sched::Error rank_error(int rank, const std::string& message) {
  return sched::Error{fmt::format("rank {}: {}", rank, message)};
}

std::vector<std::vector<int>> bound_device_cpus(const RankRun& run) {
  const sim::ParallelLayout& layout = run.place.layout;
  if (run.bound_cpus.empty() || run.env.local_world_size != run.env.world_size) return {};
  const int threads = rank_threads(run);
  std::vector<std::vector<int>> out(static_cast<std::size_t>(layout.pp));
  for (int r = 0; r < run.env.world_size; ++r) {
    auto cpus = plan_rank_cpus(WorkerPinning::kOn, r, run.env.world_size, threads, run.machine_cpus);
    if (!cpus) return {};
    std::vector<int>& device = out[static_cast<std::size_t>(sim::coord_of(layout, r).pp)];
    device.insert(device.end(), cpus->begin(), cpus->end());
  }
  for (std::vector<int>& cpus : out) std::sort(cpus.begin(), cpus.end());
  return out;
}

// prepare_rank; then this rank's devices, the group of ranks (its tensor-parallel group before
// the hand-offs' shapes, which a forward over the split layers finds, and its replicas'), the
// transport and the executor that runs this rank's program only.
sched::Result<RankRun> set_up_rank(const RunConfig& config, const DistributedOptions& options) {
  auto env = read_distributed_env();
  if (!env) return env.error();
  const int rank = env->rank;
  if (auto s = check_backend(options.backend); !s) return rank_error(rank, s.error().message);
  auto die_at = read_die_at();
  if (!die_at) return rank_error(rank, die_at.error().message);
  auto prepared = prepare_rank(config, options, *env, *die_at);
  if (!prepared) return prepared.error();
  RankRun run = std::move(prepared).value();
  if (auto s = bind_rank(run); !s) return rank_error(rank, s.error().message);
  auto where = rank_compute_devices(*env, options.backend);
  if (!where) return where.error();
  run.where = std::move(where).value();
  auto group = connect_backend(*env, options.backend, options.timeout);
  if (!group) return group.error();
  run.group = std::move(group).value();
  if (auto agreed = check_same_config(run.group, run_config_summary(config, options)); !agreed) return agreed.error();
  if (auto s = connect_tensor_group(run.tensor_parallel, run.group, run.place); !s) {
    return rank_error(rank, s.error().message);
  }
  auto metas = stage_output_metas(config, run.setup.cells);
  if (!metas) return rank_error(rank, metas.error().message);
  run.metas = *metas;
  if (auto s = connect_replicas(run, options); !s) return s.error();
  auto transport = rank_transport(run, *metas, options, *die_at);
  if (!transport) return transport.error();
  if (auto s = make_rank_executor(run, options, std::move(transport).value()); !s) return s.error();
  return run;
}


// The step's work on this rank between the barrier that opens it and the gather: its program,
// the reference's step on the whole mini-batch (with --check) and the rank's checks.
sched::Result<RankStepOutcome> run_rank_step(RankRun& run, StepMeter& meter, int step) {
  const RunConfig& config = run.config;
  const int rank = run.env.rank;
  const auto device = static_cast<std::size_t>(run.place.device);
  std::optional<Reference>& reference = run.setup.reference;
  auto in = step_inputs(config, *run.where, run.setup.report.schedule, step, run.place.replica);
  if (!in) return rank_error(rank, in.error().message);
  if (auto s = store_barrier(run.group, fmt::format("step{}", step)); !s) return s.error();
  meter.start();
  auto result = run.executor->step(in->placed, in->seed);
  if (!result) return rank_error(rank, fmt::format("step {}: {}", step, result.error().message));
  RankStepOutcome out;
  RankStep& mine = out.mine;
  mine.rank = rank;
  mine.device = run.place.device;
  mine.replica = run.place.replica;
  mine.step_ns = meter.finish(*result);
  mine.loss_sum = result->loss * config.num_microbatches;
  mine.peak_activation_bytes = result->peak_activation_bytes.at(device);
  for (const sched::Span& span : result->timeline.spans) {
    if (span.device == mine.device) mine.spans.push_back(span);
  }
  for (const sched::MemorySample& sample : result->timeline.memory) {
    if (sample.device == mine.device) mine.memory.push_back(sample);
  }
  out.timeline = std::move(result->timeline);
  if (reference) {
    // With replicas or tensor-parallel ranks check_rank_step applies the reference's optimizer (on
    // the ranks' gradients).
    auto loss = run.replicas ? reference->accumulate(in->microbatches, in->seed, ReferenceMode::kMicrobatchMagnitudes)
                : run.tensor_parallel.group ? reference->accumulate(in->microbatches, in->seed, ReferenceMode::kMicrobatches)
                                            : reference->step(in->microbatches, in->seed, ReferenceMode::kMicrobatches);
    if (!loss) return rank_error(rank, loss.error().message);
  }
  auto check = check_rank_step(run, step);
  if (!check) return check.error();
  mine.check = *check;
  return out;
}

// Sends this rank's report of the step to rank 0 and adds the step to the run's report: on rank
// 0 the merged one (then on_step), on the others their own.
sched::Status record_step(RankRun& run, int step, RankStepOutcome outcome,
                          const std::function<void(const StepStats&)>& on_step) {
  RunReport& report = run.setup.report;
  const RankStep& mine = outcome.mine;
  auto gathered = gather_to_root(run.group, fmt::format("step{}", step), encode_rank_step(mine));
  if (!gathered) return gathered.error();
  if (run.env.rank != 0) {
    StepStats stats;
    stats.step = step;
    stats.step_ns = mine.step_ns;
    stats.loss = mine.loss_sum / run.config.num_microbatches;
    stats.peak_activation_bytes = {mine.peak_activation_bytes};
    report.steps.push_back(stats);
    report.last_timeline = std::move(outcome.timeline);
    if (mine.check) merge_check(report.check, *mine.check);
    return sched::Ok{};
  }
  auto merged = merge_gathered(run, *gathered, step);
  if (!merged) return merged.error();
  report.steps.push_back(merged->stats);
  report.last_timeline = std::move(merged->timeline);
  if (merged->check) merge_check(report.check, *merged->check);
  if (on_step) on_step(merged->stats);
  return sched::Ok{};
}

}  // namespace pipeworks::hw
