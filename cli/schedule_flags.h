// The flags that describe one schedule -- its kind, K, M, the placement, virtual stages and
// re-materialization -- declared once, with one wording and one check each, for every command
// that builds one (`schedule`, `simulate`, `run`). A command binds them to its own fields; what
// may differ is whether K and M are required and the largest device --placement may name.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sched/result.h"

namespace pipeworks::cli {

// Where the flags write.
struct ScheduleFlagTargets {
  std::string* kind = nullptr;
  int* stages = nullptr;
  int* microbatches = nullptr;
  std::vector<int>* placement = nullptr;
  int* virtual_stages = nullptr;
  bool* recompute = nullptr;
  int* pipeline_ranks = nullptr;  // when given, the command also takes --pp N
};

struct ScheduleFlagRules {
  bool shape_required = false;  // --stages and --microbatches must be given (no default)
  int max_device;               // the largest device --placement accepts
  bool old_kind_spelling = false;  // also accept --kind for --schedule (renamed_option.h)
};

// The options a command asks later whether they were given.
struct ScheduleFlags {
  CLI::Option* kind = nullptr;
  CLI::Option* stages = nullptr;
  CLI::Option* microbatches = nullptr;
  CLI::Option* pipeline_ranks = nullptr;
};

ScheduleFlags add_schedule_flags(CLI::App& command, const ScheduleFlagTargets& to, const ScheduleFlagRules& rules);

// --placement alone, as add_schedule_flags declares it (for a command with no schedule kind to
// name, `synthesize`): devices 0..max_device, comma-separated, one per stage.
CLI::Option* add_placement_flag(CLI::App& command, std::vector<int>& placement, int max_device);

// After parsing: --pp N turned into the stages (sched::stages_on_devices of the parsed kind and
// virtual stages), written to *to.stages. A usage error when --pp contradicts --stages or comes
// with --placement (which places the stages itself). Nothing when --pp was not given.
sched::Status resolve_pipeline_ranks(const ScheduleFlags& flags, const ScheduleFlagTargets& to);

}  // namespace pipeworks::cli
