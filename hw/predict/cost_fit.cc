// Least-squares fits of profiled costs and timing summaries (see cost_fit.h).
#include "hw/predict/cost_fit.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace pipeworks::hw {

sched::Result<LinearFit> fit_linear(const std::vector<FitPoint>& points) {
  if (points.empty()) return sched::Error{"fit_linear: no points"};
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const FitPoint& p : points) {
    if (!(p.size > 0)) return sched::Error{fmt::format("fit_linear: size {} is not positive", p.size)};
    const double x = p.size;
    n += 1;
    sx += x;
    sy += p.value;
    sxx += x * x;
    sxy += x * p.value;
  }
  LinearFit fit;
  const double variance = n * sxx - sx * sx;
  if (variance <= 0) {
    // One distinct size: a single point is all per-sample cost, repeats of it average.
    const double mean = sy / n;
    if (points.size() == 1) {
      fit.per_sample = mean / sx;
    } else {
      fit.fixed = mean;
    }
  } else {
    fit.per_sample = (n * sxy - sx * sy) / variance;
    fit.fixed = (sy - fit.per_sample * sx) / n;
  }
  if (fit.per_sample < 0) {
    fit.clamped_per_sample = true;
    fit.per_sample = 0;
    fit.fixed = sy / n;
  }
  if (fit.fixed < 0) {
    fit.clamped_fixed = true;
    fit.fixed = 0;
    fit.per_sample = sxx > 0 ? std::max(0.0, sxy / sxx) : 0;
  }
  return fit;
}

sim::ScaledDuration to_scaled_duration(const LinearFit& fit) {
  return {static_cast<sim::Nanoseconds>(std::llround(fit.fixed)),
          static_cast<sim::Nanoseconds>(std::llround(fit.per_sample))};
}

sim::ScaledBytes to_scaled_bytes(const LinearFit& fit) {
  return {static_cast<sim::Bytes>(std::llround(fit.fixed)), static_cast<sim::Bytes>(std::llround(fit.per_sample))};
}

Timing summarize_timings(std::vector<std::int64_t> samples_ns) {
  if (samples_ns.empty()) return {};
  std::sort(samples_ns.begin(), samples_ns.end());
  const std::size_t n = samples_ns.size();
  const std::int64_t median = n % 2 == 1 ? samples_ns[n / 2] : (samples_ns[n / 2 - 1] + samples_ns[n / 2]) / 2;
  long double sum = 0;
  for (const std::int64_t s : samples_ns) sum += static_cast<long double>(s);
  const auto mean = static_cast<std::int64_t>(std::llround(static_cast<double>(sum / static_cast<long double>(n))));
  return {median, samples_ns.front(), samples_ns.back(), mean};
}

}  // namespace pipeworks::hw
