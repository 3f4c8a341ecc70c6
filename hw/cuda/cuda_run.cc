// In-process training on GPUs (see cuda_run.h): device d of the placement runs on GPU
// d % gpus; stage 0's inputs and the last stage's targets are moved to their GPUs before each
// step; SEND/RECV copy device to device on copy streams (cuda_copy_transport.h). Action spans
// are timed with CUDA events on each GPU (event_action_clock.h); step time is measured on the
// host around the step and a synchronize of every GPU used; peak activation bytes per device
// come from the caching allocator (peak minus what was live at the start).
#include "hw/cuda/cuda_run.h"

#include <chrono>
#include <set>

#include <fmt/format.h>
#include <torch/torch.h>

#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>

#include "hw/cuda/cuda_copy_transport.h"
#include "hw/cuda/cuda_device.h"
#include "hw/cuda/event_action_clock.h"
#include "hw/executor.h"
#include "hw/model_zoo.h"
#include "hw/reference.h"
#include "hw/run_setup.h"
#include "hw/stage_cell.h"

namespace pipeworks::hw::cuda {
namespace {

torch::Device gpu_device(int gpu) { return {torch::kCUDA, static_cast<c10::DeviceIndex>(gpu)}; }

void synchronize(const std::set<int>& gpus) {
  for (int gpu : gpus) {
    const c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(gpu));
    c10::cuda::device_synchronize();
  }
}

std::vector<torch::Tensor> on_cpu(const std::vector<torch::Tensor>& tensors, bool gradients) {
  std::vector<torch::Tensor> out;
  for (const torch::Tensor& t : tensors) {
    const torch::Tensor x = gradients ? t.grad() : t;
    out.push_back(x.defined() ? x.detach().cpu() : x);
  }
  return out;
}

}  // namespace

sched::Result<RunReport> run_training_on_gpus(const RunConfig& config,
                                              const std::function<void(const StepStats&)>& on_step) {
  const int gpus = device_count();
  if (gpus < 1) return sched::Error{"--device cuda: no CUDA device is visible"};
  auto setup = set_up_run(config);
  if (!setup) return setup.error();
  RunReport& report = setup->report;
  std::optional<Reference>& reference = setup->reference;  // on the CPU
  std::vector<StageCell>& cells = setup->cells;

  const auto gpu_of_device = [gpus](int device) { return device % gpus; };
  std::vector<int> stage_gpu;
  std::set<int> used;
  for (StageCell& c : cells) {
    stage_gpu.push_back(gpu_of_device(c.device));
    used.insert(stage_gpu.back());
    c.layers->to(gpu_device(stage_gpu.back()));
  }
  ExecutorOptions options = executor_options(config);
  options.measure_memory = false;  // CPU counters; GPU memory comes from the caching allocator
  options.clock = event_clocks(gpu_of_device);  // spans: when each GPU ran the work
  auto executor = Executor::create(report.schedule, std::move(cells), options,
                                   std::make_unique<CudaCopyTransport>(stage_gpu));
  if (!executor) return executor.error();
  Executor& ex = **executor;
  report.threads_per_worker = ex.threads_per_worker();
  if (reference) {
    report.check = GradientCheck{};
    // Compared with the CPU reference at rtol/atol: keep matmuls and convolutions in full FP32.
    at::globalContext().setAllowTF32CuBLAS(false);
    at::globalContext().setAllowTF32CuDNN(false);
  }
  const torch::Device first_gpu = gpu_device(stage_gpu.front());
  const torch::Device last_gpu = gpu_device(stage_gpu.back());

  for (int step = 0; step < config.steps; ++step) {
    const std::uint64_t seed = config.model.seed + 1000003ULL * static_cast<std::uint64_t>(step + 1);
    auto cpu_batch = split_batch(make_batch(config.model, config.batch_size, seed), config.num_microbatches);
    if (!cpu_batch) return cpu_batch.error();
    MicroBatches batch;
    for (int m = 0; m < config.num_microbatches; ++m) {
      batch.inputs.push_back(cpu_batch->inputs[static_cast<std::size_t>(m)].to(first_gpu));
      batch.targets.push_back(cpu_batch->targets[static_cast<std::size_t>(m)].to(last_gpu));
    }
    synchronize(used);
    std::vector<sched::Bytes> live_at_start(static_cast<std::size_t>(report.schedule.num_devices()));
    for (int d = 0; d < report.schedule.num_devices(); ++d) {
      live_at_start[static_cast<std::size_t>(d)] = memory_stats(gpu_of_device(d)).allocated_bytes;
      reset_peak_memory(gpu_of_device(d));
    }
    const auto start = std::chrono::steady_clock::now();
    auto result = ex.step(batch, seed);
    if (!result) return sched::Error{fmt::format("step {}: {}", step, result.error().message)};
    synchronize(used);
    StepStats stats;
    stats.step = step;
    stats.step_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
                        .count();
    stats.samples_per_s = stats.step_ns > 0 ? config.batch_size * 1e9 / static_cast<double>(stats.step_ns) : 0;
    stats.bubble_fraction = sched::compute_stats(result->timeline).bubble_fraction;
    stats.loss = result->loss;
    // GPUs shared by several devices report the same (shared) peak for each.
    for (int d = 0; d < report.schedule.num_devices(); ++d) {
      stats.peak_activation_bytes.push_back(memory_stats(gpu_of_device(d)).peak_allocated_bytes -
                                            live_at_start[static_cast<std::size_t>(d)]);
    }
    if (reference) {
      auto loss = reference->step(*cpu_batch, seed, ReferenceMode::kMicrobatches);
      if (!loss) return loss.error();
      const TensorDiff diff = compare_tensors(on_cpu(cell_parameters(ex.cells()), true), reference->gradients(),
                                              report.check->rtol, report.check->atol);
      report.check->max_abs_diff = std::max(report.check->max_abs_diff, diff.max_abs_diff);
      report.check->max_rel_diff = std::max(report.check->max_rel_diff, diff.max_rel_diff);
      report.check->exactly_equal = report.check->exactly_equal && diff.exactly_equal;
      report.check->passed = report.check->passed && diff.all_close && diff.same_shapes;
    }
    report.steps.push_back(stats);
    report.last_timeline = std::move(result->timeline);
    if (on_step) on_step(stats);
  }
  return std::move(report);
}

}  // namespace pipeworks::hw::cuda
