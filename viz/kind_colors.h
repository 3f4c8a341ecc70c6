// Colors for drawing actions: one hue per compute kind, lightness by micro-batch, so F, B, I, W
// and R are told apart at a glance and neighbouring micro-batches still separate.
#pragma once

#include <string>

#include "sched/action.h"

namespace pipeworks::viz {

struct KindColor {
  std::string fill;        // "#rrggbb"
  std::string text_color;  // readable on `fill`
};

// Compute kinds: F blue, B orange, I green, W purple, R red; lightness runs from dark
// (micro-batch 0) to light (the last). Transfer kinds: greys (send darker than receive).
KindColor kind_color(sched::ActionKind kind, int microbatch, int num_microbatches);

// A measured span coloured by its prediction's relative error (viz/span_predictions.h): grey at
// 0, redder as the prediction falls short (error < 0), bluer as it overshoots, full at
// +-kErrorColorSaturatesAt and beyond.
inline constexpr double kErrorColorSaturatesAt = 0.5;
KindColor error_color(double error);

// "#rrggbb" of an HSL color (hue in degrees, saturation and lightness in [0, 1]).
std::string hsl_hex(double hue_deg, double saturation, double lightness);

}  // namespace pipeworks::viz
