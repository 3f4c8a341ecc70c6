// The flags that lay a pipeline out beside data parallelism -- --dp, --zero, --rank-order,
// --grad-bucket, --no-overlap-grad-reduce -- declared once with one wording and one check each,
// and read into a sim::ParallelLayout and sim::DataParallelOptions (sim/plan/data_parallel.h).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "sched/result.h"
#include "sim/plan/data_parallel.h"
#include "sim/spec/parallel_layout.h"

namespace pipeworks::cli {

struct LayoutArgs {
  int dp = 1;
  std::string zero = "0";
  std::string rank_order = "tp-dp-pp";
  std::string grad_bucket = "25MiB";
  bool no_overlap_grad_reduce = false;
};

void add_layout_flags(CLI::App& command, LayoutArgs& args);

// The layout of `pp` pipeline ranks of `virtual_stages` stages each, replicated as the flags say.
sched::Result<sim::ParallelLayout> layout_from(const LayoutArgs& args, int pp, int virtual_stages);
sched::Result<sim::DataParallelOptions> data_parallel_options_from(const LayoutArgs& args);

}  // namespace pipeworks::cli
