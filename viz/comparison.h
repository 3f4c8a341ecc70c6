// Predicted vs measured: lines two Timelines of one schedule up action by action and reads off
// the errors people ask about (step time, per-device busy time and bubble, memory peaks, the
// actions that deviate most). Pure arithmetic over sched::Timeline, so it is tested on
// constructed timelines and knows neither the simulator nor the executor.
//
//   predicted  d0 |F0 |F1 |     |B0   |B1   |        step 10 ms
//   measured   d0 |F0  |F1  |     |B0    |B1     |   step 12 ms  -> error -16.7%
//   per action: F0 1.0 vs 1.2 ms (-16.7%), ...; sorted by |predicted - measured|
//
// Relative errors are (predicted - measured) / measured: negative means the prediction is low.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sched/result.h"
#include "sched/timeline.h"

namespace pipeworks::viz {

// (predicted - measured) / measured; 0 when both are 0, +-infinity when only measured is 0.
double relative_error(double predicted, double measured);

// One action present in both timelines.
struct ActionDeviation {
  sched::Action action;
  int device = 0;  // as placed in the predicted timeline
  sched::Lane lane = sched::Lane::kCompute;
  sched::Nanoseconds predicted_ns = 0;  // duration
  sched::Nanoseconds measured_ns = 0;
  sched::Nanoseconds error_ns() const { return predicted_ns - measured_ns; }
  double relative() const { return relative_error(static_cast<double>(predicted_ns), static_cast<double>(measured_ns)); }
};

struct DeviceComparison {
  int device = 0;
  sched::Nanoseconds predicted_busy_ns = 0;  // union of compute spans
  sched::Nanoseconds measured_busy_ns = 0;
  double predicted_bubble = 0;  // idle compute time over the makespan
  double measured_bubble = 0;
  sched::Bytes predicted_peak_bytes = 0;
  sched::Bytes measured_peak_bytes = 0;
};

// Min / median / max of repeated measurements (the median is the lower middle element, so it
// is always a value that was observed).
struct Spread {
  std::int64_t min = 0;
  std::int64_t median = 0;
  std::int64_t max = 0;
};
// An error on an empty list.
sched::Result<Spread> spread_of(std::vector<std::int64_t> values);

struct Comparison {
  sched::Nanoseconds predicted_step_ns = 0;  // makespan: first span start to last span end
  sched::Nanoseconds measured_step_ns = 0;
  double predicted_bubble = 0;
  double measured_bubble = 0;
  std::vector<DeviceComparison> devices;
  // Every action found in both timelines, in the predicted timeline's span order.
  std::vector<ActionDeviation> actions;
  // Actions found in only one of the two (both empty when the action sets are identical).
  std::vector<sched::Action> only_predicted;
  std::vector<sched::Action> only_measured;

  double step_error() const {
    return relative_error(static_cast<double>(predicted_step_ns), static_cast<double>(measured_step_ns));
  }
  bool same_actions() const { return only_predicted.empty() && only_measured.empty(); }
};

// Peaks per device replace the timelines' memory samples when given (the executor measures a
// true peak inside actions; a timeline only samples between them).
struct ComparisonOptions {
  std::vector<sched::Bytes> predicted_peak_bytes;  // empty: max of the predicted memory samples
  std::vector<sched::Bytes> measured_peak_bytes;   // empty: max of the measured memory samples
};

// The one rule that pairs a span of one timeline with a span of another: by identity (stage x
// kind x micro-batch) and occurrence, the n-th time an action appears in `from` with the n-th
// time in `to` (a file may repeat an action, e.g. UNSHARD once per round; both timelines follow
// each device's program order). Per span of `from`, its partner's index in `to`, if any.
std::vector<std::optional<std::size_t>> pair_spans(const sched::Timeline& from, const sched::Timeline& to);

// Fails when the timelines disagree on the device count or a peak list has the wrong length;
// actions pair as pair_spans does.
sched::Result<Comparison> compare_timelines(const sched::Timeline& predicted, const sched::Timeline& measured,
                                            const ComparisonOptions& options = {});

// The `count` deviations with the largest |predicted - measured| (ties: earlier first), over
// compute actions only when `compute_only` (a simulated SEND/RECV span is the transfer on its
// link, a measured one the time the worker spent in the call, so they are not like for like).
std::vector<ActionDeviation> largest_deviations(const Comparison& comparison, std::size_t count,
                                                bool compute_only = false);

// Median of |relative error| over the compute actions (0 without actions); +-infinite entries
// count as infinite.
double median_abs_action_error(const Comparison& comparison);

}  // namespace pipeworks::viz
