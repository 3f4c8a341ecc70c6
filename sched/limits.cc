// The shared schedule size check (see limits.h).
#include "sched/limits.h"

#include <fmt/format.h>

namespace pipeworks::sched {

Status check_schedule_size(std::int64_t stages, std::int64_t microbatches) {
  if (stages < 1) return Error{fmt::format("number of stages must be at least 1, got {}", stages)};
  if (microbatches < 1) return Error{fmt::format("number of micro-batches must be at least 1, got {}", microbatches)};
  if (stages > kMaxStages) return Error{fmt::format("{} stages is more than the limit of {}", stages, kMaxStages)};
  if (microbatches > kMaxScheduleCells / stages) {
    return Error{fmt::format("{} stages x {} micro-batches is more than the limit of {} cells", stages, microbatches,
                             kMaxScheduleCells)};
  }
  return Ok{};
}

}  // namespace pipeworks::sched
