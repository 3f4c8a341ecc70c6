// Strict parsing of human units: split "<decimal><unit>", look the unit up in a small table,
// and compute the value exactly (128-bit integers for ns/bytes) so that "1.5GB" is 1500000000.
#include "sim/spec/units.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace pipeworks::sim {
namespace {

__extension__ typedef unsigned __int128 U128;

struct Unit {
  std::string_view name;
  std::uint64_t multiplier;  // in the base unit (ns, bytes, bytes/s scaled by 8 for bits)
};

constexpr std::uint64_t kKi = 1024;
constexpr std::array<Unit, 6> kDurationUnits = {{{"ns", 1},
                                                 {"us", 1'000},
                                                 {"\xC2\xB5s", 1'000},  // µs (micro sign)
                                                 {"\xCE\xBCs", 1'000},  // μs (Greek mu)
                                                 {"ms", 1'000'000},
                                                 {"s", 1'000'000'000}}};
constexpr std::array<Unit, 12> kSizeUnits = {{{"B", 1},
                                              {"kB", 1'000},
                                              {"KB", 1'000},
                                              {"MB", 1'000'000},
                                              {"GB", 1'000'000'000},
                                              {"TB", 1'000'000'000'000},
                                              {"PB", 1'000'000'000'000'000},
                                              {"KiB", kKi},
                                              {"MiB", kKi * kKi},
                                              {"GiB", kKi * kKi * kKi},
                                              {"TiB", kKi * kKi * kKi * kKi},
                                              {"PiB", kKi * kKi * kKi * kKi * kKi}}};
// Bit rates, in bits per second (divided by 8 after scaling).
constexpr std::array<Unit, 6> kBitUnits = {{{"bit/s", 1},
                                            {"kbit/s", 1'000},
                                            {"Kbit/s", 1'000},
                                            {"Mbit/s", 1'000'000},
                                            {"Gbit/s", 1'000'000'000},
                                            {"Tbit/s", 1'000'000'000'000}}};
constexpr std::array<Unit, 7> kFlopPrefixes = {{{"", 1},
                                                {"k", 1'000},
                                                {"K", 1'000},
                                                {"M", 1'000'000},
                                                {"G", 1'000'000'000},
                                                {"T", 1'000'000'000'000},
                                                {"P", 1'000'000'000'000'000}}};

constexpr std::string_view kDurationHint = "durations take ns, us, ms or s";
constexpr std::string_view kSizeHint = "sizes take B, kB, MB, GB, TB, KiB, MiB, GiB, TiB";
constexpr std::string_view kBandwidthHint = "bandwidths take a size unit + /s, or bit/s, Mbit/s, Gbit/s";
constexpr std::string_view kFlopHint = "FLOP rates take FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s";

// JSON-style quoting so control characters and invalid UTF-8 in hostile input stay printable.
std::string quoted(std::string_view text) {
  return nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

sched::Error fail(std::string_view text, std::string_view reason) {
  return sched::Error{fmt::format("{}: {}", quoted(text), reason), std::nullopt};
}

struct Split {
  std::string_view integer;   // digits before the point
  std::string_view fraction;  // digits after the point (may be empty)
  std::string_view unit;
};

sched::Result<Split> split(std::string_view text, std::string_view hint) {
  if (text.empty()) return fail(text, "empty value");
  if (text.front() == '-') return fail(text, "negative values are not allowed");
  if (text.front() == '+') return fail(text, "a sign is not allowed");
  std::size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i == 0) return fail(text, "expected a number followed by a unit");
  Split parts{text.substr(0, i), {}, {}};
  if (i < text.size() && text[i] == '.') {
    const std::size_t start = ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    if (i == start) return fail(text, "malformed number: digits must follow the decimal point");
    parts.fraction = text.substr(start, i - start);
  }
  if (i < text.size() && (text[i] == '.' || text[i] == ',')) return fail(text, "malformed number");
  if (i < text.size() && text[i] == ' ') ++i;
  parts.unit = text.substr(i);
  if (parts.unit.empty()) {
    return fail(text, fmt::format("missing unit ({})", hint));
  }
  if (parts.unit.front() == ' ' || parts.unit.back() == ' ') return fail(text, "unexpected space");
  return parts;
}

template <std::size_t N>
std::optional<std::uint64_t> find_unit(const std::array<Unit, N>& units, std::string_view name) {
  for (const Unit& unit : units) {
    if (unit.name == name) return unit.multiplier;
  }
  return std::nullopt;
}

sched::Error unknown_unit(std::string_view text, std::string_view unit, std::string_view hint) {
  const std::string printable = quoted(unit);
  return fail(text, fmt::format("unknown unit '{}' ({})", printable.substr(1, printable.size() - 2), hint));
}

// Exact value of integer.fraction * multiplier, rounded half up; errors when not an int64.
sched::Result<std::int64_t> exact_value(std::string_view text, const Split& parts,
                                        std::uint64_t multiplier, std::string_view base_unit) {
  constexpr U128 kMax = static_cast<U128>(std::numeric_limits<std::int64_t>::max());
  U128 whole = 0;
  for (const char c : parts.integer) {
    whole = whole * 10 + static_cast<U128>(c - '0');
    if (whole > kMax) return fail(text, "value too large");
  }
  whole *= multiplier;
  if (whole > kMax) return fail(text, "value too large");
  if (parts.fraction.size() > 18) return fail(text, "too many decimals (at most 18)");
  U128 numerator = 0;
  U128 denominator = 1;
  for (const char c : parts.fraction) {
    numerator = numerator * 10 + static_cast<U128>(c - '0');
    denominator *= 10;
  }
  numerator *= multiplier;
  if (multiplier == 1 && numerator != 0) {
    return fail(text, fmt::format("not a whole number of {}", base_unit));
  }
  const U128 rounded = (2 * numerator + denominator) / (2 * denominator);
  const U128 total = whole + rounded;
  if (total > kMax) return fail(text, "value too large");
  return static_cast<std::int64_t>(total);
}

// integer.fraction * multiplier / divisor as a finite double.
sched::Result<double> real_value(std::string_view text, const Split& parts, double multiplier,
                                 double divisor) {
  const std::string number =
      parts.fraction.empty() ? std::string(parts.integer)
                             : fmt::format("{}.{}", parts.integer, parts.fraction);
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || end != number.data() + number.size()) return fail(text, "value too large");
  const double result = value * multiplier / divisor;
  if (!std::isfinite(result)) return fail(text, "value too large");
  return result;
}

bool is_ambiguous_bits(std::string_view unit) {
  static constexpr std::array<std::string_view, 12> kAmbiguous = {
      "b/s", "kb/s", "Kb/s", "Mb/s", "Gb/s", "Tb/s", "bps", "kbps", "Kbps", "Mbps", "Gbps", "Tbps"};
  for (const std::string_view a : kAmbiguous) {
    if (a == unit) return true;
  }
  return false;
}

// Candidates for exact spelling: prefer the shortest text; ties keep the earlier unit.
template <std::size_t N>
std::string exact_string(std::int64_t value, const std::array<Unit, N>& units) {
  if (value < 0) return fmt::format("{}{}", value, units.back().name);  // not valid in specs
  std::string best;
  for (const Unit& unit : units) {
    const auto mult = static_cast<U128>(unit.multiplier);
    const auto v = static_cast<U128>(value);
    if (unit.multiplier != 1 && v < mult) continue;
    if ((v * 1000) % mult != 0) continue;
    const auto whole = static_cast<std::uint64_t>(v / mult);
    auto thousandths = static_cast<unsigned>((v % mult) * 1000 / mult);
    std::string text = fmt::format("{}", whole);
    if (thousandths != 0) {
      std::string digits = fmt::format("{:03d}", thousandths);
      while (digits.back() == '0') digits.pop_back();
      text += "." + digits;
    }
    text += unit.name;
    if (best.empty() || text.size() < best.size()) best = std::move(text);
  }
  return best;
}

std::string scaled(double value, const std::array<std::string_view, 5>& names, double step) {
  const double magnitude = std::fabs(value);
  std::size_t index = 0;
  double divisor = 1;
  while (index + 1 < names.size() && magnitude >= divisor * step) {
    divisor *= step;
    ++index;
  }
  if (index == 0) return fmt::format("{:.0f} {}", value, names[0]);
  return fmt::format("{:.2f} {}", value / divisor, names[index]);
}

}  // namespace

sched::Result<Nanoseconds> parse_duration(std::string_view text) {
  auto parts = split(text, kDurationHint);
  if (!parts) return parts.error();
  const auto mult = find_unit(kDurationUnits, parts->unit);
  if (!mult) return unknown_unit(text, parts->unit, kDurationHint);
  return exact_value(text, *parts, *mult, "nanoseconds");
}

sched::Result<Bytes> parse_bytes(std::string_view text) {
  auto parts = split(text, kSizeHint);
  if (!parts) return parts.error();
  const auto mult = find_unit(kSizeUnits, parts->unit);
  if (!mult) {
    static constexpr std::array<std::string_view, 6> kBits = {"kb", "Kb", "Mb", "Gb", "Tb", "Pb"};
    if (std::find(kBits.begin(), kBits.end(), parts->unit) != kBits.end()) {
      return fail(text, fmt::format("ambiguous unit '{}': sizes are in bytes (B, GB, GiB)", parts->unit));
    }
    return unknown_unit(text, parts->unit, kSizeHint);
  }
  return exact_value(text, *parts, *mult, "bytes");
}

sched::Result<double> parse_bandwidth(std::string_view text) {
  auto parts = split(text, kBandwidthHint);
  if (!parts) return parts.error();
  const std::string_view unit = parts->unit;
  if (is_ambiguous_bits(unit)) {
    return fail(text, fmt::format("ambiguous unit '{}': write Gbit/s (bits) or GB/s (bytes)", unit));
  }
  if (const auto bits = find_unit(kBitUnits, unit)) {
    return real_value(text, *parts, static_cast<double>(*bits), 8.0);
  }
  if (unit.size() > 2 && unit.substr(unit.size() - 2) == "/s") {
    if (const auto bytes = find_unit(kSizeUnits, unit.substr(0, unit.size() - 2))) {
      return real_value(text, *parts, static_cast<double>(*bytes), 1.0);
    }
  }
  return unknown_unit(text, unit, kBandwidthHint);
}

sched::Result<double> parse_flop_rate(std::string_view text) {
  auto parts = split(text, kFlopHint);
  if (!parts) return parts.error();
  std::string_view unit = parts->unit;
  std::string_view prefix;
  if (unit.size() >= 6 && unit.substr(unit.size() - 6) == "FLOP/s") {
    prefix = unit.substr(0, unit.size() - 6);
  } else if (unit.size() >= 5 && unit.substr(unit.size() - 5) == "FLOPS") {
    prefix = unit.substr(0, unit.size() - 5);
  } else {
    return unknown_unit(text, unit, kFlopHint);
  }
  const auto mult = find_unit(kFlopPrefixes, prefix);
  if (!mult) return unknown_unit(text, unit, kFlopHint);
  return real_value(text, *parts, static_cast<double>(*mult), 1.0);
}

std::string format_duration(Nanoseconds ns) {
  if (ns > -1000 && ns < 1000) return fmt::format("{} ns", ns);
  return scaled(static_cast<double>(ns), {"ns", "us", "ms", "s", "ks"}, 1000.0);
}

std::string format_bandwidth(double bytes_per_s) {
  if (bytes_per_s >= kUnboundedBandwidth) return "unbounded";
  return scaled(bytes_per_s, {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"}, 1000.0);
}

std::string format_percent(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

std::string format_samples_per_s(double samples_per_s) {
  const int decimals = samples_per_s < 10 ? 3 : samples_per_s < 100 ? 2 : 1;
  return fmt::format("{:.{}f}", samples_per_s, decimals);
}

std::string format_flop_rate(double flops_per_s) {
  if (std::fabs(flops_per_s) >= 1e15) return fmt::format("{:.2f} PFLOP/s", flops_per_s / 1e15);
  return scaled(flops_per_s, {"FLOP/s", "kFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s"}, 1000.0);
}

std::string exact_duration_string(Nanoseconds ns) {
  static constexpr std::array<Unit, 4> kUnits = {{{"s", 1'000'000'000}, {"ms", 1'000'000},
                                                  {"us", 1'000}, {"ns", 1}}};
  return exact_string(ns, kUnits);
}

std::string exact_bytes_string(Bytes bytes) {
  static constexpr std::array<Unit, 11> kUnits = {{{"PiB", kKi * kKi * kKi * kKi * kKi},
                                                   {"TiB", kKi * kKi * kKi * kKi},
                                                   {"GiB", kKi * kKi * kKi},
                                                   {"MiB", kKi * kKi},
                                                   {"KiB", kKi},
                                                   {"PB", 1'000'000'000'000'000},
                                                   {"TB", 1'000'000'000'000},
                                                   {"GB", 1'000'000'000},
                                                   {"MB", 1'000'000},
                                                   {"kB", 1'000},
                                                   {"B", 1}}};
  return exact_string(bytes, kUnits);
}

}  // namespace pipeworks::sim
