// Predicted vs measured arithmetic over two Timelines (see comparison.h).
#include "viz/comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include <fmt/format.h>

namespace pipeworks::viz {

using sched::Action;
using sched::Timeline;

double relative_error(double predicted, double measured) {
  if (measured == 0) {
    if (predicted == 0) return 0;
    return predicted > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  }
  return (predicted - measured) / measured;
}

sched::Result<Spread> spread_of(std::vector<std::int64_t> values) {
  if (values.empty()) return sched::Error{"spread of no values"};
  std::sort(values.begin(), values.end());
  return Spread{values.front(), values[(values.size() - 1) / 2], values.back()};
}

namespace {

// Span index per action; an error naming the first duplicate.
sched::Result<std::map<Action, std::size_t>> index_spans(const Timeline& timeline) {
  std::map<Action, std::size_t> index;
  for (std::size_t i = 0; i < timeline.spans.size(); ++i) {
    const Action& a = timeline.spans[i].action;
    if (!index.emplace(a, i).second) {
      return sched::Error{fmt::format("{} timeline: action {} occurs twice", timeline.name, to_string(a))};
    }
  }
  return index;
}

sched::Status check_peaks(const std::vector<sched::Bytes>& peaks, int num_devices, const char* which) {
  if (!peaks.empty() && static_cast<int>(peaks.size()) != num_devices) {
    return sched::Error{fmt::format("{} peaks: {} entries for {} devices", which, peaks.size(), num_devices)};
  }
  return sched::Ok{};
}

}  // namespace

sched::Result<Comparison> compare_timelines(const Timeline& predicted, const Timeline& measured,
                                            const ComparisonOptions& options) {
  if (predicted.num_devices != measured.num_devices) {
    return sched::Error{fmt::format("the predicted timeline has {} devices, the measured one {}",
                                    predicted.num_devices, measured.num_devices)};
  }
  const int devices = predicted.num_devices;
  if (auto s = check_peaks(options.predicted_peak_bytes, devices, "predicted"); !s) return s.error();
  if (auto s = check_peaks(options.measured_peak_bytes, devices, "measured"); !s) return s.error();
  auto predicted_index = index_spans(predicted);
  if (!predicted_index) return predicted_index.error();
  auto measured_index = index_spans(measured);
  if (!measured_index) return measured_index.error();

  Comparison out;
  for (const sched::Span& p : predicted.spans) {
    const auto found = measured_index->find(p.action);
    if (found == measured_index->end()) {
      out.only_predicted.push_back(p.action);
      continue;
    }
    const sched::Span& m = measured.spans[found->second];
    out.actions.push_back(ActionDeviation{p.action, p.device, p.lane, p.duration_ns(), m.duration_ns()});
  }
  for (const sched::Span& m : measured.spans) {
    if (!predicted_index->contains(m.action)) out.only_measured.push_back(m.action);
  }

  const sched::TimelineStats ps = sched::compute_stats(predicted);
  const sched::TimelineStats ms = sched::compute_stats(measured);
  out.predicted_step_ns = ps.makespan_ns;
  out.measured_step_ns = ms.makespan_ns;
  out.predicted_bubble = ps.bubble_fraction;
  out.measured_bubble = ms.bubble_fraction;
  for (int d = 0; d < devices; ++d) {
    const auto i = static_cast<std::size_t>(d);
    DeviceComparison dc;
    dc.device = d;
    dc.predicted_busy_ns = ps.devices[i].busy_ns;
    dc.measured_busy_ns = ms.devices[i].busy_ns;
    dc.predicted_bubble = ps.devices[i].bubble_fraction;
    dc.measured_bubble = ms.devices[i].bubble_fraction;
    dc.predicted_peak_bytes =
        options.predicted_peak_bytes.empty() ? ps.devices[i].peak_bytes : options.predicted_peak_bytes[i];
    dc.measured_peak_bytes =
        options.measured_peak_bytes.empty() ? ms.devices[i].peak_bytes : options.measured_peak_bytes[i];
    out.devices.push_back(dc);
  }
  return out;
}

std::vector<ActionDeviation> largest_deviations(const Comparison& comparison, std::size_t count, bool compute_only) {
  std::vector<ActionDeviation> sorted;
  for (const ActionDeviation& a : comparison.actions) {
    if (!compute_only || a.lane == sched::Lane::kCompute) sorted.push_back(a);
  }
  std::stable_sort(sorted.begin(), sorted.end(), [](const ActionDeviation& a, const ActionDeviation& b) {
    // |error| as unsigned, so the most negative int64 cannot overflow.
    const auto magnitude = [](sched::Nanoseconds e) {
      return e < 0 ? static_cast<std::uint64_t>(-(e + 1)) + 1 : static_cast<std::uint64_t>(e);
    };
    return magnitude(a.error_ns()) > magnitude(b.error_ns());
  });
  if (sorted.size() > count) sorted.resize(count);
  return sorted;
}

double median_abs_action_error(const Comparison& comparison) {
  std::vector<double> errors;
  for (const ActionDeviation& a : comparison.actions) {
    if (a.lane == sched::Lane::kCompute) errors.push_back(std::fabs(a.relative()));
  }
  if (errors.empty()) return 0;
  std::sort(errors.begin(), errors.end());
  const std::size_t n = errors.size();
  return n % 2 == 1 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
}

}  // namespace pipeworks::viz
