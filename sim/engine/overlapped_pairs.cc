// overlap_composites: one shortened B class per (F class, B class) pair (overlapped_pairs.h).
#include "sim/engine/overlapped_pairs.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace pipeworks::sim {

void overlap_composites(const sched::Schedule& schedule, const CostModel& model, OpTable& table) {
  const double share = model.overlapped_pass_share;
  if (share >= 1 || schedule.composites.empty()) return;
  std::map<std::pair<std::int32_t, std::int32_t>, std::int32_t> made;  // (F class, B class) -> shortened B class
  for (const sched::Composite& c : schedule.composites) {
    const auto first = static_cast<std::size_t>(table.device_begin[static_cast<std::size_t>(c.device)] + c.position);
    const std::int32_t f = table.ops[first].op_class;
    Op& b = table.ops[first + 1];
    auto [it, added] = made.try_emplace({f, b.op_class});
    if (added) {
      OpClass shortened = table.classes[static_cast<std::size_t>(b.op_class)];
      const Nanoseconds x = table.classes[static_cast<std::size_t>(f)].duration_ns, y = shortened.duration_ns;
      shortened.duration_ns = y - std::llround((1 - share) * static_cast<double>(std::min(x, y)));
      it->second = static_cast<std::int32_t>(table.classes.size());
      table.classes.push_back(shortened);
    }
    b.op_class = it->second;
  }
}

}  // namespace pipeworks::sim
