// CommMode's names, parsed where a cluster spec or a flag enters.
#include "sim/spec/comm_mode.h"

#include <string>

#include <fmt/format.h>

namespace pipeworks::sim {

std::string_view comm_mode_name(CommMode mode) {
  switch (mode) {
    case CommMode::kOverlap: return "overlap";
    case CommMode::kBlocking: return "blocking";
    case CommMode::kEager: return "eager";
  }
  return "overlap";
}

sched::Result<CommMode> parse_comm_mode(std::string_view text) {
  if (text == "overlap") return CommMode::kOverlap;
  if (text == "blocking") return CommMode::kBlocking;
  if (text == "eager") return CommMode::kEager;
  return sched::Error{
      fmt::format("unknown comm mode '{}' (expected overlap, blocking or eager)", text),
      std::nullopt};
}

}  // namespace pipeworks::sim
