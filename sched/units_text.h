// Text for the IR's units where a person reads them: one formatter for bytes and one for counts,
// used by the simulator's reports, the pictures and the CLI alike.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sched/timeline.h"

namespace pipeworks::sched {

// Binary units with two decimals from 1 KiB on: 512 -> "512 B", 3 << 20 -> "3.00 MiB",
// 1342177280 -> "1.25 GiB"; negative values keep their sign.
std::string format_bytes(Bytes bytes);

// "1 stage", "4 stages", "1 micro-batch", "8 micro-batches": `plural` defaults to singular + "s".
std::string counted(std::int64_t n, std::string_view singular, std::string_view plural = {});

}  // namespace pipeworks::sched
