// The flags that lay pipelines out beside data and tensor parallelism, declared once with one
// wording and one check each: how replicas lie and reduce (--rank-order, --grad-bucket,
// --no-overlap-grad-reduce), one layout for `simulate` (--tp N, --dp N, --zero S) and the lists a
// search compares for `sweep` and `plan` (--tp LIST, --dp LIST, --zero LIST). Read into sim::ParallelLayout and
// sim::DataParallelOptions (sim/plan/data_parallel.h).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sched/result.h"
#include "sim/plan/data_parallel.h"
#include "sim/spec/parallel_layout.h"

namespace pipeworks::cli {

struct ReplicaArgs {
  std::string rank_order = "tp-dp-pp";
  std::string grad_bucket = "25MiB";
  bool no_overlap_grad_reduce = false;
};

struct LayoutArgs {
  int tp = 1;
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;
  int dp = 1;
  std::string zero = "0";
  ReplicaArgs replicas;
};

// --tp N, --sequence-parallel, --tp-comm-overlap, --dp N, --zero S and the replica flags.
void add_layout_flags(CLI::App& command, LayoutArgs& args);

// `run`'s: --tp N, --dp N, --zero S (hw::check_run_config refuses what runs do not shard) and
// --rank-order; a run reduces each stage's gradients in one collective (no --grad-bucket).
void add_run_layout_flags(CLI::App& command, LayoutArgs& args);

// The layout of `pp` pipeline ranks of `virtual_stages` stages each, replicated as the flags say.
sched::Result<sim::ParallelLayout> layout_from(const LayoutArgs& args, int pp, int virtual_stages);
sched::Result<sim::DataParallelOptions> data_parallel_options_from(const ReplicaArgs& args);

struct LayoutSearchArgs {
  std::string dp = "1";  // a list; `sweep` only (`plan` uses every dp with tp x pp x dp = N)
  std::string tp;        // a list; empty: 1 for `sweep`, the planner's choice for `plan`
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;
  std::string zero;      // a list; the default is the command's
  ReplicaArgs replicas;
};

// --tp LIST, --sequence-parallel, --tp-comm-overlap, --zero LIST, the replica flags and, `with_dp`,
// --dp LIST.
void add_layout_search_flags(CLI::App& command, LayoutSearchArgs& args, bool with_dp);

struct LayoutSearch {
  std::vector<int> tp_counts;  // empty: the command's default
  bool sequence_parallel = false;
  bool tp_comm_overlap = false;
  std::vector<int> dp_counts;
  std::vector<sim::ZeroStage> zero_stages;
  sim::RankOrder rank_order = sim::RankOrder::kTpDpPp;
  sim::DataParallelOptions options;
};

// Every error is bad usage and names its option.
sched::Result<LayoutSearch> resolve_layout_search(const LayoutSearchArgs& args);

}  // namespace pipeworks::cli
