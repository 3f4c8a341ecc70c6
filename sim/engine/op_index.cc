// Pass 1 of building an op table: where every action of a schedule is.
#include "sim/engine/op_index.h"

#include <algorithm>

namespace pipeworks::sim::detail {

namespace {

// Marks the slots of actions that occur more than once: those whose slot holds another op id
// (the first occurrence's). Kept out of locate_actions' loop, which it would slow for every
// schedule although few have a repeated action.
void mark_repeated(const sched::Schedule& schedule, const std::vector<std::int32_t>& device_begin, Located& out) {
  out.is_repeated.assign(out.index.size(), 0);
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) {
    const sched::Program& program = schedule.programs[d];
    for (std::size_t p = 0; p < program.size(); ++p) {
      if (!out.index.in_range(program[p])) continue;
      const std::size_t slot = out.index.slot(program[p]);
      if (out.index.data()[slot] != device_begin[d] + static_cast<std::int32_t>(p)) out.is_repeated[slot] = 1;
    }
  }
}

}  // namespace

Located locate_actions(const sched::Schedule& schedule, const std::vector<std::int32_t>& device_begin) {
  Located out{FlatIndex(schedule.num_stages, schedule.num_microbatches), {}, schedule.num_actions()};
  // Locals, not members: the loop's int32 stores may alias int members, which the compiler would
  // then reload for every action.
  const auto k = static_cast<unsigned>(schedule.num_stages);
  const auto m = static_cast<unsigned>(schedule.num_microbatches);
  std::int32_t* const slots = out.index.data();
  unsigned kinds_present = 0;
  std::int64_t num_sends = 0;
  std::size_t first_out_of_range = out.first_out_of_range;
  std::size_t repeats = 0;
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) {
    const Action* const program = schedule.programs[d].data();
    const std::size_t size = schedule.programs[d].size();
    const std::int32_t begin = device_begin[d];
    for (std::size_t p = 0; p < size; ++p) {
      const Action a = program[p];
      const auto kind = static_cast<unsigned>(sched::kind_index(a.kind));
      if (static_cast<unsigned>(a.stage) >= k || static_cast<unsigned>(a.microbatch) >= m || kind >= kKinds) {
        if (static_cast<unsigned>(a.stage) >= k || !sched::is_stage_level(a.kind)) {
          first_out_of_range = std::min(first_out_of_range, static_cast<std::size_t>(begin) + p);
        } else {
          out.has_reduce_grad = out.has_reduce_grad || a.kind == sched::ActionKind::kReduceGrad;
        }
        continue;
      }
      kinds_present |= 1U << kind;
      num_sends += sched::is_send(a.kind) ? 1 : 0;
      std::int32_t& op = slots[index_slot(m, a.stage, a.microbatch, kind)];
      if (op < 0) {
        op = begin + static_cast<std::int32_t>(p);
      } else {
        ++repeats;
      }
    }
  }
  out.kinds_present = kinds_present;
  out.num_sends = num_sends;
  out.first_out_of_range = first_out_of_range;
  if (repeats > 0) mark_repeated(schedule, device_begin, out);
  return out;
}

}  // namespace pipeworks::sim::detail
