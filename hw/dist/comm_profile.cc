// The run's communication measured by its ranks (see comm_profile.h).
#include "hw/dist/comm_profile.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "hw/dist/core_slice_probe.h"
#include "hw/dist/replica_checks.h"
#include "hw/model/training.h"
#include "hw/predict/cache_sweep.h"
#include "hw/predict/cost_fit.h"
#include "hw/predict/tensor_parallel_profile.h"
#include "sim/engine/collectives.h"
#include "sim/spec/batch_split.h"

namespace pipeworks::hw {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// A tag no hand-off of the transport uses (its tags count up from 0: c10d_transport.h).
constexpr int kBounceTag = std::numeric_limits<int>::max() - 1;

std::int64_t since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

struct Bounce {
  std::int64_t one_way_ns = 0;  // median round trip / 2
  std::int64_t post_ns = 0;     // median time the send call held this rank (what SEND holds)
};

// `bytes` between this rank and `peer`, `first` sending first; R round trips after one untimed.
sched::Result<Bounce> bounce(C10dGroup& group, int peer, bool first, sched::Bytes bytes, int repetitions) {
  std::vector<at::Tensor> message{torch::zeros({std::max<std::int64_t>(1, bytes / 4)}, torch::kFloat)};
  const std::string what = fmt::format("rank {}: timing the hand-off with rank {}", group.env.rank, peer);
  std::vector<std::int64_t> trips, posts;
  for (int r = 0; r <= repetitions; ++r) {
    const Clock::time_point start = Clock::now();
    for (int leg = 0; leg < 2; ++leg) {
      const bool sending = (leg == 0) == first;
      const Clock::time_point posting = Clock::now();
      auto work = sending ? group.backend->send(message, peer, kBounceTag) : group.backend->recv(message, peer, kBounceTag);
      if (sending && r > 0) posts.push_back(since(posting));
      if (auto done = wait_work(work, group.timeout, what); !done) return done.error();
    }
    if (r > 0) trips.push_back(since(start));
  }
  return Bounce{summarize_timings(std::move(trips)).median_ns / 2, summarize_timings(std::move(posts)).median_ns};
}

// R all-reduces of `bytes` over `group` after one untimed; their mean (a step runs dozens).
sched::Result<std::int64_t> time_all_reduce(TensorParallelGroup& group, sched::Bytes bytes, int repetitions) {
  torch::Tensor buffer = torch::zeros({std::max<std::int64_t>(1, bytes / 4)}, torch::kFloat);
  std::vector<std::int64_t> samples;
  try {
    for (int r = 0; r <= repetitions; ++r) {
      const Clock::time_point start = Clock::now();
      group.all_reduce_sum(buffer);
      if (r > 0) samples.push_back(since(start));
    }
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("timing the tensor-parallel all-reduce: {}", e.what())};
  }
  // The mean (a step runs dozens): the all-reduce over Gloo is bimodal on a shared machine, and a
  // median of R lands in one mode or the other.
  return summarize_timings(std::move(samples)).mean_ns;
}

// Replica 0's tensor group of device 0 times its all-reduce at 4 bytes and at the largest buffer
// its layers all-reduce, the two in `rounds` rounds in turn, each size's median round kept (one
// round of each gave 0.5-0.9 ms and 1.5-3.3 ms in three runs a minute apart: bench/README.md,
// "ranks bound to cores"); its tensor rank 0 returns [latency ns, bandwidth B/s, bytes, small
// ns, large ns] (sim::ring_all_reduce_link), every other rank null.
sched::Result<json> time_tensor_all_reduce(RankRun& run, int repetitions, int rounds) {
  const sim::ParallelLayout& layout = run.place.layout;
  if (layout.tp < 2 || run.place.replica != 0 || run.place.device != 0) return json();
  auto microbatch = sim::microbatch_size(run.config.batch_size, run.config.num_microbatches * run.config.data_parallel);
  if (!microbatch) return microbatch.error();
  auto counted = count_layer_collectives(run.config.model, layout.tp, *microbatch);
  if (!counted) return counted.error();
  sched::Bytes largest = 8;
  for (const LayerCollectives& c : *counted) largest = std::max(largest, c.bytes);
  std::vector<std::int64_t> small_rounds, large_rounds;
  for (int r = 0; r < std::max(1, rounds); ++r) {
    auto small = time_all_reduce(*run.tensor_parallel.group, 4, repetitions);
    if (!small) return small.error();
    small_rounds.push_back(*small);
    auto large = time_all_reduce(*run.tensor_parallel.group, largest, repetitions);
    if (!large) return large.error();
    large_rounds.push_back(*large);
  }
  const std::int64_t small = summarize_timings(small_rounds).median_ns;
  const std::int64_t large = summarize_timings(large_rounds).median_ns;
  auto link = sim::ring_all_reduce_link(layout.tp, 4, small, largest, large);
  if (!link) return link.error();
  if (run.place.tensor_rank != 0) return json();
  return json::array({link->latency_ns, link->bandwidth_bytes_per_s, largest, small, large});
}

// Replica 0's ranks of devices 0 and 1 fit one way = o + latency + bytes / bandwidth at 4 bytes
// and the largest hand-off, o the send overhead at the largest; other ranks skip. Each size is
// timed in `rounds` rounds taken in turn (4 bytes, largest, 4 bytes, ...) and keeps its median
// round: a burst of the machine's other work then moves one round, not the fit, where two points
// timed once each gave a largest hand-off of 1.9 ms and a fit that cost every 4 KiB hand-off
// that much (bench/README.md, "ranks bound to cores"). Returns [latency ns, bandwidth B/s, send
// overhead ns, one way at 4 bytes ns] (device 0's view) or null.
sched::Result<json> time_handoff(RankRun& run, int repetitions, int rounds, sched::Bytes largest) {
  const sim::ParallelLayout& layout = run.place.layout;
  if (layout.pp < 2 || run.place.replica != 0 || run.place.device > 1 || run.place.tensor_rank != 0) return json();
  const int peer = sim::rank_of(layout, {0, 0, 1 - run.place.device});
  const std::array<sched::Bytes, 2> sizes = {4, std::max<sched::Bytes>(8, largest)};
  std::array<std::vector<std::int64_t>, 2> one_way, posted;
  for (int r = 0; r < std::max(1, rounds); ++r) {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      auto timed = bounce(run.group, peer, run.place.device == 0, sizes[i], repetitions);
      if (!timed) return timed.error();
      one_way[i].push_back(timed->one_way_ns);
      posted[i].push_back(timed->post_ns);
    }
  }
  std::vector<FitPoint> points;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    points.push_back({static_cast<double>(sizes[i]), static_cast<double>(summarize_timings(one_way[i]).median_ns)});
  }
  std::int64_t overhead = summarize_timings(posted[1]).median_ns;
  auto fit = fit_linear(points);
  if (!fit) return fit.error();
  const double bandwidth = fit->per_sample * 1e15 <= 1.0 ? sim::kUnboundedBandwidth : 1e9 / fit->per_sample;
  overhead = std::clamp<std::int64_t>(overhead, 0, std::max<std::int64_t>(0, std::llround(fit->fixed)));
  return json::array({std::llround(fit->fixed) - overhead, bandwidth, overhead, std::llround(points.front().value)});
}

// The median of R optimizer steps on a scratch copy of `parameters` (gradients of ones), each
// after a sweep of the caches: in a step the optimizer finds its state evicted by the compute.
std::int64_t time_optimizer(const std::vector<at::Tensor>& parameters, const OptimizerConfig& config,
                            int repetitions) {
  CacheSweep sweep(2 * last_level_cache_bytes());
  std::vector<torch::Tensor> scratch;
  for (const at::Tensor& p : parameters) {
    scratch.push_back(p.detach().clone().requires_grad_(true));
    scratch.back().mutable_grad() = torch::ones_like(scratch.back());
  }
  auto optimizer = make_optimizer(scratch, config);
  std::vector<std::int64_t> samples;
  for (int r = 0; r <= repetitions; ++r) {
    sweep.run();
    const Clock::time_point start = Clock::now();
    optimizer->step();
    if (r > 0) samples.push_back(since(start));
  }
  return summarize_timings(std::move(samples)).median_ns;
}

// This rank's stages: {stage: [reduce, gather, optimizer]}; empty on the ranks of other replicas
// (their groups still time their collectives together with replica 0's).
sched::Result<json> time_stages(RankRun& run, int repetitions) {
  json out = json::object();
  for (const auto& [stage, parameters] : replicated_parameters(run.executor->cells(), run.place.device)) {
    StageCommCosts costs;
    if (run.replicas) {
      auto times = run.replicas->time_collectives(stage, repetitions);
      if (!times) return times.error();
      costs.reduce_ns = times->reduce_ns;
      costs.gather_ns = times->gather_ns;
    }
    costs.optimizer_ns = time_optimizer(parameters, run.config.optimizer, repetitions);
    if (run.place.replica == 0 && run.place.tensor_rank == 0) out[std::to_string(stage)] = {costs.reduce_ns, costs.gather_ns, costs.optimizer_ns};
  }
  return out;
}

// Rank 0: every rank's part merged.
sched::Result<CommProfile> merge_parts(const std::vector<std::string>& parts, int stages, sched::Bytes largest) {
  CommProfile profile;
  profile.largest_handoff_bytes = largest;
  profile.stages.assign(static_cast<std::size_t>(stages), StageCommCosts{});
  try {
    for (const std::string& text : parts) {
      const json part = json::parse(text);
      if (part.at("handoff").is_array() && part.at("rank_device").get<int>() == 0) {
        profile.handoff_latency_ns = part.at("handoff").at(0).get<sched::Nanoseconds>();
        profile.handoff_bandwidth_bytes_per_s = part.at("handoff").at(1).get<double>();
        profile.send_overhead_ns = part.at("handoff").at(2).get<sched::Nanoseconds>();
      }
      if (const json& slice = part.at("core_slice"); slice.is_number()) profile.core_slice_ns = slice.get<sched::Nanoseconds>();
      if (const json& tensor = part.at("tensor"); tensor.is_array()) {
        profile.tensor_link = sim::LinkSpec{tensor.at(1).get<double>(), tensor.at(0).get<sched::Nanoseconds>()};
        profile.tensor_bytes = tensor.at(2).get<sched::Bytes>();
        profile.tensor_small_ns = tensor.at(3).get<sched::Nanoseconds>();
        profile.tensor_large_ns = tensor.at(4).get<sched::Nanoseconds>();
      }
      for (const auto& [stage, costs] : part.at("stages").items()) {
        StageCommCosts& c = profile.stages.at(static_cast<std::size_t>(std::stoi(stage)));
        c = {costs.at(0).get<sched::Nanoseconds>(), costs.at(1).get<sched::Nanoseconds>(),
             costs.at(2).get<sched::Nanoseconds>()};
      }
    }
  } catch (const std::exception& e) {
    return sched::Error{fmt::format("communication profile: {}", e.what())};
  }
  return profile;
}

}  // namespace

sched::Result<CommProfile> profile_comm(RankRun& run, int repetitions, int rounds) {
  sched::Bytes largest = 0;
  for (const TensorMeta& meta : run.metas) {
    sched::Bytes bytes = static_cast<sched::Bytes>(c10::elementSize(meta.dtype));
    for (const std::int64_t size : meta.sizes) bytes *= size;
    largest = std::max(largest, bytes);
  }
  auto handoff = time_handoff(run, repetitions, rounds, largest);
  if (!handoff) return rank_error(run.env.rank, handoff.error().message);
  auto slice = probe_core_slice(run, repetitions, handoff->is_array() ? handoff->at(3).get<sched::Nanoseconds>() : 0);
  if (!slice) return rank_error(run.env.rank, slice.error().message);
  auto stages = time_stages(run, repetitions);
  if (!stages) return rank_error(run.env.rank, stages.error().message);
  auto tensor = time_tensor_all_reduce(run, repetitions, rounds);
  if (!tensor) return rank_error(run.env.rank, tensor.error().message);
  const json part = {
      {"handoff", *handoff}, {"stages", *stages}, {"tensor", *tensor}, {"rank_device", run.place.device},
      {"core_slice", *slice ? json(**slice) : json()}};
  auto parts = gather_to_root(run.group, "comm-profile", part.dump());
  if (!parts) return parts.error();
  if (run.env.rank != 0) return CommProfile{};
  return merge_parts(*parts, run.setup.report.schedule.num_stages, largest);
}

}  // namespace pipeworks::hw
