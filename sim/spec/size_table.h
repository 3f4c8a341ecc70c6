// How a cost measured at a few micro-batch sizes is read at any size: the rule every spec table
// (model_spec.h) follows, and the kernel-block variant for machines whose kernels run sizes off a
// block of rows (e.g. 4 on AVX-512 BLAS) slower than the curve through the block's multiples.
//
//   block 1:  value |           x        measured sizes (x): exact; between them: the straight
//                   |        x /         line through the two neighbours; outside them: the
//                   |  x---x'            nearest measured value plus per_sample * the distance
//                   +------------------ micro-batch size
//
//   block b:  value |      o        the multiples of b (x) make the smooth curve, by the rule
//                   |   o     x     above; a size n off them (o) adds to the curve the mean
//                   |      x        remainder cost (value - curve) of the measured sizes that
//                   |   x           leave n's remainder mod b, beyond the first multiple; none
//                   +------------   measured: the block-1 rule
#pragma once

#include <cstdint>
#include <vector>

#include "sched/result.h"

namespace pipeworks::sim {

// A value measured at one micro-batch size.
struct SizePoint {
  int size = 1;             // >= 1
  std::int64_t value = 0;   // ns or bytes, >= 0
  friend bool operator==(const SizePoint&, const SizePoint&) = default;
};

// The largest size block a table may declare.
inline constexpr int kMaxSizeBlock = 1024;

// The value at `microbatch_size` from the line fixed + per_sample * size and, when `measured` is
// not empty (sizes strictly increasing), from the table as drawn above with `size_block` (>= 1);
// never below 0. An error when the size is below 1, the block outside 1..kMaxSizeBlock, or the
// arithmetic overflows int64.
sched::Result<std::int64_t> scaled_value(std::int64_t fixed, std::int64_t per_sample,
                                         const std::vector<SizePoint>& measured, int microbatch_size,
                                         int size_block = 1);

// Checks sizes >= 1 and strictly increasing, values >= 0.
sched::Status check_size_points(const std::vector<SizePoint>& measured);

// How well `size_block` reads a table: the mean |relative error| of each inner size (neither the
// smallest nor the largest) predicted from the others, as a configuration never profiled is
// predicted. 0 for a table of fewer than 3 sizes; an error as scaled_value's.
sched::Result<double> leave_one_out_error(const std::vector<SizePoint>& measured, std::int64_t per_sample,
                                          int size_block);

// The block a profile writes for a measured table: among the candidates (each > 1) whose every
// remainder the table measures at two sizes or more beyond its first multiple (one alone cannot
// be told from noise), the one with the lowest leave-one-out error when that is under half the
// block-1 rule's; else 1.
int pick_size_block(const std::vector<SizePoint>& measured, std::int64_t per_sample,
                    const std::vector<int>& candidates = {2, 4});

// The block of a sum of two tables: the larger when one divides the other, else 1.
int combined_size_block(int a, int b);

}  // namespace pipeworks::sim
