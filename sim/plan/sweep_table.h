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

// One line per row, header first. Columns: batch, stages, microbatches, microbatch_size,
// schedule, recompute (off/on), partition (layers per stage, "3+2+3"), makespan_ns,
// samples_per_s, bubble_fraction, peak_bytes, peak_device, capacity_bytes (0: none),
// fits (yes/no/"" when not simulated), overflow_bytes, stage_compute_ns, note, partition_note. Fields are quoted as RFC 4180 asks.
std::string sweep_csv(const std::vector<SweepRow>& rows);

// {"rows": [{...same fields as the CSV, numbers as numbers, partition as boundaries...}],
//  "skipped": {"total", "more_stages_than_devices", "more_stages_than_layers",
//              "microbatches_not_dividing_batch"}}
std::string sweep_json(const SweepResult& result);

// The rows at `indices`, in that order, as an aligned table (header line first). A batch
// column is shown only when `show_batch`.
std::string rows_table(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& indices,
                       bool show_batch = false);

// "off" / "on".
std::string_view recompute_name(bool recompute);

// Throughput with 3 decimals below 10, 2 below 100, else 1: "6.104", "42.17", "1234.5".
std::string format_samples_per_s(double samples_per_s);

}  // namespace pipeworks::sim
