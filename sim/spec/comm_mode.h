// How a device's transfers share its compute stream (the cluster spec names it, the cost model and
// the engine follow it): one enum and its one spelling as text, below both.
#pragma once

#include <cstdint>
#include <string_view>

#include "sched/result.h"

namespace pipeworks::sim {

enum class CommMode : std::uint8_t {
  kOverlap,   // sends/receives run on a separate stream; compute waits only for the data
  kBlocking,  // a SEND/RECV occupies its device's compute stream until the transfer ends
  kEager,     // sends are buffered and never hold the stream; a RECV holds it until the data
              // has arrived, so what follows it in the program waits too (pipeworks' CPU
              // executors: a mailbox send, a blocking receive in program order)
};

std::string_view comm_mode_name(CommMode mode);  // "overlap", "blocking", "eager"
sched::Result<CommMode> parse_comm_mode(std::string_view text);

}  // namespace pipeworks::sim
