// The layout flags' one declaration (see layout_flags.h).
#include "cli/layout_flags.h"

#include <fmt/format.h>

#include "cli/arg_checks.h"
#include "sched/limits.h"
#include "sim/spec/int_ranges.h"
#include "sim/spec/model_spec.h"
#include "sim/spec/units.h"
#include "sim/spec/zero_sharding.h"

namespace pipeworks::cli {
namespace {

constexpr const char* kDpHelp = "Data-parallel replicas of the pipeline (each on its own devices)";
constexpr const char* kZeroHelp =
    "Sharding over the replicas: 0 none (DDP), 1 optimizer state (Megatron's distributed optimizer), 2 + gradients, "
    "3 + parameters (FSDP)";

constexpr const char* kTpHelp =
    "Tensor-parallel ranks of each pipeline rank, inside a node (Megatron-style: each block's GEMMs split, two "
    "all-reduces forward and two backward); needs a model whose layers say how they split (the gpt presets)";
constexpr const char* kSequenceParallelHelp =
    "Sequence parallelism beside tensor parallelism: the activations outside the GEMMs are split too, the all-reduces "
    "become reduce-scatter + all-gather (Korthikanti et al. 2022)";

constexpr const char* kTpOverlapHelp =
    "Tensor-parallel collectives overlap their layer's GEMMs (Megatron's --tp-comm-overlap): a pass pays only what "
    "they take beyond its compute";

void add_tensor_parallel_flags(CLI::App& command, bool& sequence_parallel, bool& overlap) {
  command.add_flag("--sequence-parallel", sequence_parallel, kSequenceParallelHelp);
  command.add_flag("--tp-comm-overlap", overlap, kTpOverlapHelp);
}

void add_rank_order_flag(CLI::App& command, ReplicaArgs& args) {
  command.add_option("--rank-order", args.rank_order,
                     "How ranks are numbered onto devices: tp-dp-pp (Megatron-LM's default: a data-parallel group "
                     "on neighbouring devices) or tp-pp-dp (a pipeline on neighbouring devices)")
      ->check(CLI::IsMember(std::vector<std::string>{"tp-dp-pp", "tp-pp-dp"}))
      ->capture_default_str();
}

void add_replica_flags(CLI::App& command, ReplicaArgs& args) {
  add_rank_order_flag(command, args);
  command.add_option("--grad-bucket", args.grad_bucket,
                     "Gradients are reduced in buckets of this size, each once its gradients are ready (DDP's "
                     "bucket_cap_mb)")
      ->capture_default_str();
  command.add_flag("--no-overlap-grad-reduce", args.no_overlap_grad_reduce,
                   "Reduce a stage's gradients after its last backward, holding its device (no overlap)");
}

sched::Result<sim::RankOrder> rank_order_from(const ReplicaArgs& args) {
  auto order = sim::parse_rank_order(args.rank_order);
  if (!order) return sched::Error{fmt::format("--rank-order: {}", order.error().message)};
  return order;
}

void add_dp_zero_flags(CLI::App& command, LayoutArgs& args) {
  command.add_option("--dp", args.dp, kDpHelp)->check(integer_from(1, sched::kMaxStages))->capture_default_str();
  command.add_option("--zero", args.zero, kZeroHelp)
      ->check(CLI::IsMember(std::vector<std::string>{"0", "1", "2", "3"}))
      ->capture_default_str();
}

}  // namespace

void add_layout_flags(CLI::App& command, LayoutArgs& args) {
  command.add_option("--tp", args.tp, kTpHelp)->check(integer_from(1, sim::kMaxTensorParallel))->capture_default_str();
  add_tensor_parallel_flags(command, args.sequence_parallel, args.tp_comm_overlap);
  add_dp_zero_flags(command, args);
  add_replica_flags(command, args.replicas);
}

void add_run_layout_flags(CLI::App& command, LayoutArgs& args) {
  command.add_option("--tp", args.tp,
                     "Tensor-parallel ranks of each pipeline rank (with --distributed; Megatron-style column- and "
                     "row-parallel linears of the mlp and the transformer, docs/tensor_parallel.md)")
      ->check(integer_from(1, sim::kMaxTensorParallel))
      ->capture_default_str();
  add_dp_zero_flags(command, args);
  add_rank_order_flag(command, args.replicas);
}

sched::Result<sim::ParallelLayout> layout_from(const LayoutArgs& args, int pp, int virtual_stages) {
  sim::ParallelLayout layout;
  layout.tp = args.tp;
  layout.pp = pp;
  layout.virtual_stages = virtual_stages;
  layout.dp = args.dp;
  auto zero = sim::parse_zero_stage(args.zero);
  if (!zero) return sched::Error{fmt::format("--zero: {}", zero.error().message)};
  layout.zero = *zero;
  auto order = rank_order_from(args.replicas);
  if (!order) return order.error();
  layout.order = *order;
  if (auto s = sim::check_zero_has_replicas(layout.zero, layout.dp); !s) return s.error();
  if (args.sequence_parallel && args.tp == 1) return sched::Error{"--sequence-parallel needs --tp above 1"};
  if (args.tp_comm_overlap && args.tp == 1) return sched::Error{"--tp-comm-overlap needs --tp above 1"};
  return layout;
}

sched::Result<sim::DataParallelOptions> data_parallel_options_from(const ReplicaArgs& args) {
  sim::DataParallelOptions options;
  auto bucket = sim::parse_bytes(args.grad_bucket);
  if (!bucket) return sched::Error{fmt::format("--grad-bucket: {}", bucket.error().message)};
  if (*bucket < 1) return sched::Error{"--grad-bucket must be at least 1 byte"};
  options.bucket_bytes = *bucket;
  options.overlap_grad_reduce = !args.no_overlap_grad_reduce;
  return options;
}

void add_layout_search_flags(CLI::App& command, LayoutSearchArgs& args, bool with_dp) {
  if (with_dp) {
    command.add_option("--dp", args.dp, std::string(kDpHelp) + "; a list or range, e.g. 1,2,4 or pow2:1..64")
        ->capture_default_str();
  }
  command.add_option("--tp", args.tp,
                     std::string(kTpHelp) + "; a list, e.g. 1,2,4,8" + (with_dp ? " (default 1)" : " (default: every count dividing a node's devices and --devices)"));
  add_tensor_parallel_flags(command, args.sequence_parallel, args.tp_comm_overlap);
  command.add_option("--zero", args.zero, std::string(kZeroHelp) + "; a list, e.g. 0,1 (only rows with dp > 1 shard)")
      ->capture_default_str();
  add_replica_flags(command, args.replicas);
}

sched::Result<LayoutSearch> resolve_layout_search(const LayoutSearchArgs& args) {
  LayoutSearch search;
  auto dp = sim::parse_int_list(args.dp);
  if (!dp) return sched::Error{fmt::format("--dp: {}", dp.error().message)};
  search.dp_counts = std::move(dp).value();
  if (!args.tp.empty()) {
    auto tp = sim::parse_int_list(args.tp);
    if (!tp) return sched::Error{fmt::format("--tp: {}", tp.error().message)};
    search.tp_counts = std::move(tp).value();
  }
  search.sequence_parallel = args.sequence_parallel;
  search.tp_comm_overlap = args.tp_comm_overlap;
  auto names = sim::parse_name_list(args.zero, {"0", "1", "2", "3"});
  if (!names) return sched::Error{fmt::format("--zero: {}", names.error().message)};
  for (const auto name : *names) search.zero_stages.push_back(sim::parse_zero_stage(name).value());
  auto order = rank_order_from(args.replicas);
  if (!order) return order.error();
  search.rank_order = *order;
  auto options = data_parallel_options_from(args.replicas);
  if (!options) return options.error();
  search.options = *options;
  return search;
}

}  // namespace pipeworks::cli
