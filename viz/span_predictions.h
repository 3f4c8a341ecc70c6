// What a measured span's picture and trace event say beside the span itself: how long the
// prediction said the same action would take, and the relative error. Matched action by action
// (stage, kind, micro-batch), as viz/comparison.h matches them.
//
//   predicted  d0 |F0 1.0|F1 1.0|
//   measured   d0 |F0 1.2 |F1 0.9|    -> F0: predicted 1.0 ms, error -16.7%; F1: +11.1%
#pragma once

#include <optional>
#include <vector>

#include "sched/timeline.h"

namespace pipeworks::viz {

struct SpanPrediction {
  sched::Nanoseconds predicted_ns = 0;
  double error = 0;  // relative_error(predicted, measured): negative when the prediction is low
};

// One entry per span of a timeline; nullopt where the other timeline lacks that action.
using SpanPredictions = std::vector<std::optional<SpanPrediction>>;

// For each span of `measured`, the duration of the same action in `predicted` and the error.
// An action that occurs more than once in `predicted` is matched to its first occurrence.
SpanPredictions span_predictions(const sched::Timeline& predicted, const sched::Timeline& measured);

}  // namespace pipeworks::viz
