// The JSON of a PredictionReport (schema pipeworks.predict_report/1, laid out in docs/accuracy.md):
// the configuration, the cost model with the stage replay, and every measured step. The
// predicted-vs-measured comparison and both timelines are viz's to add (comparison_json,
// timeline_records), as `run --predict --json` does.
#pragma once

#include <nlohmann/json.hpp>

#include "hw/predict/run_prediction.h"

namespace pipeworks::hw {

nlohmann::json prediction_report_json(const PredictionReport& report);

}  // namespace pipeworks::hw
