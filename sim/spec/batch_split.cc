// microbatch_size (see batch_split.h).
#include "sim/spec/batch_split.h"

#include <fmt/format.h>

namespace pipeworks::sim {

sched::Result<int> microbatch_size(int batch_size, int num_microbatches) {
  if (batch_size < 1 || num_microbatches < 1 || batch_size % num_microbatches != 0) {
    return sched::Error{fmt::format("batch size {} must be a positive multiple of the {} micro-batches", batch_size,
                                    num_microbatches)};
  }
  return batch_size / num_microbatches;
}

}  // namespace pipeworks::sim
