// Human time units for pictures: pick ns/us/ms/s for a range and print durations in it, so the
// SVG axis, the terminal grid footer and titles all say "14 ms" the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pipeworks::viz {

struct TimeUnit {
  std::string_view ascii_name;  // "ns", "us", "ms", "s"
  std::string_view name;        // "ns", "µs" (UTF-8), "ms", "s"
  std::int64_t ns_per_unit = 1;
};

// The largest unit in which `range_ns` is at least 1 (ns for ranges under 1 us).
TimeUnit choose_time_unit(std::int64_t range_ns);

// `ns` in its own unit with up to 3 decimals, trailing zeros trimmed: "1 ms", "1.5 ms", "250 us".
// `utf8` selects "µs" over "us".
std::string format_duration(std::int64_t ns, bool utf8 = false);

// `ns` expressed in `unit` with `decimals` digits after the point and no unit name: "2.50".
std::string format_in_unit(std::int64_t ns, const TimeUnit& unit, int decimals);

// A 1, 2 or 5 times a power of ten step (ns) giving at most `max_ticks` intervals over `range_ns`.
std::int64_t nice_tick_step(std::int64_t range_ns, int max_ticks);

// Decimals needed to print multiples of `step_ns` exactly in `unit` (0 to 6).
int tick_decimals(std::int64_t step_ns, const TimeUnit& unit);

}  // namespace pipeworks::viz
