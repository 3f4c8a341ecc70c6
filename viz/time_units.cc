// Unit choice and duration text shared by the SVG chart and the terminal grid.
#include "viz/time_units.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>

namespace pipeworks::viz {

namespace {
constexpr std::array<TimeUnit, 4> kUnits = {
    TimeUnit{"ns", "ns", 1}, TimeUnit{"us", "\xC2\xB5s", 1'000}, TimeUnit{"ms", "ms", 1'000'000},
    TimeUnit{"s", "s", 1'000'000'000}};
}  // namespace

TimeUnit choose_time_unit(std::int64_t range_ns) {
  TimeUnit chosen = kUnits[0];
  for (const TimeUnit& unit : kUnits) {
    if (range_ns >= unit.ns_per_unit) chosen = unit;
  }
  return chosen;
}

std::string format_in_unit(std::int64_t ns, const TimeUnit& unit, int decimals) {
  return fmt::format("{:.{}f}", static_cast<double>(ns) / static_cast<double>(unit.ns_per_unit), decimals);
}

std::string format_duration(std::int64_t ns, bool utf8) {
  const TimeUnit unit = choose_time_unit(ns < 0 ? -(ns + 1) : ns);
  std::string text = format_in_unit(ns, unit, unit.ns_per_unit == 1 ? 0 : 3);
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return fmt::format("{} {}", text, utf8 ? unit.name : unit.ascii_name);
}

std::int64_t nice_tick_step(std::int64_t range_ns, int max_ticks) {
  const std::int64_t ticks = std::max(max_ticks, 1);
  for (std::int64_t power = 1; power <= std::numeric_limits<std::int64_t>::max() / 10; power *= 10) {
    for (const std::int64_t mult : {1, 2, 5}) {
      const std::int64_t step = power * mult;
      if (range_ns / step < ticks || (range_ns / step == ticks && range_ns % step == 0)) return step;
    }
  }
  return std::numeric_limits<std::int64_t>::max() / 10;
}

int tick_decimals(std::int64_t step_ns, const TimeUnit& unit) {
  int decimals = 0;
  std::int64_t scaled = step_ns;
  while (decimals < 6 && scaled % unit.ns_per_unit != 0 && scaled <= std::numeric_limits<std::int64_t>::max() / 10) {
    scaled *= 10;
    ++decimals;
  }
  return decimals;
}

}  // namespace pipeworks::viz
