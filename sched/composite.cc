// The text of composite actions (see composite.h).
#include "sched/composite.h"

#include <fmt/format.h>

namespace pipeworks::sched {
namespace {

// The sub-action whose text runs from `begin` to the first of `ends`; `pos` ends on that character.
Result<Action> read_sub_action(std::string_view token, std::size_t begin, std::string_view ends, std::size_t& pos) {
  pos = token.find_first_of(ends, begin);
  if (pos == std::string_view::npos) {
    return Error{fmt::format("unterminated composite action '{}' (expected (0F3;3B1){})", token, kOverlapKindName),
                 token.size()};
  }
  auto action = parse_action(token.substr(begin, pos - begin));
  if (!action) {
    return Error{fmt::format("{} in composite action '{}'", action.error().message, token),
                 begin + action.error().column.value_or(0)};
  }
  return action;
}

}  // namespace

Result<CompositeToken> parse_composite(std::string_view token) {
  if (!is_composite_token(token)) return Error{fmt::format("'{}' is not a composite action", token), 0};
  CompositeToken out;
  std::size_t pos = 0;
  out.columns[0] = 1;
  auto first = read_sub_action(token, out.columns[0], ";)", pos);
  if (!first) return first.error();
  if (token[pos] == ')') {
    return Error{fmt::format("composite action '{}' holds one action; {} overlaps two, as in (0F3;3B1){}", token,
                             kOverlapKindName, kOverlapKindName),
                 pos};
  }
  out.columns[1] = pos + 1;
  auto second = read_sub_action(token, out.columns[1], ";)", pos);
  if (!second) return second.error();
  if (token[pos] == ';') {
    return Error{fmt::format("composite action '{}' holds more than two actions; {} overlaps two", token,
                             kOverlapKindName),
                 pos};
  }
  const std::string_view kind = token.substr(pos + 1);
  if (kind != kOverlapKindName) {
    return Error{fmt::format("unknown composite kind '{}' in '{}' (expected {})", kind, token, kOverlapKindName),
                 pos + 1};
  }
  out.actions = {*first, *second};
  return out;
}

std::string composite_text(const Action& first, const Action& second) {
  return fmt::format("({};{}){}", to_string(first), to_string(second), kOverlapKindName);
}

}  // namespace pipeworks::sched
