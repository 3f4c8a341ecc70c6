// The run configuration summary ranks compare at the rendezvous (see run_agreement.h).
#include "hw/dist/run_agreement.h"

#include <functional>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sched/json_io.h"

namespace pipeworks::hw {
namespace {

std::string joined(const std::vector<int>& values) {
  std::string out;
  for (int v : values) {
    if (!out.empty()) out += ',';
    out += std::to_string(v);
  }
  return out;
}

// (field, value) in summary order; a value holds no newline (the schedule file by a hash).
std::vector<std::pair<std::string, std::string>> fields(const RunConfig& c, const DistributedOptions& o) {
  const ModelConfig& m = c.model;
  const std::string given = c.given_schedule ? std::to_string(std::hash<std::string>{}(sched::to_json(*c.given_schedule))) : "";
  return {{"--model", model_display_name(m)},
          {"--seed", std::to_string(m.seed)},
          {"--dropout", fmt::format("{}", m.dropout)},
          {"--depth", std::to_string(m.depth)},
          {"--width", std::to_string(m.width)},
          {"--layers", std::to_string(m.layers)},
          {"--seq-len", std::to_string(m.seq_len)},
          {"--model-width", std::to_string(m.model_width)},
          {"--heads", std::to_string(m.heads)},
          {"--ff-width", std::to_string(m.ff_width)},
          {"--vocab", std::to_string(m.vocab)},
          {"--conv-blocks", std::to_string(m.conv_blocks)},
          {"--channels", std::to_string(m.channels)},
          {"--image-size", std::to_string(m.image_size)},
          {"--input-high", std::to_string(m.scripted.input_high)},
          {"--data", m.scripted.data_path},
          {"-K (--stages)", std::to_string(c.num_stages)},
          {"-M (--microbatches)", std::to_string(c.num_microbatches)},
          {"--batch", std::to_string(c.batch_size)},
          {"--schedule", std::string(sched::schedule_kind_name(c.schedule))},
          {"--schedule-file (contents)", given},
          {"--virtual-stages", std::to_string(c.virtual_stages)},
          {"--dp", std::to_string(c.data_parallel)},
          {"--tp", std::to_string(c.tensor_parallel)},
          {"--zero", std::string(sim::zero_stage_name(c.zero))},
          {"--rank-order", std::string(sim::rank_order_name(c.rank_order))},
          {"--recompute", c.recompute ? "on" : "off"},
          {"--placement", joined(c.placement)},
          {"--partition", c.partition.text},
          {"--steps", std::to_string(c.steps)},
          {"--check", c.check ? "on" : "off"},
          {"--check-finite", c.check_finite ? "on" : "off"},
          {"--optimizer", std::to_string(static_cast<int>(c.optimizer.kind))},
          {"--lr", fmt::format("{}", c.optimizer.learning_rate)},
          {"--device", std::string(device_kind_name(c.device))},
          {"--backend", std::string(backend_name(o.backend))},
          {"--timeout", std::to_string(o.timeout.count()) + " ms"}};
}

// "field=value" lines into (field, value).
std::vector<std::pair<std::string, std::string>> parsed(const std::string& summary) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(summary);
  for (std::string line; std::getline(in, line);) {
    const std::size_t eq = line.find('=');
    if (eq != std::string::npos) out.emplace_back(line.substr(0, eq), line.substr(eq + 1));
  }
  return out;
}

}  // namespace

std::string run_config_summary(const RunConfig& config, const DistributedOptions& options) {
  std::string out;
  for (const auto& [field, value] : fields(config, options)) out += field + "=" + value + "\n";
  return out;
}

std::optional<std::string> first_difference(const std::string& mine, const std::string& theirs, int their_rank) {
  const auto a = parsed(mine);
  const auto b = parsed(theirs);
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i].first != b[i].first) return fmt::format("rank {} runs another version of pipeworks", their_rank);
    if (a[i].second != b[i].second) {
      return fmt::format("{} is {} here but {} on rank {}", a[i].first, a[i].second.empty() ? "not given" : a[i].second,
                         b[i].second.empty() ? "not given" : b[i].second, their_rank);
    }
  }
  if (a.size() != b.size()) return fmt::format("rank {} runs another version of pipeworks", their_rank);
  return std::nullopt;
}

}  // namespace pipeworks::hw
