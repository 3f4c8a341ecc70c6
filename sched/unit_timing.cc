// Unit-time list execution of a schedule (see unit_timing.h).
#include "sched/unit_timing.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "sched/action_index.h"
#include "sched/cells.h"
#include "sched/dependencies.h"

namespace pipeworks::sched {
namespace {

constexpr std::int64_t kUnknown = std::numeric_limits<std::int64_t>::min();

// An ActionIndex as resolve_dependencies asks it: where the schedule has the action, if it does.
struct Locations {
  const ActionIndex& index;
  std::optional<Location> find(int stage, ActionKind kind, int microbatch) const {
    return index.find(Action{stage, kind, microbatch});
  }
  static bool present(const std::optional<Location>& at) { return at.has_value(); }
};

class UnitRun {
 public:
  UnitRun(const Schedule& schedule, const ActionIndex& index)
      : s_(schedule), index_(index), parts_(cell_parts(schedule)), next_(schedule.programs.size(), 0),
        free_(schedule.programs.size(), 0), next_waiter_(schedule.programs.size(), -1) {
    std::size_t actions = 0;
    for (const Program& program : schedule.programs) {
      timing_.start.emplace_back(program.size(), 0);
      timing_.finish.emplace_back(program.size(), kUnknown);
      first_of_.push_back(actions);
      actions += program.size();
    }
    waiters_head_.assign(actions, -1);
  }

  // Runs every device as far as it can. A device that cannot go on waits on the one action that
  // held it and is woken when that action finishes, so each device is tried once per action it
  // runs plus once per wait: time proportional to the actions, not to devices x steps.
  bool run() {
    std::vector<std::size_t> ready;
    for (std::size_t d = s_.programs.size(); d-- > 0;) ready.push_back(d);
    while (!ready.empty()) {
      const std::size_t d = ready.back();
      ready.pop_back();
      while (step(d, ready)) {
      }
    }
    for (std::size_t d = 0; d < s_.programs.size(); ++d) {
      if (next_[d] < s_.programs[d].size()) return false;
    }
    return true;
  }

  std::string blocked() const {
    std::string text;
    for (std::size_t d = 0; d < s_.programs.size(); ++d) {
      if (next_[d] < s_.programs[d].size()) {
        text += fmt::format("{}device {} waits at position {} ({})", text.empty() ? "" : "; ", d, next_[d],
                            to_string(s_.programs[d][next_[d]]));
      }
    }
    return text;
  }

  UnitTiming take() { return std::move(timing_); }

 private:
  // The step from which `a`'s dependencies are done (not before `ready`), or kUnknown while one
  // has not run (then `blocker` is where it is). A dependency at `inside` (the composite's first
  // sub-action) counts as done; absent ones are satisfied from the start.
  std::int64_t ready_at(const Action& a, std::int64_t ready, std::optional<Location> inside, Location& blocker) const {
    std::array<std::optional<Location>, 2> found;
    int count = 0;
    if (is_recv(a.kind)) {
      if (auto peer = comm_peer(a, s_.num_stages)) found[static_cast<std::size_t>(count++)] = index_.find(*peer);
    } else {
      std::array<ResolvedDependency<std::optional<Location>>, 2> deps;
      count = resolve_dependencies(Locations{index_}, a, s_.num_stages, deps);
      for (int i = 0; i < count; ++i) found[static_cast<std::size_t>(i)] = deps[static_cast<std::size_t>(i)].ref;
    }
    for (int i = 0; i < count; ++i) {
      const std::optional<Location>& loc = found[static_cast<std::size_t>(i)];
      if (!loc || loc == inside) continue;
      const std::int64_t f = timing_.finish[static_cast<std::size_t>(loc->device)][static_cast<std::size_t>(loc->position)];
      if (f == kUnknown) {
        blocker = *loc;
        return kUnknown;
      }
      ready = std::max(ready, f);
    }
    return ready;
  }

  // Device d's waiters on the action at `position`, moved to `ready`.
  void wake(std::size_t d, std::size_t position, std::vector<std::size_t>& ready) {
    std::int32_t& head = waiters_head_[first_of_[d] + position];
    for (std::int32_t w = head; w >= 0; w = next_waiter_[static_cast<std::size_t>(w)]) {
      ready.push_back(static_cast<std::size_t>(w));
    }
    head = -1;
  }

  // Device d waits until the action at `blocker` finishes.
  void wait_on(std::size_t d, const Location& blocker) {
    std::int32_t& head = waiters_head_[first_of_[static_cast<std::size_t>(blocker.device)] +
                                       static_cast<std::size_t>(blocker.position)];
    next_waiter_[d] = head;
    head = static_cast<std::int32_t>(d);
  }

  // Runs device d's next cell (an action, or a composite's two) if it can.
  bool step(std::size_t d, std::vector<std::size_t>& ready_devices) {
    ++timing_.device_steps_tried;
    const Program& program = s_.programs[d];
    const std::size_t p = next_[d];
    if (p >= program.size()) return false;
    const std::size_t size = cell_size(parts_[d][p]);
    std::int64_t ready = free_[d];
    for (std::size_t i = 0; i < size; ++i) {
      const auto inside = i == 1 ? std::optional<Location>(Location{static_cast<int>(d), static_cast<int>(p)}) : std::nullopt;
      Location blocker;
      ready = ready_at(program[p + i], ready, inside, blocker);
      if (ready == kUnknown) {
        wait_on(d, blocker);
        return false;
      }
    }
    std::int64_t at = ready;
    for (std::size_t i = 0; i < size; ++i) {
      timing_.start[d][p + i] = at;
      at += is_compute(program[p + i].kind) ? 1 : 0;
    }
    for (std::size_t i = 0; i < size; ++i) timing_.finish[d][p + i] = at;
    free_[d] = at;
    timing_.num_steps = std::max(timing_.num_steps, at);
    next_[d] = p + size;
    for (std::size_t i = 0; i < size; ++i) wake(d, p + i, ready_devices);
    return true;
  }

  const Schedule& s_;
  const ActionIndex& index_;
  std::vector<std::vector<CellPart>> parts_;
  std::vector<std::size_t> next_;
  std::vector<std::int64_t> free_;
  std::vector<std::size_t> first_of_;        // per device: its first action's place in waiters_head_
  std::vector<std::int32_t> waiters_head_;   // per action: the first device waiting on it, -1 for none
  std::vector<std::int32_t> next_waiter_;    // per device: the next device waiting on the same action
  UnitTiming timing_;
};

}  // namespace

Result<UnitTiming> unit_timing(const Schedule& schedule) {
  auto index = ActionIndex::build(schedule);
  if (!index) return index.error();
  for (std::size_t d = 0; d < schedule.programs.size(); ++d) {
    for (const Action& a : schedule.programs[d]) {
      if (!index->in_range(a)) {
        return Error{fmt::format("action {} on device {} is out of range ({} stages, {} micro-batches)",
                                 to_string(a), d, schedule.num_stages, schedule.num_microbatches)};
      }
    }
  }
  UnitRun run(schedule, *index);
  if (!run.run()) return Error{fmt::format("schedule cannot progress: {}", run.blocked())};
  return run.take();
}

}  // namespace pipeworks::sched
