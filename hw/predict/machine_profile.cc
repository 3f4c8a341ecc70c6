// Hand-off, dispatch overhead and contention measured on this machine (see machine_profile.h).
#include "hw/predict/machine_profile.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cmath>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/exec/executor.h"
#include "hw/exec/inprocess_transport.h"
#include "hw/exec/threads.h"
#include "hw/model/model_zoo.h"
#include "hw/predict/profiler.h"
#include "hw/run/layer_partition.h"
#include "hw/run/run.h"
#include "sim/partition_text.h"

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

sched::Status measure_handoff(MachineProfile& out, int repetitions, std::vector<std::string>& notes) {
  InProcessTransport transport(2);
  std::vector<FitPoint> points;
  int m = 0;
  for (const sched::Bytes bytes : {sched::Bytes{4} << 10, sched::Bytes{256} << 10, sched::Bytes{4} << 20}) {
    const torch::Tensor tensor = torch::zeros({bytes / 4}, torch::kFloat32);
    auto samples = handoffs(transport, tensor, m, kWarmup + repetitions);
    if (!samples) return sched::Error{"hand-off: " + samples.error().message};
    m += kWarmup + repetitions;
    samples->erase(samples->begin(), samples->begin() + kWarmup);
    transport.reset();
    out.handoff.push_back({bytes, summarize_timings(*samples)});
    points.push_back({static_cast<double>(bytes), static_cast<double>(out.handoff.back().latency.median_ns)});
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
sched::Status measure_dispatch(MachineProfile& out, int threads, int repetitions) {
  RunConfig config;
  config.model.kind = ModelKind::kMlp;
  config.model.depth = 1;
  config.model.width = 4;
  config.num_stages = 1;
  config.num_microbatches = 16;
  config.batch_size = 16;
  config.schedule = sched::ScheduleKind::kGPipe;
  auto layers = profile_layers(config.model, {1}, kWarmup, repetitions, threads);
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
  auto executor = Executor::create(*schedule, std::move(cells).value(), options);
  if (!executor) return executor.error();
  std::vector<std::int64_t> per_action;
  for (int step = 0; step < kWarmup + repetitions; ++step) {
    const Batch batch = make_batch(config.model, config.batch_size, 17 + static_cast<std::uint64_t>(step));
    auto micro = split_batch(batch, config.num_microbatches);
    if (!micro) return micro.error();
    auto result = (*executor)->step(*micro, 1);
    if (!result) return sched::Error{"dispatch overhead: " + result.error().message};
    const sched::Nanoseconds makespan = sched::compute_stats(result->timeline).makespan_ns;
    const int actions = 2 * config.num_microbatches;
    if (step >= kWarmup) per_action.push_back((makespan - config.num_microbatches * (forward + backward)) / actions);
  }
  out.dispatch_samples = summarize_timings(per_action);
  out.dispatch_overhead_ns = std::max<sched::Nanoseconds>(0, out.dispatch_samples.median_ns);
  return sched::Ok{};
}

// Times forward + backward of the whole model on `workers` threads started together.
sched::Result<Timing> time_concurrent(const Model& model, const Batch& batch, int workers, int threads,
                                      int repetitions) {
  std::vector<std::vector<std::int64_t>> samples(static_cast<std::size_t>(workers));
  std::vector<std::string> errors(static_cast<std::size_t>(workers));
  std::barrier<> start(workers);
  std::vector<Model> copies;
  for (int w = 0; w < workers; ++w) copies.push_back(clone_model(model));
  {
    std::vector<std::jthread> pool;
    for (int w = 0; w < workers; ++w) {
      pool.emplace_back([&, w] {
        const auto i = static_cast<std::size_t>(w);
        Model& copy = copies[i];
        set_worker_threads(threads);
        start.arrive_and_wait();
        try {
          for (int r = 0; r < kWarmup + repetitions; ++r) {
            const auto t0 = Clock::now();
            torch::Tensor x = batch.inputs;
            for (Layer& l : copy.layers) x = l.module.forward(x);
            compute_loss(copy.loss, x, batch.targets).backward();
            if (r >= kWarmup) samples[i].push_back(ns_between(t0, Clock::now()));
          }
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
      });
    }
  }
  std::vector<std::int64_t> all;
  for (int w = 0; w < workers; ++w) {
    const auto i = static_cast<std::size_t>(w);
    if (!errors[i].empty()) return sched::Error{"contention: " + errors[i]};
    all.insert(all.end(), samples[i].begin(), samples[i].end());
  }
  return summarize_timings(all);
}

sched::Status measure_contention(MachineProfile& out, const ModelConfig& config, int microbatch_size,
                                 int repetitions, std::vector<std::string>& notes) {
  if (out.workers < 2) return sched::Ok{};
  auto model = build_model(config);
  if (!model) return model.error();
  const Batch batch = make_batch(config, microbatch_size, config.seed);
  // Alone and together alternate in rounds and the factor is the median of the per-round
  // ratios, so load from other processes that comes and goes hits both sides of a ratio alike.
  constexpr int kRounds = 5;
  const int per_round = std::max(1, repetitions / 2);
  std::vector<double> ratios;
  std::vector<std::int64_t> alone_all, together_all;
  for (int r = 0; r < kRounds; ++r) {
    auto alone = time_concurrent(*model, batch, 1, out.threads, per_round);
    if (!alone) return alone.error();
    auto together = time_concurrent(*model, batch, out.workers, out.threads, per_round);
    if (!together) return together.error();
    alone_all.push_back(alone->median_ns);
    together_all.push_back(together->median_ns);
    if (alone->median_ns > 0) {
      ratios.push_back(static_cast<double>(together->median_ns) / static_cast<double>(alone->median_ns));
    }
  }
  out.contention_alone = summarize_timings(alone_all);
  out.contention_concurrent = summarize_timings(together_all);
  std::sort(ratios.begin(), ratios.end());
  const double factor = ratios.empty() ? 1.0 : ratios[ratios.size() / 2];
  if (factor < 1.0) {
    notes.push_back(fmt::format("contention: {} workers measured {:.3f}x the time alone (noise); using 1",
                                out.workers, factor));
  }
  out.contention_factor = std::max(1.0, factor);
  return sched::Ok{};
}

}  // namespace

sched::Result<MachineProfile> profile_machine(const ModelConfig& model, int microbatch_size, int workers, int threads,
                                              int repetitions, std::vector<std::string>& notes) {
  if (workers < 1 || threads < 1 || repetitions < 1 || microbatch_size < 1) {
    return sched::Error{"machine profile: workers, threads, repetitions and micro-batch size must be >= 1"};
  }
  MachineProfile out;
  out.workers = workers;
  out.threads = threads;
  try {
    if (auto s = measure_handoff(out, repetitions, notes); !s) return s.error();
    if (auto s = measure_dispatch(out, threads, repetitions); !s) return s.error();
    if (auto s = measure_contention(out, model, microbatch_size, repetitions, notes); !s) return s.error();
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("machine profile: {}", e.what())};
  }
  return out;
}

sim::ClusterSpec cluster_from_machine(const MachineProfile& machine) {
  sim::ClusterSpec cluster;
  cluster.name = fmt::format("cpu-inprocess-{}", machine.workers);
  cluster.description = fmt::format(
      "this CPU as {} in-process worker(s) x {} intra-op thread(s): contention {:.3f}x, hand-off {} ns, dispatch {} ns "
      "per action (measured by pipeworks profile)",
      machine.workers, machine.threads, machine.contention_factor, machine.handoff_latency_ns,
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
  return cluster;
}

}  // namespace pipeworks::hw
