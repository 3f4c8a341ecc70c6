// The layout flags' one declaration (see layout_flags.h).
#include "cli/layout_flags.h"

#include <fmt/format.h>

#include "cli/arg_checks.h"
#include "sched/limits.h"
#include "sim/spec/units.h"
#include "sim/spec/zero_sharding.h"

namespace pipeworks::cli {

void add_layout_flags(CLI::App& command, LayoutArgs& args) {
  command.add_option("--dp", args.dp, "Data-parallel replicas of the pipeline (each on its own devices)")
      ->check(integer_from(1, sched::kMaxStages))
      ->capture_default_str();
  command.add_option("--zero", args.zero,
                     "Sharding over the replicas: 0 none (DDP), 1 optimizer state (Megatron's distributed "
                     "optimizer), 2 + gradients, 3 + parameters (FSDP)")
      ->check(CLI::IsMember(std::vector<std::string>{"0", "1", "2", "3"}))
      ->capture_default_str();
  command.add_option("--rank-order", args.rank_order,
                     "How ranks are numbered onto devices: tp-dp-pp (Megatron-LM's default: a data-parallel group "
                     "on neighbouring devices) or tp-pp-dp (a pipeline on neighbouring devices)")
      ->check(CLI::IsMember(std::vector<std::string>{"tp-dp-pp", "tp-pp-dp"}))
      ->capture_default_str();
  command.add_option("--grad-bucket", args.grad_bucket,
                     "Gradients are reduced in buckets of this size, each once its gradients are ready (DDP's "
                     "bucket_cap_mb)")
      ->capture_default_str();
  command.add_flag("--no-overlap-grad-reduce", args.no_overlap_grad_reduce,
                   "Reduce a stage's gradients after its last backward, holding its device (no overlap)");
}

sched::Result<sim::ParallelLayout> layout_from(const LayoutArgs& args, int pp, int virtual_stages) {
  sim::ParallelLayout layout;
  layout.pp = pp;
  layout.virtual_stages = virtual_stages;
  layout.dp = args.dp;
  auto zero = sim::parse_zero_stage(args.zero);
  if (!zero) return sched::Error{fmt::format("--zero: {}", zero.error().message)};
  layout.zero = *zero;
  auto order = sim::parse_rank_order(args.rank_order);
  if (!order) return sched::Error{fmt::format("--rank-order: {}", order.error().message)};
  layout.order = *order;
  if (layout.dp == 1 && layout.zero != sim::ZeroStage::kNone) {
    return sched::Error{fmt::format("--zero {} shards over data-parallel replicas, but --dp is 1", args.zero)};
  }
  return layout;
}

sched::Result<sim::DataParallelOptions> data_parallel_options_from(const LayoutArgs& args) {
  sim::DataParallelOptions options;
  auto bucket = sim::parse_bytes(args.grad_bucket);
  if (!bucket) return sched::Error{fmt::format("--grad-bucket: {}", bucket.error().message)};
  if (*bucket < 1) return sched::Error{"--grad-bucket must be at least 1 byte"};
  options.bucket_bytes = *bucket;
  options.overlap_grad_reduce = !args.no_overlap_grad_reduce;
  return options;
}

}  // namespace pipeworks::cli
