// Harness: the unit parser of sim/spec/units.h ("1.5ms", "80GiB", "900GB/s", "989TFLOP/s").
// Properties: a parsed duration or size is non-negative and its exact spelling
// (exact_duration_string / exact_bytes_string) parses back to the same value; rates are finite
// and non-negative; and for any 64-bit value taken from the input, the exact spellings of its
// magnitude round-trip and every formatter returns text.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "sim/spec/units.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using namespace pipeworks;
using fuzz::require;

template <class Parse, class Spell>
void check_exact(std::int64_t value, Parse parse, Spell spell, std::string_view what) {
  const std::string text = spell(value);
  auto again = parse(text);
  require(again && *again == value, what, [&] {
    return fmt::format("{} -> \"{}\" -> {}", value, text, again ? fmt::format("{}", *again) : again.error().message);
  });
}

void check_rate(sched::Result<double> rate, std::string_view text, std::string_view what) {
  if (!rate) return;
  require(std::isfinite(*rate) && *rate >= 0, what, [&] { return fmt::format("\"{}\" -> {}", text, *rate); });
}

void check_value(std::int64_t value) {
  for (const std::string& text : {sim::format_duration(value), sim::format_bytes(value),
                                  sim::format_bandwidth(static_cast<double>(value)),
                                  sim::format_flop_rate(static_cast<double>(value))}) {
    require(!text.empty(), "a formatter returns text", [&] { return fmt::format("{}", value); });
  }
  const std::int64_t magnitude = value == std::numeric_limits<std::int64_t>::min() ? 0 : (value < 0 ? -value : value);
  check_exact(magnitude, sim::parse_duration, sim::exact_duration_string, "exact_duration_string round-trips");
  check_exact(magnitude, sim::parse_bytes, sim::exact_bytes_string, "exact_bytes_string round-trips");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto ns = sim::parse_duration(text)) {
    require(*ns >= 0, "a parsed duration is non-negative", [&] { return std::string(text); });
    check_exact(*ns, sim::parse_duration, sim::exact_duration_string, "duration parse -> write -> parse");
  }
  if (auto bytes = sim::parse_bytes(text)) {
    require(*bytes >= 0, "a parsed size is non-negative", [&] { return std::string(text); });
    check_exact(*bytes, sim::parse_bytes, sim::exact_bytes_string, "size parse -> write -> parse");
  }
  check_rate(sim::parse_bandwidth(text), text, "a parsed bandwidth is finite and non-negative");
  check_rate(sim::parse_flop_rate(text), text, "a parsed FLOP rate is finite and non-negative");
  if (size >= sizeof(std::int64_t)) {
    std::int64_t value = 0;
    std::memcpy(&value, data, sizeof value);
    check_value(value);
    check_value(value >> 20);  // smaller magnitudes too, where the larger units are exact
  }
  return 0;
}
