// Fits the simulator's linear cost shape (fixed + per_sample * micro-batch size) to profiled
// points by least squares, clamped to non-negative parts, and reduces repeated timings to a
// median with its spread. LibTorch-free: plain numbers in, plain numbers out.
//
//   time |            x      fit: fixed + per_sample * size
//        |       x  /
//        |    x /            a negative intercept is clamped to 0 and the slope refit
//        |  / x              through the origin (and the clamp reported)
//        +-------------- micro-batch size
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sched/result.h"
#include "sim/spec/model_spec.h"

namespace pipeworks::hw {

struct FitPoint {
  double size = 1;   // micro-batch size (or bytes, for hand-off fits); > 0
  double value = 0;  // ns or bytes
};

struct LinearFit {
  double fixed = 0;
  double per_sample = 0;
  bool clamped_fixed = false;       // the least-squares intercept was negative
  bool clamped_per_sample = false;  // the least-squares slope was negative
};

// Least squares over the points (one point: all of it per sample; several points at one size:
// all of it fixed). Negative parts are clamped: intercept < 0 -> slope through the origin;
// slope < 0 -> the mean as a fixed cost. An error on no points or a size <= 0.
sched::Result<LinearFit> fit_linear(const std::vector<FitPoint>& points);

sim::ScaledDuration to_scaled_duration(const LinearFit& fit);
sim::ScaledBytes to_scaled_bytes(const LinearFit& fit);

// Median (the mean of the two middle values for an even count), min, max and mean of timings in
// ns. The mean is what a step that repeats the timed thing many times spends on each.
struct Timing {
  std::int64_t median_ns = 0;
  std::int64_t min_ns = 0;
  std::int64_t max_ns = 0;
  std::int64_t mean_ns = 0;
};
Timing summarize_timings(std::vector<std::int64_t> samples_ns);

}  // namespace pipeworks::hw
