// Text for the IR's units where a person reads them: one formatter for bytes, used by the
// simulator's reports, the pictures and the CLI alike.
#pragma once

#include <string>

#include "sched/timeline.h"

namespace pipeworks::sched {

// Binary units with two decimals from 1 KiB on: 512 -> "512 B", 3 << 20 -> "3.00 MiB",
// 1342177280 -> "1.25 GiB"; negative values keep their sign.
std::string format_bytes(Bytes bytes);

}  // namespace pipeworks::sched
