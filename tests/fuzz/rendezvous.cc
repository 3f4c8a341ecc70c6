// The rendezvous executor of rendezvous.h: repeated sweeps over the devices until none moves.
#include "tests/fuzz/rendezvous.h"

#include <vector>

#include <fmt/format.h>

#include "sched/action_index.h"
#include "sched/dependencies.h"

namespace pipeworks::fuzz {
namespace {

using sched::Action;

struct Run {
  const sched::Schedule& schedule;
  const sched::ActionIndex& index;
  std::vector<std::size_t> next;              // per device: position of its next action
  std::vector<std::vector<char>> done;        // per device and position

  bool ran(const Action& a) const {
    const auto at = index.find(a);
    return !at || done[static_cast<std::size_t>(at->device)][static_cast<std::size_t>(at->position)] != 0;
  }
  // A compute action or a SEND whose producer ran; a RECV's only dependency is its own SEND.
  bool data_ready(const Action& a) const {
    if (sched::is_recv(a.kind)) return true;
    for (const Action& dep : sched::data_dependencies(a, index, schedule.num_stages)) {
      if (!ran(dep)) return false;
    }
    return true;
  }
  void finish(std::size_t device) {
    done[device][next[device]] = 1;
    ++next[device];
  }
  // Runs device d's next action if it can; true when something ran.
  bool step(std::size_t d) {
    const sched::Program& program = schedule.programs[d];
    if (next[d] >= program.size()) return false;
    const Action& a = program[next[d]];
    if (!data_ready(a)) return false;
    if (!sched::is_comm(a.kind)) {  // compute, or a stage-level action
      finish(d);
      return true;
    }
    const auto peer = sched::comm_peer(a, schedule.num_stages);
    const auto at = peer ? index.find(*peer) : std::nullopt;
    if (!at) return false;  // an unmatched half never completes
    const auto pd = static_cast<std::size_t>(at->device);
    if (pd == d || next[pd] != static_cast<std::size_t>(at->position)) return false;
    if (!data_ready(schedule.programs[pd][next[pd]])) return false;
    finish(d);
    finish(pd);
    return true;
  }
};

}  // namespace

sched::Status run_rendezvous(const sched::Schedule& schedule) {
  auto index = sched::ActionIndex::build(schedule);
  if (!index) return index.error();
  const auto num_devices = static_cast<std::size_t>(schedule.num_devices());
  Run run{schedule, *index, std::vector<std::size_t>(num_devices, 0), {}};
  for (const sched::Program& program : schedule.programs) run.done.emplace_back(program.size(), 0);
  for (bool moved = true; moved;) {
    moved = false;
    for (std::size_t d = 0; d < num_devices; ++d) {
      while (run.step(d)) moved = true;
    }
  }
  std::string blocked;
  for (std::size_t d = 0; d < num_devices; ++d) {
    if (run.next[d] < schedule.programs[d].size()) {
      blocked += fmt::format("{}d{} at {} ({})", blocked.empty() ? "" : ", ", d, run.next[d],
                             sched::to_string(schedule.programs[d][run.next[d]]));
    }
  }
  if (!blocked.empty()) return sched::Error{fmt::format("rendezvous execution stops: {}", blocked)};
  return sched::Ok{};
}

}  // namespace pipeworks::fuzz
