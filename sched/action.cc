// Names, printing and strict parsing of actions.
#include "sched/action.h"

#include <charconv>
#include <limits>

#include <fmt/format.h>

namespace pipeworks::sched {
namespace {

constexpr std::array<std::string_view, kNumActionKinds> kKindNames = {
    "F", "B", "I", "W", "R", "SEND_F", "RECV_F", "SEND_B", "RECV_B", "UNSHARD", "RESHARD", "REDUCE_GRAD"};

// Reads a non-negative decimal int starting at `pos`; advances `pos` past the digits.
Result<int> read_index(std::string_view token, std::size_t& pos, std::string_view what) {
  const std::size_t begin = pos;
  while (pos < token.size() && token[pos] >= '0' && token[pos] <= '9') ++pos;
  if (pos == begin) {
    if (begin < token.size() && (token[begin] == '-' || token[begin] == '+')) {
      return Error{fmt::format("{} index in '{}' must be a non-negative integer without a sign", what, token),
                   begin};
    }
    return Error{fmt::format("expected a {} index in '{}'", what, token), begin};
  }
  int value = 0;
  const auto [ptr, ec] = std::from_chars(token.data() + begin, token.data() + pos, value);
  if (ec == std::errc::result_out_of_range) {
    return Error{fmt::format("{} index '{}' in '{}' is out of range (at most {})", what,
                             token.substr(begin, pos - begin), token, std::numeric_limits<int>::max()),
                 begin};
  }
  if (ec != std::errc() || ptr != token.data() + pos) {
    return Error{fmt::format("bad {} index in '{}'", what, token), begin};
  }
  return value;
}

// Reads the kind's capital letters and underscores starting at `pos`; advances `pos` past them.
Result<ActionKind> read_kind(std::string_view token, std::size_t& pos) {
  const std::size_t begin = pos;
  while (pos < token.size() && ((token[pos] >= 'A' && token[pos] <= 'Z') || token[pos] == '_')) ++pos;
  if (pos == begin) return Error{fmt::format("expected an action kind after the stage in '{}'", token), begin};
  const std::string_view text = token.substr(begin, pos - begin);
  auto kind = parse_kind(text);
  if (kind) return kind;
  if (text == kOverlapKindName) {
    return Error{fmt::format("{} in '{}' is a composite action, written as (0F3;3B1){}", text, token, text), begin};
  }
  return Error{fmt::format("{} in '{}'", kind.error().message, token), begin};
}

}  // namespace

std::string_view kind_name(ActionKind kind) { return kKindNames.at(static_cast<std::size_t>(kind)); }

Result<ActionKind> parse_kind(std::string_view text) {
  for (std::size_t i = 0; i < kKindNames.size(); ++i) {
    if (kKindNames[i] == text) return static_cast<ActionKind>(i);
  }
  return Error{fmt::format("unknown action kind '{}' (expected one of F, B, I, W, R, SEND_F, RECV_F, "
                           "SEND_B, RECV_B, UNSHARD, RESHARD, REDUCE_GRAD)",
                           text),
               0};
}

std::string to_string(const Action& action) {
  if (is_stage_level(action.kind)) return fmt::format("{}{}", action.stage, kind_name(action.kind));
  return fmt::format("{}{}{}", action.stage, kind_name(action.kind), action.microbatch);
}

Result<Action> parse_action(std::string_view token) {
  if (token.empty()) return Error{"empty action", 0};
  std::size_t pos = 0;
  auto stage = read_index(token, pos, "stage");
  if (!stage) return stage.error();
  auto kind = read_kind(token, pos);
  if (!kind) return kind.error();
  int microbatch = 0;
  if (is_stage_level(*kind)) {
    if (pos < token.size() && token[pos] >= '0' && token[pos] <= '9') {
      return Error{fmt::format("{} in '{}' is a stage-level action and takes no micro-batch", kind_name(*kind), token),
                   pos};
    }
  } else {
    auto index = read_index(token, pos, "micro-batch");
    if (!index) return index.error();
    microbatch = *index;
  }
  if (pos != token.size()) {
    return Error{fmt::format("unexpected trailing text '{}' in action '{}'", token.substr(pos), token), pos};
  }
  return Action{*stage, *kind, microbatch};
}

}  // namespace pipeworks::sched
