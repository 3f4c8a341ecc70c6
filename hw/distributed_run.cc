// One rank of a multi-process run (see distributed_run.h).
#include "hw/distributed_run.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <cstdlib>
#include <filesystem>

#include "hw/c10d_group.h"
#include "hw/c10d_transport.h"
#include "hw/die_at.h"
#include "hw/executor.h"
#include "hw/layer_partition.h"
#include "hw/model_zoo.h"
#include "hw/rank_report.h"
#include "hw/reference.h"
#include "hw/run_setup.h"
#include "hw/stage_cell.h"
#include "hw/threads.h"

#ifndef PIPEWORKS_HAVE_CUDA
#define PIPEWORKS_HAVE_CUDA 0
#endif
#if PIPEWORKS_HAVE_CUDA
#include "hw/cuda/cuda_device.h"
#include "hw/cuda/event_action_clock.h"
#include "hw/cuda/nccl_group.h"
#endif

namespace pipeworks::hw {
namespace {

using sched::Action;
using sched::ActionKind;

// The dtype and shape of every stage's output for one micro-batch, from one forward of
// micro-batch 0 through all cells (eval mode, no graph): what RECV_F(s+1) and RECV_B(s) expect.
std::vector<TensorMeta> stage_output_metas(std::vector<StageCell>& cells, const torch::Tensor& input) {
  const torch::NoGradGuard no_grad;
  std::vector<TensorMeta> metas;
  torch::Tensor x = input;
  for (StageCell& c : cells) {
    c.layers->eval();
    x = c.forward(x);
    metas.push_back(meta_of(x));
    c.layers->train();
  }
  return metas;
}

// This rank's cells' parameters and gradients, and the reference's at the same positions.
struct OwnTensors {
  std::vector<torch::Tensor> parameters, gradients, reference_parameters, reference_gradients;
};

OwnTensors own_tensors(const std::vector<StageCell>& cells, int rank, const Reference* reference) {
  OwnTensors own;
  std::vector<torch::Tensor> ref_params, ref_grads;
  if (reference != nullptr) {
    ref_params = reference->parameters();
    ref_grads = reference->gradients();
  }
  std::size_t index = 0;
  for (const StageCell& c : cells) {
    for (const torch::Tensor& p : c.parameters()) {
      if (c.device == rank) {
        own.parameters.push_back(p.detach().cpu());
        own.gradients.push_back(p.grad().defined() ? p.grad().cpu() : p.grad());
        if (reference != nullptr && index < ref_params.size()) {
          own.reference_parameters.push_back(ref_params[index]);
          own.reference_gradients.push_back(ref_grads[index]);
        }
      }
      ++index;
    }
  }
  return own;
}

GradientCheck check_of(const OwnTensors& own) {
  GradientCheck check;
  for (const TensorDiff& diff : {compare_tensors(own.gradients, own.reference_gradients, check.rtol, check.atol),
                                 compare_tensors(own.parameters, own.reference_parameters, check.rtol, check.atol)}) {
    check.max_abs_diff = std::max(check.max_abs_diff, diff.max_abs_diff);
    check.max_rel_diff = std::max(check.max_rel_diff, diff.max_rel_diff);
    check.exactly_equal = check.exactly_equal && diff.exactly_equal;
    check.passed = check.passed && diff.all_close && diff.same_shapes;
  }
  return check;
}

sched::Status dump_tensors(const OwnTensors& own, int rank) {
  const char* dir = std::getenv("PIPEWORKS_TEST_DUMP_DIR");
  if (dir == nullptr) return sched::Ok{};
  std::vector<torch::Tensor> all = own.parameters;
  for (const torch::Tensor& g : own.gradients) all.push_back(g.defined() ? g : torch::Tensor());
  const std::string path = (std::filesystem::path(dir) / fmt::format("rank{}.pt", rank)).string();
  try {
    torch::save(all, path);
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("cannot write {}: {}", path, describe_c10d_exception(e))};
  }
  return sched::Ok{};
}

// The device group for GPU ranks (NCCL); only reached with CUDA.
sched::Result<C10dGroup> connect_device_group(const DistributedEnv& env, std::chrono::milliseconds timeout) {
#if PIPEWORKS_HAVE_CUDA
  return cuda::connect_nccl(env, timeout);
#else
  (void)timeout;
  return sched::Error{fmt::format("rank {}: no CUDA in this build", env.rank)};
#endif
}

// GPU: synchronizes, resets the caching allocator's peak and returns the live bytes. CPU: 0.
sched::Bytes device_memory_reset(const torch::Device& device) {
#if PIPEWORKS_HAVE_CUDA
  if (device.is_cuda()) {
    const int gpu = device.index();
    cuda::reset_peak_memory(gpu);
    return cuda::memory_stats(gpu).allocated_bytes;
  }
#endif
  (void)device;
  return 0;
}

sched::Bytes device_memory_peak(const torch::Device& device) {
#if PIPEWORKS_HAVE_CUDA
  if (device.is_cuda()) return cuda::memory_stats(device.index()).peak_allocated_bytes;
#endif
  (void)device;
  return 0;
}

}  // namespace

sched::Result<DistributedReport> run_distributed(const RunConfig& config, const DistributedOptions& options,
                                                 const std::function<void(const StepStats&)>& on_step) {
  auto env = read_distributed_env();
  if (!env) return env.error();
  const int rank = env->rank;
  const auto fail = [rank](const std::string& message) {
    return sched::Error{fmt::format("rank {}: {}", rank, message)};
  };
  if (options.backend != "gloo" && options.backend != "nccl") {
    return fail(fmt::format("unknown backend '{}' (gloo or nccl)", options.backend));
  }
  if (options.backend == "nccl" && !PIPEWORKS_HAVE_CUDA) {
    return fail("backend nccl needs a LibTorch with CUDA; this build has none (use gloo on the CPU)");
  }
  if (config.steps < 1) return fail("steps must be >= 1");
  if (config.batch_size < 1 || config.num_microbatches < 1 || config.batch_size % config.num_microbatches != 0) {
    return fail(fmt::format("batch size {} must be a positive multiple of the {} micro-batches", config.batch_size,
                            config.num_microbatches));
  }
  auto die_at = read_die_at();
  if (!die_at) return fail(die_at.error().message);
  auto model = build_model(config.model);
  if (!model) return fail(model.error().message);
  DistributedReport out;
  out.rank = rank;
  out.world_size = env->world_size;
  RunReport& report = out.report;
  auto schedule = build_schedule(config);
  if (!schedule) return fail(schedule.error().message);
  report.schedule = *schedule;
  if (report.schedule.num_devices() != env->world_size) {
    return fail(fmt::format("the schedule has {} devices but WORLD_SIZE is {} (one process per device)",
                            report.schedule.num_devices(), env->world_size));
  }
  auto partition = parse_partition(config.partition, static_cast<int>(model->layers.size()), config.num_stages);
  if (!partition) return fail(partition.error().message);
  report.partition = *partition;
  auto spec = describe_model(*model);
  if (!spec) return fail(spec.error().message);
  report.spec = std::move(spec).value();
  auto cells = make_cells(*model, *partition, report.schedule.placement, config.fail_at);
  if (!cells) return fail(cells.error().message);
  if (*die_at) install_die_at(*cells, **die_at, rank);
  std::optional<Reference> reference;
  if (config.check) reference.emplace(*model, config.optimizer);

  const auto step_seed = [&](int step) {
    return config.model.seed + 1000003ULL * static_cast<std::uint64_t>(step + 1);
  };
  auto first = split_batch(make_batch(config.model, config.batch_size, step_seed(0)), config.num_microbatches);
  if (!first) return fail(first.error().message);
  const std::vector<TensorMeta> metas = stage_output_metas(*cells, first->inputs.front());

  // Gloo: tensors stay on the CPU. NCCL: this rank's cells, micro-batches and transfers live on
  // GPU LOCAL_RANK (modulo the GPUs present).
  torch::Device device(torch::kCPU);
#if PIPEWORKS_HAVE_CUDA
  if (options.backend == "nccl") {
    auto gpu = cuda::gpu_of_rank(*env);
    if (!gpu) return gpu.error();
    device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(*gpu));
  }
#endif
  auto group = device.is_cuda() ? connect_device_group(*env, options.timeout) : connect_gloo(*env, options.timeout);
  if (!group) return group.error();
  C10dTransportOptions transport_options;
  transport_options.rank = rank;
  transport_options.placement = report.schedule.placement;
  transport_options.num_microbatches = report.schedule.num_microbatches;
  transport_options.timeout = options.timeout;
  transport_options.device = device;
  auto c10d_transport = C10dTransport::create(group->backend, transport_options);
  if (!c10d_transport) return fail(c10d_transport.error().message);
  for (const Action& a : report.schedule.programs[static_cast<std::size_t>(rank)]) {
    if (a.kind == ActionKind::kRecvF) (*c10d_transport)->expect(a, metas[static_cast<std::size_t>(a.stage - 1)]);
    if (a.kind == ActionKind::kRecvB) (*c10d_transport)->expect(a, metas[static_cast<std::size_t>(a.stage)]);
  }
  std::unique_ptr<Transport> transport = std::move(c10d_transport).value();
  if (*die_at && sched::is_comm((*die_at)->kind)) transport = dying_transport(std::move(transport), **die_at, rank);

  ExecutorOptions executor_options = hw::executor_options(config);
  executor_options.recv_timeout = options.timeout;
  executor_options.only_device = rank;
  executor_options.measure_memory = !device.is_cuda();  // GPU memory: the caching allocator's peak
#if PIPEWORKS_HAVE_CUDA
  // GPU spans: when the GPU ran the work, from CUDA events (the host only sees the launches).
  const int gpu = device.index();
  if (device.is_cuda()) executor_options.clock = cuda::event_clocks([gpu](int) { return gpu; });
#endif
  for (StageCell& c : *cells) {
    if (c.device == rank) c.layers->to(device);
  }
  auto executor = Executor::create(report.schedule, std::move(cells).value(), executor_options, std::move(transport));
  if (!executor) return fail(executor.error().message);
  Executor& ex = **executor;
  // One worker per process: it gets the threads a single worker would get among all devices,
  // as in the in-process run, so both runs reduce in the same order.
  report.threads_per_worker = ex.threads_per_worker();
  report.worker_cpus = ex.worker_cpus();  // the plan for every device (each rank makes the same)
  if (reference) set_worker_threads(ex.threads_per_worker());

  for (int step = 0; step < config.steps; ++step) {
    const std::uint64_t seed = step_seed(step);
    auto microbatches = split_batch(make_batch(config.model, config.batch_size, seed), config.num_microbatches);
    if (!microbatches) return fail(microbatches.error().message);
    MicroBatches on_device;
    for (int m = 0; m < config.num_microbatches; ++m) {
      on_device.inputs.push_back(microbatches->inputs[static_cast<std::size_t>(m)].to(device));
      on_device.targets.push_back(microbatches->targets[static_cast<std::size_t>(m)].to(device));
    }
    const sched::Bytes gpu_live_at_start = device_memory_reset(device);
    if (auto s = store_barrier(*group, fmt::format("step{}", step)); !s) return s.error();
    auto result = ex.step(on_device, seed);
    if (!result) return fail(fmt::format("step {}: {}", step, result.error().message));
    RankStep mine;
    mine.rank = rank;
    mine.loss_sum = result->loss * config.num_microbatches;
    mine.peak_activation_bytes = device.is_cuda() ? device_memory_peak(device) - gpu_live_at_start
                                                  : result->peak_activation_bytes.at(static_cast<std::size_t>(rank));
    mine.step_ns = result->step_ns;
    for (const sched::Span& span : result->timeline.spans) {
      if (span.device == rank) mine.spans.push_back(span);
    }
    for (const sched::MemorySample& sample : result->timeline.memory) {
      if (sample.device == rank) mine.memory.push_back(sample);
    }
    if (reference) {
      auto loss = reference->step(*microbatches, seed, ReferenceMode::kMicrobatches);
      if (!loss) return fail(loss.error().message);
    }
    const OwnTensors own = own_tensors(ex.cells(), rank, reference ? &*reference : nullptr);
    if (reference) mine.check = check_of(own);
    if (step + 1 == config.steps) {
      if (auto s = dump_tensors(own, rank); !s) return fail(s.error().message);
    }
    auto gathered = gather_to_root(*group, fmt::format("step{}", step), encode_rank_step(mine));
    if (!gathered) return gathered.error();
    if (rank != 0) {
      StepStats stats;
      stats.step = step;
      stats.step_ns = mine.step_ns;
      stats.loss = mine.loss_sum / config.num_microbatches;
      stats.peak_activation_bytes = {mine.peak_activation_bytes};
      report.steps.push_back(stats);
      report.last_timeline = std::move(result->timeline);
      if (mine.check) {
        if (!report.check) report.check = *mine.check;
        merge_check(*report.check, *mine.check);
      }
      continue;
    }
    std::vector<RankStep> steps;
    for (const std::string& text : *gathered) {
      auto decoded = decode_rank_step(text);
      if (!decoded) return fail(decoded.error().message);
      steps.push_back(std::move(decoded).value());
    }
    auto merged = merge_rank_steps(steps, report.schedule, step, config.batch_size);
    if (!merged) return fail(merged.error().message);
    report.steps.push_back(merged->stats);
    report.last_timeline = std::move(merged->timeline);
    if (merged->check) {
      if (!report.check) report.check = *merged->check;
      merge_check(*report.check, *merged->check);
    }
    if (on_step) on_step(merged->stats);
  }
  if (auto s = store_barrier(*group, "end"); !s) return s.error();
  if (auto s = store_farewell(*group); !s) return s.error();
  return out;
}

}  // namespace pipeworks::hw
