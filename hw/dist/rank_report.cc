// Rank step reports: JSON text and the merge on rank 0 (see rank_report.h).
#include "hw/dist/rank_report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sched/dependencies.h"

namespace pipeworks::hw {
namespace {

using nlohmann::json;

}  // namespace

std::string encode_rank_step(const RankStep& step) {
  json j;
  j["rank"] = step.rank;
  j["device"] = step.device;
  j["replica"] = step.replica;
  j["loss_sum"] = step.loss_sum;
  j["peak_activation_bytes"] = step.peak_activation_bytes;
  j["step_ns"] = step.step_ns;
  j["spans"] = json::array();
  for (const sched::Span& s : step.spans) {
    j["spans"].push_back({sched::to_string(s.action), s.start_ns, s.end_ns});
  }
  j["memory"] = json::array();
  for (const sched::MemorySample& m : step.memory) j["memory"].push_back({m.time_ns, m.bytes});
  if (step.check) {
    const GradientCheck& c = *step.check;
    j["check"] = {{"max_abs_diff", c.max_abs_diff}, {"max_rel_diff", c.max_rel_diff},
                  {"exactly_equal", c.exactly_equal}, {"passed", c.passed},
                  {"rtol", c.rtol}, {"atol", c.atol}};
  }
  return j.dump();
}

sched::Result<RankStep> decode_rank_step(const std::string& text) {
  RankStep step;
  try {
    const json j = json::parse(text);
    step.rank = j.at("rank").get<int>();
    step.device = j.at("device").get<int>();
    step.replica = j.at("replica").get<int>();
    step.loss_sum = j.at("loss_sum").get<double>();
    step.peak_activation_bytes = j.at("peak_activation_bytes").get<sched::Bytes>();
    step.step_ns = j.at("step_ns").get<sched::Nanoseconds>();
    for (const json& s : j.at("spans")) {
      auto action = sched::parse_action(s.at(0).get<std::string>());
      if (!action) return sched::Error{fmt::format("rank report: {}", action.error().message)};
      step.spans.push_back({step.device, sched::lane_of(action->kind), *action, s.at(1).get<sched::Nanoseconds>(),
                            s.at(2).get<sched::Nanoseconds>()});
    }
    for (const json& m : j.at("memory")) {
      step.memory.push_back({step.device, m.at(0).get<sched::Nanoseconds>(), m.at(1).get<sched::Bytes>()});
    }
    if (j.contains("check")) {
      const json& c = j.at("check");
      step.check = GradientCheck{c.at("max_abs_diff").get<double>(), c.at("max_rel_diff").get<double>(),
                                 c.at("exactly_equal").get<bool>(),  c.at("passed").get<bool>(),
                                 c.at("rtol").get<double>(),         c.at("atol").get<double>()};
    }
  } catch (const json::exception& e) {
    return sched::Error{fmt::format("rank report: {}", e.what())};
  }
  return step;
}

sched::Result<MergedStep> merge_rank_steps(const std::vector<RankStep>& steps, const sched::Schedule& schedule,
                                           int step, int batch_size, int replicas, int tensor_ranks) {
  const auto devices = static_cast<std::size_t>(schedule.num_devices());
  if (replicas < 1 || tensor_ranks < 1 ||
      steps.size() != devices * static_cast<std::size_t>(replicas) * static_cast<std::size_t>(tensor_ranks)) {
    return sched::Error{fmt::format("{} rank reports for {} tensor ranks x {} devices x {} replicas", steps.size(),
                                    tensor_ranks, devices, replicas)};
  }
  MergedStep merged;
  sched::Timeline& t = merged.timeline;
  t.name = "measured";
  t.num_devices = schedule.num_devices();
  t.num_stages = schedule.num_stages;
  t.num_microbatches = schedule.num_microbatches;
  merged.stats.step = step;
  merged.stats.peak_activation_bytes.assign(devices, 0);
  std::map<sched::Action, std::size_t> recv_span;
  double loss_sum = 0;
  for (std::size_t r = 0; r < steps.size(); ++r) {
    const RankStep& s = steps[r];
    if (s.rank != static_cast<int>(r)) return sched::Error{fmt::format("report {} comes from rank {}", r, s.rank)};
    if (s.device < 0 || static_cast<std::size_t>(s.device) >= devices || s.replica < 0 || s.replica >= replicas) {
      return sched::Error{fmt::format("rank {} reports device {} of replica {}", r, s.device, s.replica)};
    }
    const bool tensor_rank0 = static_cast<int>(r) % tensor_ranks == 0;
    if (tensor_rank0) loss_sum += s.loss_sum;
    merged.stats.step_ns = std::max(merged.stats.step_ns, s.step_ns);
    auto& peak = merged.stats.peak_activation_bytes[static_cast<std::size_t>(s.device)];
    peak = std::max(peak, s.peak_activation_bytes);
    if (s.check) merge_check(merged.check, *s.check);
    if (s.replica != 0 || !tensor_rank0) continue;
    for (const sched::Span& span : s.spans) {
      if (sched::is_recv(span.action.kind)) recv_span.emplace(span.action, t.spans.size());
      t.spans.push_back(span);
    }
    t.memory.insert(t.memory.end(), s.memory.begin(), s.memory.end());
  }
  for (std::size_t i = 0; i < t.spans.size(); ++i) {
    if (!sched::is_send(t.spans[i].action.kind)) continue;
    const auto peer = sched::comm_peer(t.spans[i].action, schedule.num_stages);
    if (!peer) continue;
    if (auto it = recv_span.find(*peer); it != recv_span.end()) t.flows.push_back({i, it->second});
  }
  merged.stats.loss = loss_sum / (static_cast<double>(schedule.num_microbatches) * replicas);
  merged.stats.samples_per_s =
      merged.stats.step_ns > 0 ? batch_size * 1e9 / static_cast<double>(merged.stats.step_ns) : 0;
  merged.stats.bubble_fraction = sched::compute_stats(t).bubble_fraction;
  return merged;
}

}  // namespace pipeworks::hw
