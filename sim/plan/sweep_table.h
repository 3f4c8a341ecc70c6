// Sweep rows as files (CSV, JSON) and as aligned tables for people:
//
//   stages  M   mb  schedule  recompute  partition  step      samples/s  bubble  peak      fits
//        8  64  24  1f1b      off        13+12*7    3.06 s        502.1   9.9%  71.3 GiB  yes
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sim/plan/sweep.h"

namespace pipeworks::sim {

// One line per row, header first: the fields of sweep_fields.h but `simulated` (fits is "" when
// not simulated), recompute as off/on, partition as layers per stage ("3,2,3"), bubble_fraction
// with 6 decimals, samples_per_s with 6 significant digits. Fields are quoted as RFC 4180 asks.
std::string sweep_csv(const std::vector<SweepRow>& rows);

// {"rows": [{...every field of sweep_fields.h, numbers as numbers, flags as booleans, partition as
//             boundaries...}],
//  "skipped": {"total", "more_stages_than_devices", "more_stages_than_layers",
//              "microbatches_not_dividing_batch"}}
std::string sweep_json(const SweepResult& result);

// The rows at `indices`, in that order, as an aligned table (header line first): the fields of
// sweep_fields.h that have a heading. The batch column is shown only when `show_batch`, the tp
// column only when a row has tensor parallelism.
std::string rows_table(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& indices,
                       bool show_batch = false);

// "off" / "on".
std::string_view recompute_name(bool recompute);

}  // namespace pipeworks::sim
