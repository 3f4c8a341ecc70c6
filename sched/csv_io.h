// CSV schedules in torch.distributed.pipelining's layout (`_dump_csv` / `_load_csv`): Python
// csv.writer rows, one row per rank (device), each cell one action (`0F1`, `1SEND_F3`), an
// empty cell an idle slot. The file carries no K, M or placement: they are inferred.
//
//   0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1
//   1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1B1,1SEND_B1
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sched/limits.h"
#include "sched/source_map.h"

namespace pipeworks::sched {

// Largest CSV text parse_csv reads.
inline constexpr std::size_t kMaxCsvBytes = static_cast<std::size_t>(kMaxScheduleFileBytes);

// K = largest stage + 1, M = largest micro-batch + 1, and stage s is placed on the row holding
// most of its actions (a stage found on two rows is a validation diagnostic, kStageOnTwoDevices).
// Cells are stripped of surrounding blanks and may be quoted; idle cells are dropped. Errors
// read "SOURCE:ROW:COL: error: ..." with the 1-based line and the column of the offending
// character; K and M above validate's size guard are errors at the token that names them.
Result<LoadedSchedule> parse_csv(std::string_view text, std::string_view source_name = "<csv>");

// One row per device, tokens separated by commas, rows ended by "\r\n" like csv.writer.
std::string to_csv(const Schedule& schedule);

}  // namespace pipeworks::sched
