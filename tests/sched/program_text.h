// A program as one line of action strings, "0F0 0SEND_F0 0B0": how the sched tests state the
// pictures of passes and generators.
#pragma once

#include <string>

#include "sched/schedule.h"

namespace pipeworks::sched::testing {

inline std::string program_text(const Program& program) {
  std::string out;
  for (const Action& a : program) {
    if (!out.empty()) out += ' ';
    out += to_string(a);
  }
  return out;
}

}  // namespace pipeworks::sched::testing
