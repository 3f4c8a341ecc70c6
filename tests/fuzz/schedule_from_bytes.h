// Schedules decoded from fuzz bytes, for the harnesses of the validator, the simulator and the
// lowering pass: a valid compute-only schedule (every byte string decodes to one), and edits
// that may break it so the invalid neighbourhood is searched too.
#pragma once

#include "sched/schedule.h"
#include "tests/fuzz/byte_source.h"

namespace pipeworks::fuzz {

// Small shapes keep one execution fast (the size limit that turns a hang into a failure).
struct ScheduleLimits {
  int max_stages = 6;
  int max_microbatches = 6;
};

// K and M, a placement (several stages may share a device; devices numbered in order of first
// use), per (stage, micro-batch) a full backward B or I + W and optionally R, and the order: a
// random topological order of the data dependencies, each device's program its subsequence.
// The result validates: a global order of the actions exists, so nothing can deadlock.
sched::Schedule valid_schedule_from_bytes(ByteSource& bytes, const ScheduleLimits& limits = {});

// 0 to 3 edits: swap, move to another device, delete, duplicate, change stage / micro-batch /
// kind of an action, or change K, M or a placement entry. The result may or may not validate.
void mutate_schedule(sched::Schedule& schedule, ByteSource& bytes);

}  // namespace pipeworks::fuzz
