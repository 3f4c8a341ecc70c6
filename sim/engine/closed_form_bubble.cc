// The schedules' bubbles in closed form (see closed_form_bubble.h for the table).
#include "sim/engine/closed_form_bubble.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace pipeworks::sim {

namespace {

ClosedFormBubble form(std::int64_t numerator, std::int64_t denominator, std::string formula) {
  return ClosedFormBubble{numerator, std::max<std::int64_t>(denominator, 1), std::move(formula)};
}

}  // namespace

std::optional<ClosedFormBubble> closed_form_bubble(sched::ScheduleKind kind, int stages, int microbatches,
                                                   int devices) {
  using sched::ScheduleKind;
  const std::int64_t k = stages;
  const std::int64_t m = microbatches;
  if (k < 1 || m < 1) return std::nullopt;
  const bool several_per_device = devices > 0 && devices < k && k % devices == 0;
  if (kind == ScheduleKind::kDualPipeV) return std::nullopt;
  if (kind == ScheduleKind::kZbV) {
    const std::int64_t d = several_per_device ? devices : (k + 1) / 2;
    if (m < 2 * d) return std::nullopt;
    return form(d - 1, 6 * m + d - 1, fmt::format("ZB-V closed form with F = I = W, M >= 2D: (D-1)/(6M+D-1), D = {}", d));
  }
  if (kind == ScheduleKind::kInterleavedZb) {
    const std::int64_t d = several_per_device ? devices : k;
    if (m < d) return std::nullopt;
    const std::int64_t v = k / d;
    return form(d - 1, 3 * v * m + d - 1,
                fmt::format("interleaved ZB closed form with F = I = W, M >= D: (D-1)/(3vM+D-1), D = {}, v = {}", d, v));
  }
  if (kind == ScheduleKind::kZbH1) {
    if (m < k) return std::nullopt;
    return form(k - 1, 3 * m + k - 1, "ZB-H1 closed form (K-1)(F+I-W) idle, with F = I = W, M >= K: (K-1)/(3M+K-1)");
  }
  if (kind == ScheduleKind::kZbH2) {
    if (m < 2 * k) return std::nullopt;
    return form(k - 1, 3 * m + k - 1, "ZB-H2 closed form with F = I = W, M >= 2K: (K-1)/(3M+K-1)");
  }
  if (several_per_device) {
    const std::int64_t v = k / devices;
    return form(devices - 1, v * m + devices - 1,
                fmt::format("closed form (D-1)/(vM+D-1) with D = {} devices, v = {}", devices, v));
  }
  return form(k - 1, m + k - 1, "GPipe closed form (K-1)/(M+K-1)");
}

std::string closed_form_text(sched::ScheduleKind kind, int stages, int microbatches, int devices) {
  const std::optional<ClosedFormBubble> f = closed_form_bubble(kind, stages, microbatches, devices);
  if (!f) {
    return fmt::format("no closed form for {} at K = {}, M = {}", sched::schedule_kind_name(kind), stages,
                       microbatches);
  }
  const std::int64_t g = std::max<std::int64_t>(std::gcd(f->numerator, f->denominator), 1);
  return fmt::format("{:.1f}% {} = {}/{}", 100.0 * f->fraction(), f->formula, f->numerator / g, f->denominator / g);
}

}  // namespace pipeworks::sim
