// The JSON of a training run's report (`pipeworks run --json`): the configuration, every step's
// time, throughput, bubble, loss and peaks, and the gradient check when one ran.
#pragma once

#include <nlohmann/json.hpp>

#include "hw/run/run.h"

namespace pipeworks::hw {

nlohmann::json run_report_json(const RunConfig& config, const RunReport& report);

}  // namespace pipeworks::hw
