// Hand-off, dispatch overhead and contention measured on this machine (see machine_profile.h).
#include "hw/predict/machine_profile.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <thread>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/exec/compute_devices.h"
#include "hw/exec/cpu_affinity.h"
#include "hw/exec/executor.h"
#include "hw/exec/inprocess_transport.h"
#include "hw/exec/threads.h"
#include "hw/model/model_zoo.h"
#include "hw/model/torch_errors.h"
#include "hw/predict/device_handoff.h"
#include "hw/predict/profiler.h"
#include "hw/run/layer_partition.h"
#include "hw/run/run.h"
#include "sched/units_text.h"
#include "sim/plan/partition_text.h"

namespace pipeworks::hw {
namespace {

using Clock = std::chrono::steady_clock;

sched::Nanoseconds ns_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

constexpr int kWarmup = 2;

// SEND_F(0, m) -> RECV_F(1, m) for m in [first, first + count), each with the receiver already
// waiting (as in a pipeline whose next stage idles until its input arrives): one receiver thread
// announces each wait, the sender lets it block, then sends. Latency = send start to recv return.
sched::Result<std::vector<std::int64_t>> handoffs(InProcessTransport& transport, const torch::Tensor& tensor,
                                                  int first, int count) {
  std::atomic<int> waiting{-1};
  std::vector<Clock::time_point> received(static_cast<std::size_t>(count));
  std::optional<sched::Error> error;
  std::thread receiver([&] {
    for (int i = 0; i < count; ++i) {
      waiting.store(i);
      auto got = transport.recv(sched::Action{1, sched::ActionKind::kRecvF, first + i}, std::chrono::seconds(10));
      received[static_cast<std::size_t>(i)] = Clock::now();
      if (!got) {
        error = got.error();
        waiting.store(count);  // releases the sender
        return;
      }
    }
  });
  std::vector<Clock::time_point> sent(static_cast<std::size_t>(count));
  std::optional<sched::Error> send_error;
  for (int i = 0; i < count; ++i) {
    while (waiting.load() < i) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::microseconds(300));  // let it block in recv
    sent[static_cast<std::size_t>(i)] = Clock::now();
    if (auto s = transport.send(sched::Action{0, sched::ActionKind::kSendF, first + i}, tensor); !s) {
      send_error = s.error();
      transport.abort(s.error().message);
      break;
    }
  }
  receiver.join();
  if (send_error) return *send_error;
  if (error) return *error;
  std::vector<std::int64_t> latencies;
  for (std::size_t i = 0; i < sent.size(); ++i) latencies.push_back(ns_between(sent[i], received[i]));
  return latencies;
}

const std::vector<sched::Bytes> kHandoffBytes = {sched::Bytes{4} << 10, sched::Bytes{256} << 10, sched::Bytes{4} << 20};

// The CPU's hand-off: the in-process transport, each receiver already waiting (handoffs()).
sched::Result<std::vector<HandoffSample>> inprocess_handoffs(int repetitions) {
  InProcessTransport transport(2);
  std::vector<HandoffSample> out;
  int m = 0;
  for (const sched::Bytes bytes : kHandoffBytes) {
    const torch::Tensor tensor = torch::zeros({bytes / 4}, torch::kFloat32);
    auto samples = handoffs(transport, tensor, m, kWarmup + repetitions);
    if (!samples) return sched::Error{"hand-off: " + samples.error().message};
    m += kWarmup + repetitions;
    samples->erase(samples->begin(), samples->begin() + kWarmup);
    transport.reset();
    out.push_back({bytes, summarize_timings(*samples)});
  }
  return out;
}

// The hand-off of `where`: the in-process transport on the CPU, the devices' own (copy streams)
// where their work is queued; fitted as latency + bytes / bandwidth.
sched::Status measure_handoff(MachineProfile& out, const ComputeDevices& where, int repetitions,
                              std::vector<std::string>& notes) {
  auto samples = where.asynchronous() ? device_handoffs(where, kHandoffBytes, kWarmup, repetitions)
                                      : inprocess_handoffs(repetitions);
  if (!samples) return samples.error();
  out.handoff = std::move(samples).value();
  std::vector<FitPoint> points;
  for (const HandoffSample& h : out.handoff) {
    points.push_back({static_cast<double>(h.bytes), static_cast<double>(h.latency.median_ns)});
  }
  auto fit = fit_linear(points);
  if (!fit) return fit.error();
  out.handoff_latency_ns = static_cast<sched::Nanoseconds>(std::llround(fit->fixed));
  if (fit->per_sample * 1e15 <= 1.0) {
    out.handoff_bandwidth_bytes_per_s = kUnboundedBandwidth;
    notes.push_back("hand-off: latency does not grow with size (tensors move by reference); bandwidth unbounded");
  } else {
    out.handoff_bandwidth_bytes_per_s = 1e9 / fit->per_sample;
  }
  return sched::Ok{};
}

// A one-stage pipeline of a tiny mlp: its layers cost a few microseconds, so what the executor
// measures beyond the profiled layer times is its own per-action cost.
sched::Status measure_dispatch(MachineProfile& out, const ComputeDevices& where, int threads, int repetitions) {
  RunConfig config;
  config.model.kind = ModelKind::kMlp;
  config.model.depth = 1;
  config.model.width = 4;
  config.num_stages = 1;
  config.num_microbatches = 16;
  config.batch_size = 16;
  config.schedule = sched::ScheduleKind::kGPipe;
  auto layers = profile_layers(config.model, {1}, kWarmup, repetitions, threads, 1, 0, where);
  if (!layers) return layers.error();
  sched::Nanoseconds forward = 0, backward = 0;
  for (const LayerProfile& l : *layers) {
    forward += l.samples.front().forward.median_ns;
    backward += l.samples.front().backward.median_ns;
  }
  auto model = build_model(config.model);
  if (!model) return model.error();
  auto schedule = build_schedule(config);
  if (!schedule) return schedule.error();
  auto partition = sim::parse_partition("uniform", static_cast<int>(model->layers.size()), 1);
  if (!partition) return partition.error();
  auto cells = make_cells(*model, *partition, schedule->placement);
  if (!cells) return cells.error();
  ExecutorOptions options;
  options.threads_per_worker = threads;
  auto executor = make_executor_on(where, *schedule, std::move(cells).value(), options);
  if (!executor) return executor.error();
  std::vector<std::int64_t> per_action;
  for (int step = 0; step < kWarmup + repetitions; ++step) {
    const Batch batch = make_batch(config.model, config.batch_size, 17 + static_cast<std::uint64_t>(step));
    auto micro = split_batch(batch, config.num_microbatches);
    if (!micro) return micro.error();
    auto result = (*executor)->step(place_batch(where, *micro, *schedule), 1);
    if (!result) return sched::Error{"dispatch overhead: " + result.error().message};
    const sched::Nanoseconds makespan = sched::compute_stats(result->timeline).makespan_ns;
    const int actions = 2 * config.num_microbatches;
    if (step >= kWarmup) per_action.push_back((makespan - config.num_microbatches * (forward + backward)) / actions);
  }
  out.dispatch_samples = summarize_timings(per_action);
  out.dispatch_overhead_ns = std::max<sched::Nanoseconds>(0, out.dispatch_samples.median_ns);
  return sched::Ok{};
}

// The factors below (contention, idle slowdown) compare two conditions that alternate in this
// many rounds, each round giving one ratio, so load from other processes that comes and goes hits
// both sides alike; the factor is the median ratio, and one below 1 is noise: 1, with a note.
constexpr int kFactorRounds = 5;

double factor_of_rounds(std::vector<double> ratios, std::string_view what, std::vector<std::string>& notes) {
  if (ratios.empty()) return 1.0;
  std::sort(ratios.begin(), ratios.end());
  const double factor = ratios[ratios.size() / 2];
  if (factor < 1.0) notes.push_back(fmt::format("{} measured {:.3f}x (noise); using 1", what, factor));
  return std::max(1.0, factor);
}

// One worker's share of a pipeline: layers [begin, end) of the one model, on their stage's input.
struct StageWork {
  int begin = 0;
  int end = 0;
  torch::Tensor input;
};

// The model cut uniformly into min(workers, layers) stages, stage s's layers on pipeline device
// s of `where`, each with its input there (the data, or the output of the layers before it).
std::vector<StageWork> split_work(Model& model, const Batch& batch, int workers, const ComputeDevices& where) {
  const int layers = static_cast<int>(model.layers.size());
  const int stages = std::min(workers, layers);
  std::vector<StageWork> work;
  torch::Tensor x = batch.inputs;
  const torch::NoGradGuard no_grad;
  for (int s = 0; s < stages; ++s) {
    const torch::Device on = where.device_of(s);
    StageWork w{layers * s / stages, layers * (s + 1) / stages, x.to(on)};
    x = w.input;
    for (int l = w.begin; l < w.end; ++l) {
      model.layers[static_cast<std::size_t>(l)].module.ptr()->to(on);
      x = model.layers[static_cast<std::size_t>(l)].module.forward(x);
    }
    work.push_back(std::move(w));
  }
  return work;
}

// F + B of one stage as a worker runs it (its input requires grad; the last stage ends in the loss,
// `batch` on the last stage's device).
void run_stage(Model& model, const StageWork& w, const Batch& batch) {
  torch::Tensor x = w.begin > 0 && w.input.is_floating_point() ? w.input.detach().requires_grad_(true) : w.input;
  for (int l = w.begin; l < w.end; ++l) x = model.layers[static_cast<std::size_t>(l)].module.forward(x);
  if (w.end == static_cast<int>(model.layers.size())) {
    compute_loss(model.loss, x, batch.targets).backward();
  } else {
    x.backward(torch::ones_like(x));
  }
}

// The median F + B of each stage in `active`, each on its own thread (on cpus[i] where given),
// the threads started together, timed on the stage's device clock (the executor's: host clock or
// CUDA events); 0 for stages not active.
sched::Result<std::vector<sched::Nanoseconds>> time_stages(Model& model, const std::vector<StageWork>& work,
                                                           const Batch& batch, const std::vector<std::size_t>& active,
                                                           int threads, int repetitions,
                                                           const ActionClockFactory& clocks,
                                                           const std::vector<std::vector<int>>& cpus) {
  std::vector<sched::Nanoseconds> medians(work.size(), 0);
  std::vector<std::string> errors(work.size());
  std::barrier<> start(static_cast<std::ptrdiff_t>(active.size()));
  {
    std::vector<std::jthread> pool;
    for (const std::size_t i : active) {
      pool.emplace_back([&, i] {
        if (i < cpus.size()) {
          if (auto pinned = pin_current_thread(cpus[i]); !pinned) errors[i] = pinned.error().message;
        }
        set_worker_threads(threads);
        std::vector<std::int64_t> samples;
        std::unique_ptr<ActionClock> clock = clocks ? clocks(static_cast<int>(i)) : nullptr;
        if (!clock) clock = std::make_unique<HostClock>();
        start.arrive_and_wait();
        try {
          for (int r = 0; r < kWarmup + repetitions; ++r) {
            clock->start_step(Clock::now());
            const ClockMark t0 = clock->mark();
            run_stage(model, work[i], batch);
            const ClockMark t1 = clock->mark();
            if (auto status = clock->finish_step(); !status) throw std::runtime_error(status.error().message);
            if (r >= kWarmup) samples.push_back(clock->ns(t1) - clock->ns(t0));
          }
          medians[i] = summarize_timings(std::move(samples)).median_ns;
        } catch (const std::exception& e) {
          errors[i] = torch_error_message(e);
        }
      });
    }
  }
  for (const std::string& e : errors) {
    if (!e.empty()) return sched::Error{"contention: " + e};
  }
  return medians;
}

sched::Status measure_contention(MachineProfile& out, const ComputeDevices& where, const ModelConfig& config,
                                 int microbatch_size, int repetitions, const std::vector<std::vector<int>>& cpus,
                                 std::vector<std::string>& notes) {
  if (out.workers < 2) return sched::Ok{};
  auto model = build_model(config);
  if (!model) return model.error();
  Batch batch = make_batch(config, microbatch_size, config.seed);
  const std::vector<StageWork> work = split_work(*model, batch, out.workers, where);
  batch.targets = batch.targets.to(where.device_of(static_cast<int>(work.size()) - 1));
  ExecutorOptions options;
  where.configure(options);
  if (work.size() < 2) return sched::Ok{};  // one layer: nothing to run at once
  std::vector<std::size_t> everyone(work.size());
  for (std::size_t i = 0; i < work.size(); ++i) everyone[i] = i;
  // Alone (each stage in turn) and together alternate in rounds (kFactorRounds).
  const int per_round = std::max(1, repetitions / 2);
  std::vector<double> ratios;
  std::vector<std::int64_t> alone_all, together_all;
  for (int r = 0; r < kFactorRounds; ++r) {
    sched::Nanoseconds alone = 0;
    for (const std::size_t i : everyone) {
      auto t = time_stages(*model, work, batch, {i}, out.threads, per_round, options.clock, cpus);
      if (!t) return t.error();
      alone += (*t)[i];
    }
    auto together = time_stages(*model, work, batch, everyone, out.threads, per_round, options.clock, cpus);
    if (!together) return together.error();
    sched::Nanoseconds at_once = 0;
    for (const sched::Nanoseconds t : *together) at_once += t;
    alone_all.push_back(alone);
    together_all.push_back(at_once);
    if (alone > 0) ratios.push_back(static_cast<double>(at_once) / static_cast<double>(alone));
  }
  out.contention_alone = summarize_timings(alone_all);
  out.contention_concurrent = summarize_timings(together_all);
  out.contention_factor =
      factor_of_rounds(std::move(ratios), fmt::format("contention: {} workers at once against alone", out.workers), notes);
  return sched::Ok{};
}

// F + B of `w`, `count` times, each after a sleep of `pause` (none: back to back); the median.
std::int64_t median_stage_ns(Model& model, const StageWork& w, const Batch& batch, int count,
                             std::chrono::microseconds pause) {
  std::vector<std::int64_t> samples;
  for (int i = 0; i < count; ++i) {
    if (pause.count() > 0) std::this_thread::sleep_for(pause);
    const Clock::time_point t0 = Clock::now();
    run_stage(model, w, batch);
    samples.push_back(ns_between(t0, Clock::now()));
  }
  return summarize_timings(std::move(samples)).median_ns;
}

// Runs the F+B of `w` over and over on its own thread (on `cpus` where given) until destroyed: the
// other workers of a pipeline, which compute while one of them waits.
class BusyStage {
 public:
  BusyStage(Model& model, const StageWork& w, const Batch& batch, const std::vector<int>& cpus, int threads)
      : thread_([&model, &w, &batch, cpus, threads](std::stop_token stop) {
          // measure_contention, which runs first, has refused any core out of range.
          if (!cpus.empty()) (void)pin_current_thread(cpus);
          set_worker_threads(threads);
          try {
            while (!stop.stop_requested()) run_stage(model, w, batch);
          } catch (const std::exception&) {
            // The measured side runs the same model and reports an error of its own.
          }
        }) {}

 private:
  std::jthread thread_;
};

// On the CPU: how much slower the first stage's F+B runs after its worker slept kIdleSlowdownAfter
// than back to back (machine_profile.h), with the second stage computing meanwhile where there is
// one, as a pipeline's other worker does; on the workers' cores where the run pins them.
sched::Status measure_idle_slowdown(MachineProfile& out, const ComputeDevices& where, const ModelConfig& config,
                                    int microbatch_size, int repetitions, const std::vector<std::vector<int>>& cpus,
                                    std::vector<std::string>& notes) {
  if (where.asynchronous()) return sched::Ok{};  // queued kernels: the host's idling is not theirs
  auto model = build_model(config);
  if (!model) return model.error();
  const Batch batch = make_batch(config, microbatch_size, config.seed);
  const std::vector<StageWork> work = split_work(*model, batch, out.workers, where);
  const int per_round = std::max(1, repetitions / 2);
  std::vector<std::int64_t> hot, after;
  std::vector<double> ratios;
  std::string error;
  std::optional<BusyStage> other;
  if (work.size() > 1) other.emplace(*model, work[1], batch, cpus.size() > 1 ? cpus[1] : std::vector<int>{}, out.threads);
  std::jthread([&] {
    if (!cpus.empty()) {
      if (auto pinned = pin_current_thread(cpus.front()); !pinned) {
        error = pinned.error().message;
        return;
      }
    }
    set_worker_threads(out.threads);
    try {
      (void)median_stage_ns(*model, work.front(), batch, kWarmup, std::chrono::microseconds{0});
      for (int r = 0; r < kFactorRounds; ++r) {
        hot.push_back(median_stage_ns(*model, work.front(), batch, per_round, std::chrono::microseconds{0}));
        after.push_back(median_stage_ns(*model, work.front(), batch, per_round, kIdleSlowdownAfter));
        if (hot.back() > 0) ratios.push_back(static_cast<double>(after.back()) / static_cast<double>(hot.back()));
      }
    } catch (const std::exception& e) {
      error = torch_error_message(e);
    }
  }).join();
  other.reset();
  if (!error.empty()) return sched::Error{"idle slowdown: " + error};
  out.idle_hot = summarize_timings(hot);
  out.idle_after = summarize_timings(after);
  out.idle_slowdown = factor_of_rounds(
      std::move(ratios), fmt::format("idle slowdown: F+B after {} ms asleep against back to back", kIdleSlowdownAfter.count()),
      notes);
  return sched::Ok{};
}

}  // namespace

sched::Result<MachineProfile> profile_machine(const ModelConfig& model, int microbatch_size, int workers, int threads,
                                              int repetitions, std::vector<std::string>& notes,
                                              const ComputeDevices& where,
                                              const std::vector<std::vector<int>>& worker_cpus) {
  if (workers < 1 || threads < 1 || repetitions < 1 || microbatch_size < 1) {
    return sched::Error{"machine profile: workers, threads, repetitions and micro-batch size must be >= 1"};
  }
  MachineProfile out;
  out.workers = workers;
  out.threads = threads;
  out.device = where.kind();
  if (out.device == DeviceKind::kCpu) out.cores = static_cast<int>(usable_cpus().size());
  try {
    if (auto s = measure_handoff(out, where, repetitions, notes); !s) return s.error();
    if (auto s = measure_dispatch(out, where, threads, repetitions); !s) return s.error();
    if (auto s = measure_contention(out, where, model, microbatch_size, repetitions, worker_cpus, notes); !s) {
      return s.error();
    }
    if (auto s = measure_idle_slowdown(out, where, model, microbatch_size, repetitions, worker_cpus, notes); !s) {
      return s.error();
    }
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("machine profile: {}", torch_error_message(e))};
  }
  return out;
}

sim::ClusterSpec cluster_from_machine(const MachineProfile& machine) {
  sim::ClusterSpec cluster;
  const bool on_cpu = machine.device == DeviceKind::kCpu;
  cluster.name = fmt::format("{}-inprocess-{}", device_kind_name(machine.device), machine.workers);
  cluster.description = fmt::format(
      "this {} as {} x {}: contention {:.3f}x, hand-off {} ns, dispatch {} ns "
      "per action (measured by pipeworks profile)",
      on_cpu ? "CPU" : "machine's GPUs", sched::counted(machine.workers, on_cpu ? "in-process worker" : "pipeline device"),
      sched::counted(machine.threads, "intra-op thread"),
      machine.contention_factor, machine.handoff_latency_ns,
      machine.dispatch_overhead_ns);
  sim::DeviceSpec device;
  cluster.devices.assign(static_cast<std::size_t>(std::max(1, machine.workers)), device);
  cluster.devices_per_node = std::max(1, machine.workers);
  const double bandwidth =
      machine.handoff_bandwidth_bytes_per_s > 0 ? machine.handoff_bandwidth_bytes_per_s : kUnboundedBandwidth;
  cluster.intra_node = sim::LinkSpec{bandwidth, machine.handoff_latency_ns};
  cluster.inter_node = cluster.intra_node;
  cluster.comm_mode = sim::CommMode::kEager;  // mailbox sends, blocking receives in program order
  cluster.dispatch_overhead_ns = machine.dispatch_overhead_ns;
  cluster.contention_factor = std::max(1.0, machine.contention_factor);
  cluster.cores = machine.cores;
  cluster.threads_per_device = std::max(1, machine.threads);
  if (machine.idle_slowdown > 1.0) {
    cluster.idle_slowdown = machine.idle_slowdown;
    cluster.idle_slowdown_after_ns = std::chrono::nanoseconds(kIdleSlowdownAfter).count();
  }
  return cluster;
}

}  // namespace pipeworks::hw
