// Interleaved zero-bubble device programs (see interleaved_zero_bubble.h).
#include "sched/interleaved_zero_bubble.h"

#include <algorithm>

#include <fmt/format.h>

#include "sched/virtual_stages.h"

namespace pipeworks::sched {
namespace {

// torch's rounds: max(1, M / p) of them, M / rounds micro-batches each; M must split evenly.
Result<ChunkRounds> rounds_of(const ScheduleShape& shape, int virtual_stages) {
  auto p = looped_devices(shape, virtual_stages);
  if (!p) return p.error();
  const int m = shape.num_microbatches;
  const int rounds = std::max(1, m / *p);
  if (m % rounds != 0) {
    return Error{fmt::format("interleaved-zb runs max(1, M / p) = {} rounds of micro-batches on {} devices; {} "
                             "micro-batches do not split into {} equal rounds",
                             rounds, *p, m, rounds)};
  }
  return ChunkRounds{*p, virtual_stages, m / rounds};
}

// Device r: its warm-up forwards, then F, I pairs with each W r backwards behind its I, then the
// remaining I's and W's.
Program device_program(const ChunkRounds& rounds, int num_microbatches, int r) {
  const int total = rounds.chunks * num_microbatches;  // forwards (and backwards) on the device
  const int warmup = std::min((rounds.chunks - 1) * rounds.round + rounds.devices - 1 - r, total);
  const auto action = [&](int k, ActionKind kind) { return interleaved_action(rounds, r, k, kind); };
  Program program;
  for (int k = 0; k < warmup; ++k) program.push_back(action(k, ActionKind::kForward));
  int weights = 0;
  for (int k = 0; k < total; ++k) {
    if (warmup + k < total) program.push_back(action(warmup + k, ActionKind::kForward));
    program.push_back(action(k, ActionKind::kBackwardInput));
    if (k >= r) program.push_back(action(weights++, ActionKind::kBackwardWeight));
  }
  while (weights < total) program.push_back(action(weights++, ActionKind::kBackwardWeight));
  return program;
}

}  // namespace

Result<Schedule> interleaved_zero_bubble(const ScheduleShape& shape, int virtual_stages) {
  auto rounds = rounds_of(shape, virtual_stages);
  if (!rounds) return rounds.error();
  Schedule schedule = looped_schedule(shape, rounds->devices);
  for (int r = 0; r < rounds->devices; ++r) {
    schedule.programs[static_cast<std::size_t>(r)] = device_program(*rounds, shape.num_microbatches, r);
  }
  return schedule;
}

}  // namespace pipeworks::sched
