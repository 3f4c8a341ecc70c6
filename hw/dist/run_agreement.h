// Ranks of one multi-process run must be started with one configuration: ranks with different
// micro-batch counts, schedules or models would each wait for messages the others never send,
// until --timeout, and then fail naming a send, not the cause. So at the rendezvous every rank
// shares a summary of its configuration, and a difference fails the run at once naming the
// field. LibTorch-free (the exchange itself is c10d_group.h's).
#pragma once

#include <optional>
#include <string>

#include "hw/dist/distributed_run.h"

namespace pipeworks::hw {

// One "field=value" line per setting that must agree between ranks (the rank's own variables
// and the output files excepted), fields named as the command line spells them.
std::string run_config_summary(const RunConfig& config, const DistributedOptions& options);

// The first field whose value differs between this rank's summary and another rank's, as
// "-M (--microbatches) is 4 here but 2 on rank 0"; none when they agree.
std::optional<std::string> first_difference(const std::string& mine, const std::string& theirs, int their_rank);

}  // namespace pipeworks::hw
