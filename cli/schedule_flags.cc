// The schedule flags' one declaration (see schedule_flags.h).
#include "cli/schedule_flags.h"

#include "cli/arg_checks.h"
#include "cli/renamed_option.h"
#include <fmt/format.h>

#include "sched/generators.h"
#include "sched/limits.h"

namespace pipeworks::cli {

CLI::Option* add_placement_flag(CLI::App& command, std::vector<int>& placement, int max_device) {
  return command.add_option("--placement", placement, "Device of each stage, e.g. 0,1,1,0 (default: stage i on device i)")
      ->delimiter(',')
      ->check(integer_from(0, max_device));
}

ScheduleFlags add_schedule_flags(CLI::App& command, const ScheduleFlagTargets& to, const ScheduleFlagRules& rules) {
  ScheduleFlags flags;
  const char* kind_help = "Schedule kind (zb-v and dualpipe-v: K stages in a V on K/2 devices)";
  const auto kind_checks = [](CLI::Option& o) { o.check(CLI::IsMember(schedule_kind_choices()))->capture_default_str(); };
  if (rules.old_kind_spelling) {
    flags.kind = add_renamed_option(command, "--schedule", "--kind", *to.kind, kind_help, kind_checks);
  } else {
    flags.kind = command.add_option("--schedule", *to.kind, kind_help);
    kind_checks(*flags.kind);
  }
  flags.stages = command.add_option("--stages,-k,-K", *to.stages, "Number of pipeline stages K")
                     ->check(integer_from(1, sched::kMaxStages));
  flags.microbatches = command.add_option("--microbatches,-m,-M", *to.microbatches, "Number of micro-batches M")
                           ->check(integer_from(1, sched::kMaxScheduleCells));
  for (CLI::Option* shape : {flags.stages, flags.microbatches}) {
    if (rules.shape_required) {
      shape->required();
    } else {
      shape->capture_default_str();
    }
  }
  add_placement_flag(command, *to.placement, rules.max_device);
  command
      .add_option("--virtual-stages,-v", *to.virtual_stages,
                  "Stages per device for interleaved-1f1b, looped-bfs and interleaved-zb (K/v devices, stage s on "
                  "device s mod K/v); zb-v and dualpipe-v always have 2 (a V: device r holds stages r and K-1-r)")
      ->check(integer_from(1, sched::kMaxStages))
      ->capture_default_str();
  command.add_flag("--recompute", *to.recompute, "Re-materialize each forward before its backward (R actions)");
  if (to.pipeline_ranks != nullptr) {
    flags.pipeline_ranks =
        command.add_option("--pp", *to.pipeline_ranks,
                           "Pipeline ranks: the devices of one pipeline replica, instead of --stages (K = pp; pp x v "
                           "for the interleaved kinds; 2 pp for zb-v and dualpipe-v)")
            ->check(integer_from(1, sched::kMaxStages));
  }
  return flags;
}

sched::Status resolve_pipeline_ranks(const ScheduleFlags& flags, const ScheduleFlagTargets& to) {
  if (flags.pipeline_ranks == nullptr || flags.pipeline_ranks->count() == 0) return sched::Ok{};
  if (!to.placement->empty()) return sched::Error{"--pp and --placement: give one (--placement places the stages)"};
  auto kind = sched::parse_schedule_kind(*to.kind);
  if (!kind) return kind.error();
  const long long stages = sched::stages_on_devices(*kind, *to.pipeline_ranks, *to.virtual_stages);
  if (stages > sched::kMaxStages) {
    return sched::Error{fmt::format("--pp {}: {} stages is more than {}", *to.pipeline_ranks, stages, sched::kMaxStages)};
  }
  if (flags.stages->count() > 0 && *to.stages != stages) {
    return sched::Error{fmt::format("--pp {} means {} stages for {}, but --stages is {}", *to.pipeline_ranks, stages,
                                    *to.kind, *to.stages)};
  }
  *to.stages = static_cast<int>(stages);
  return sched::Ok{};
}

}  // namespace pipeworks::cli
