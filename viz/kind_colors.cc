// Hue per action kind and lightness per micro-batch, converted to hex for any SVG renderer.
#include "viz/kind_colors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pipeworks::viz {

namespace {
constexpr double kDarkest = 0.30;
constexpr double kLightest = 0.76;
constexpr double kDarkTextBelow = 0.55;  // lightness under which text is white

double hue_of(sched::ActionKind kind) {
  switch (kind) {
    case sched::ActionKind::kForward: return 214;
    case sched::ActionKind::kBackward: return 26;
    case sched::ActionKind::kBackwardInput: return 130;
    case sched::ActionKind::kBackwardWeight: return 285;
    case sched::ActionKind::kRecompute: return 352;
    default: return 0;
  }
}
}  // namespace

std::string hsl_hex(double hue_deg, double saturation, double lightness) {
  const double c = (1 - std::abs(2 * lightness - 1)) * saturation;
  const double h = std::fmod(std::fmod(hue_deg, 360.0) + 360.0, 360.0) / 60.0;
  const double x = c * (1 - std::abs(std::fmod(h, 2.0) - 1));
  double r = 0, g = 0, b = 0;
  if (h < 1) {
    r = c, g = x;
  } else if (h < 2) {
    r = x, g = c;
  } else if (h < 3) {
    g = c, b = x;
  } else if (h < 4) {
    g = x, b = c;
  } else if (h < 5) {
    r = x, b = c;
  } else {
    r = c, b = x;
  }
  const double m = lightness - c / 2;
  auto channel = [m](double v) { return static_cast<int>(std::lround(std::clamp(v + m, 0.0, 1.0) * 255)); };
  return fmt::format("#{:02x}{:02x}{:02x}", channel(r), channel(g), channel(b));
}

KindColor error_color(double error) {
  const double t = std::isfinite(error) ? std::min(std::fabs(error) / kErrorColorSaturatesAt, 1.0) : 1.0;
  const double lightness = 0.86 - 0.4 * t;
  return KindColor{hsl_hex(error < 0 ? 4 : 214, 0.75 * t, lightness), lightness < kDarkTextBelow ? "#ffffff" : "#1a1a1a"};
}

KindColor kind_color(sched::ActionKind kind, int microbatch, int num_microbatches) {
  if (sched::is_send(kind)) return KindColor{"#6b6b6b", "#ffffff"};
  if (sched::is_recv(kind)) return KindColor{"#b0b0b0", "#1a1a1a"};
  const double t = num_microbatches > 1
                       ? std::clamp(static_cast<double>(microbatch) / static_cast<double>(num_microbatches - 1), 0.0, 1.0)
                       : 0.0;
  const double lightness = kDarkest + (kLightest - kDarkest) * t;
  return KindColor{hsl_hex(hue_of(kind), 0.68, lightness), lightness < kDarkTextBelow ? "#ffffff" : "#1a1a1a"};
}

}  // namespace pipeworks::viz
