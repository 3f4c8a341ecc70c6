// The predicted-vs-measured table `pipeworks run --predict` prints, and the same figures as JSON
// records for programs (bench/accuracy reads them). Formatting only; the arithmetic is in
// comparison.h.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sched/timeline.h"
#include "viz/comparison.h"

namespace pipeworks::viz {

// Spreads of the repeated measurements behind the measured figures (shown beside them).
struct MeasuredSpreads {
  std::optional<Spread> step_ns;
  std::optional<Spread> peak_bytes;  // of the largest per-device peak
  int steps = 0;                     // how many steps the medians are over
};

//                      predicted     measured        error   (measured: median of 4 steps)
//   step time            12.40 ms     13.10 ms        -5.3%   [12.90 ms .. 13.60 ms]
//   device 0 busy        10.00 ms     10.70 ms        -6.5%
//   device 0 bubble         19.4%        18.3%     +1.1 pp
//   device 0 peak act.   1.25 MiB     1.30 MiB        -3.8%
//   ...
//   compute actions deviating most (top 10 by |predicted - measured|)
//   action     device  lane      predicted   measured      error    rel.
//   1B3             1  compute     1.20 ms    1.70 ms   -0.50 ms  -29.4%
std::string comparison_table(const Comparison& comparison, const MeasuredSpreads& spreads = {},
                             std::size_t top_actions = 10);

// "+5.3%", "-inf%"; "n/a" for NaN.
std::string format_relative(double relative);

// Spans as records {device, lane, stage, microbatch, kind, start_ns, end_ns}.
nlohmann::json timeline_records(const sched::Timeline& timeline);

// {"summary": {...step, bubble, devices...}, "errors": {...}, "actions": [per-action errors]}.
// Infinite relative errors are written as null.
nlohmann::json comparison_json(const Comparison& comparison, const MeasuredSpreads& spreads = {});

}  // namespace pipeworks::viz
