// The OS time slice as the run's ranks see it (see core_slice_probe.h).
#include "hw/dist/core_slice_probe.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <torch/torch.h>

#include "hw/exec/cpu_affinity.h"
#include "hw/predict/cost_fit.h"

namespace pipeworks::hw {
namespace {

using Clock = std::chrono::steady_clock;

// Tags no hand-off of the transport uses (its tags count up from 0; comm_profile.cc's bounce
// takes max - 1).
constexpr int kProbeTag = std::numeric_limits<int>::max() - 2;
constexpr int kStopTag = std::numeric_limits<int>::max() - 3;
// What device 0's rank computes before each send: longer than a wake-up on an idle core takes,
// so the waiter has fallen asleep (bench/oversubscribed_handoff.py: from 300 us on).
constexpr std::chrono::microseconds kGap{1000};

void spin_for(Clock::duration d) {
  const Clock::time_point end = Clock::now() + d;
  while (Clock::now() < end) {
  }
}

std::int64_t since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

// Device 0's rank: R round trips after one untimed, each after kGap of computing; then every
// busy rank is told to stop. Returns the median one way.
sched::Result<sched::Nanoseconds> time_woken_handoff(RankRun& run, int peer, const std::vector<int>& busy,
                                                     int repetitions) {
  std::vector<at::Tensor> message{torch::zeros({1}, torch::kFloat)};
  const std::string what = fmt::format("rank {}: timing a wake-up with rank {}", run.env.rank, peer);
  std::vector<std::int64_t> one_way;
  for (int r = 0; r <= repetitions; ++r) {
    spin_for(kGap);
    const Clock::time_point start = Clock::now();
    if (auto s = wait_work(run.group.backend->send(message, peer, kProbeTag), run.group.timeout, what); !s) return s.error();
    if (auto s = wait_work(run.group.backend->recv(message, peer, kProbeTag), run.group.timeout, what); !s) return s.error();
    if (r > 0) one_way.push_back(since(start) / 2);
  }
  for (const int rank : busy) {
    const std::string stop = fmt::format("rank {}: stopping busy rank {}", run.env.rank, rank);
    if (auto s = wait_work(run.group.backend->send(message, rank, kStopTag), run.group.timeout, stop); !s) return s.error();
  }
  return summarize_timings(std::move(one_way)).median_ns;
}

// Device 1's rank: answers each message at once.
sched::Status answer(RankRun& run, int peer, int repetitions) {
  std::vector<at::Tensor> message{torch::zeros({1}, torch::kFloat)};
  const std::string what = fmt::format("rank {}: answering rank {}'s wake-up timing", run.env.rank, peer);
  for (int r = 0; r <= repetitions; ++r) {
    if (auto s = wait_work(run.group.backend->recv(message, peer, kProbeTag), run.group.timeout, what); !s) return s;
    if (auto s = wait_work(run.group.backend->send(message, peer, kProbeTag), run.group.timeout, what); !s) return s;
  }
  return sched::Ok{};
}

// Every other rank: a thread computes (matrix products on the intra-op threads, as the steps do)
// while this one waits for the word to stop (a Gloo receive completes only in its wait).
sched::Status stay_busy(RankRun& run, int from) {
  std::atomic<bool> stop{false};
  std::thread busy([&stop] {
    const at::Tensor operand = torch::rand({256, 256});
    while (!stop.load(std::memory_order_relaxed)) (void)torch::mm(operand, operand);
  });
  const std::string what = fmt::format("rank {}: waiting for rank {} to end the wake-up timing", run.env.rank, from);
  sched::Status told = sched::Ok{};
  try {
    std::vector<at::Tensor> message{torch::zeros({1}, torch::kFloat)};
    told = wait_work(run.group.backend->recv(message, from, kStopTag), run.group.timeout, what);
  } catch (const std::exception& e) {
    told = sched::Error{fmt::format("{}: {}", what, describe_c10d_exception(e))};
  }
  stop = true;
  busy.join();
  return told;
}

}  // namespace

bool probes_core_slice(int processes, int threads, int cores, int pipeline_ranks) {
  return pipeline_ranks >= 2 && processes * threads > cores;
}

sched::Result<std::optional<sched::Nanoseconds>> probe_core_slice(RankRun& run, int repetitions,
                                                                  sched::Nanoseconds idle_one_way_ns) {
  // Rank 0's core count for all: the decision must be the same on every rank.
  auto cores = exchange_all(run.group, "core-slice-cores", std::to_string(run.machine_cpus.size()));
  if (!cores) return cores.error();
  const sim::ParallelLayout& layout = run.place.layout;
  if (!probes_core_slice(run.env.world_size, run.executor->threads_per_worker(), std::stoi(cores->front()), layout.pp)) {
    return std::optional<sched::Nanoseconds>();
  }
  const int first = sim::rank_of(layout, {0, 0, 0});
  const int second = sim::rank_of(layout, {0, 0, 1});
  if (run.env.rank == second) {
    if (auto s = answer(run, first, repetitions); !s) return s.error();
    return std::optional<sched::Nanoseconds>();
  }
  if (run.env.rank != first) {
    if (auto s = stay_busy(run, first); !s) return s.error();
    return std::optional<sched::Nanoseconds>();
  }
  std::vector<int> busy;
  for (int r = 0; r < run.env.world_size; ++r) {
    if (r != first && r != second) busy.push_back(r);
  }
  auto one_way = time_woken_handoff(run, second, busy, repetitions);
  if (!one_way) return one_way.error();
  return std::optional<sched::Nanoseconds>(2 * std::max<sched::Nanoseconds>(0, *one_way - idle_one_way_ns));
}

}  // namespace pipeworks::hw
