// Human units for specs: "1.5ms", "80GiB", "900GB/s", "989TFLOP/s" parsed strictly into the
// project's units (ns, bytes, bytes/s, FLOP/s), and formatted back for people and for files.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "sched/result.h"
#include "sched/timeline.h"
#include "sched/units_text.h"

namespace pipeworks::sim {

using sched::Bytes;
using sched::Nanoseconds;

// Error messages quote the text and give the reason: "\"1.5xs\": unknown unit 'xs' (...)".
// Grammar (whole text, no leading/trailing space): DIGITS [ "." DIGITS ] [ " " ] UNIT.
// No sign, no exponent, no bare number. Values that are not a whole number of the base unit
// ("1.5ns", "0.5B") are rejected; larger units round to the nearest ns / byte ("1.1GiB").
//
//   durations   ns, us, µs, μs, ms, s
//   sizes       B; SI kB KB MB GB TB PB (powers of 1000); IEC KiB MiB GiB TiB PiB (powers of 1024)
//   bandwidth   any size unit + "/s" (bytes per second), or bit/s kbit/s Kbit/s Mbit/s Gbit/s
//               Tbit/s (SI bits per second). "Gb/s"-style spellings are rejected as ambiguous.
//   FLOP rate   FLOP/s kFLOP/s KFLOP/s MFLOP/s GFLOP/s TFLOP/s PFLOP/s (also written ...FLOPS)
sched::Result<Nanoseconds> parse_duration(std::string_view text);
sched::Result<Bytes> parse_bytes(std::string_view text);
sched::Result<double> parse_bandwidth(std::string_view text);  // bytes per second
sched::Result<double> parse_flop_rate(std::string_view text);  // FLOP per second

// A link or hand-off with no measurable bandwidth limit (a fit whose latency does not grow with
// size) is written as this rate, 1 PB/s, and printed as "unbounded".
inline constexpr double kUnboundedBandwidth = 1e15;

// For people: three significant-ish digits with the largest fitting unit.
// format_duration(1'500'000) == "1.50 ms", format_bandwidth(450e9) == "450.00 GB/s",
// format_bandwidth(kUnboundedBandwidth) == "unbounded";
// bytes are sched::format_bytes (one formatter for the whole project).
std::string format_duration(Nanoseconds ns);
using sched::format_bytes;
std::string format_bandwidth(double bytes_per_s);
std::string format_flop_rate(double flops_per_s);
// A share in [0, 1] as a percentage with one decimal: format_percent(0.0987) == "9.9%".
std::string format_percent(double fraction);
// Throughput with 3 decimals below 10, 2 below 100, else 1: "6.104", "42.17", "1234.5".
std::string format_samples_per_s(double samples_per_s);

// For files: an exact spelling that parse_duration / parse_bytes read back to the same value,
// using the largest unit that needs at most three decimals ("1.5ms", "3MiB", "1.5GB", "17B").
std::string exact_duration_string(Nanoseconds ns);
std::string exact_bytes_string(Bytes bytes);

}  // namespace pipeworks::sim
