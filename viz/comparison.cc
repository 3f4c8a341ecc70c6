// Predicted vs measured arithmetic over two Timelines (see comparison.h).
#include "viz/comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <utility>

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

std::vector<std::optional<std::size_t>> pair_spans(const Timeline& from, const Timeline& to) {
  using Occurrence = std::pair<Action, int>;  // an action and how many times it came before
  std::map<Occurrence, std::size_t> index;
  std::map<Action, int> seen;
  for (std::size_t i = 0; i < to.spans.size(); ++i) {
    const Action& a = to.spans[i].action;
    index.emplace(Occurrence{a, seen[a]++}, i);
  }
  seen.clear();
  std::vector<std::optional<std::size_t>> partners;
  partners.reserve(from.spans.size());
  for (const sched::Span& s : from.spans) {
    const auto found = index.find(Occurrence{s.action, seen[s.action]++});
    partners.push_back(found == index.end() ? std::nullopt : std::optional<std::size_t>(found->second));
  }
  return partners;
}

namespace {

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
  Comparison out;
  const std::vector<std::optional<std::size_t>> partners = pair_spans(predicted, measured);
  for (std::size_t i = 0; i < predicted.spans.size(); ++i) {
    const sched::Span& p = predicted.spans[i];
    if (!partners[i]) {
      out.only_predicted.push_back(p.action);
      continue;
    }
    const sched::Span& m = measured.spans[*partners[i]];
    out.actions.push_back(ActionDeviation{p.action, p.device, p.lane, p.duration_ns(), m.duration_ns()});
  }
  const std::vector<std::optional<std::size_t>> back = pair_spans(measured, predicted);
  for (std::size_t i = 0; i < measured.spans.size(); ++i) {
    if (!back[i]) out.only_measured.push_back(measured.spans[i].action);
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
