// Pass 1 of building an op table: where every action of a schedule is.
#include "sim/op_index.h"

#include <algorithm>

namespace pipeworks::sim::detail {

Located locate_actions(const sched::Schedule& schedule, const std::vector<std::int32_t>& device_begin) {
  Located out{FlatIndex(schedule.num_stages, schedule.num_microbatches), {}, schedule.num_actions()};
  std::vector<std::size_t> repeated;
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) {
    const sched::Program& program = schedule.programs[d];
    const auto begin = static_cast<std::size_t>(device_begin[d]);
    const std::size_t size = program.size();
    for (std::size_t p = 0; p < size; ++p) {
      if (!out.index.in_range(program[p])) {
        out.first_out_of_range = std::min(out.first_out_of_range, begin + p);
        continue;
      }
      out.kinds_present |= 1U << sched::kind_index(program[p].kind);
      out.num_sends += sched::is_send(program[p].kind) ? 1 : 0;
      const std::size_t slot = out.index.slot(program[p]);
      std::int32_t& op = out.index.at(slot);
      if (op < 0) {
        op = static_cast<std::int32_t>(begin + p);
      } else {
        repeated.push_back(slot);
      }
    }
  }
  if (!repeated.empty()) {
    out.is_repeated.assign(static_cast<std::size_t>(schedule.num_stages) *
                               static_cast<std::size_t>(schedule.num_microbatches) * kKinds,
                           0);
    for (const std::size_t slot : repeated) out.is_repeated[slot] = 1;
  }
  return out;
}

}  // namespace pipeworks::sim::detail
