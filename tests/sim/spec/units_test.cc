// Strict unit parsing and formatting: exact values, every rejection class, round trips.
#include <catch2/catch.hpp>

#include "sim/spec/units.h"

namespace pipeworks::sim {
namespace {

std::string duration_error(std::string_view text) {
  auto r = parse_duration(text);
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

TEST_CASE("durations parse exactly") {
  CHECK(*parse_duration("1.5ms") == 1'500'000);
  CHECK(*parse_duration("20us") == 20'000);
  CHECK(*parse_duration("20\xC2\xB5s") == 20'000);
  CHECK(*parse_duration("20\xCE\xBCs") == 20'000);
  CHECK(*parse_duration("3ns") == 3);
  CHECK(*parse_duration("2s") == 2'000'000'000);
  CHECK(*parse_duration("0ns") == 0);
  CHECK(*parse_duration("2 s") == 2'000'000'000);
  CHECK(*parse_duration("1.0005us") == 1001);  // 1000.5 ns rounds half up
  CHECK(*parse_duration("9223372036854775807ns") == 9'223'372'036'854'775'807);
}

TEST_CASE("durations reject bad text with the reason") {
  CHECK(duration_error("1.5xs") == "\"1.5xs\": unknown unit 'xs' (durations take ns, us, ms or s)");
  CHECK_THAT(duration_error("1500"), Catch::Contains("missing unit"));
  CHECK_THAT(duration_error(""), Catch::Contains("empty"));
  CHECK_THAT(duration_error("-1ms"), Catch::Contains("negative"));
  CHECK_THAT(duration_error("+1ms"), Catch::Contains("sign"));
  CHECK_THAT(duration_error("1.5.5ms"), Catch::Contains("malformed number"));
  CHECK_THAT(duration_error("1.ms"), Catch::Contains("malformed number"));
  CHECK_THAT(duration_error(".5ms"), Catch::Contains("expected a number"));
  CHECK_THAT(duration_error("1.5ms "), Catch::Contains("unexpected space"));
  CHECK_THAT(duration_error(" 1.5ms"), Catch::Contains("expected a number"));
  CHECK_THAT(duration_error("1.5msx"), Catch::Contains("unknown unit 'msx'"));
  CHECK_THAT(duration_error("nan"), Catch::Contains("expected a number"));
  CHECK_THAT(duration_error("inf s"), Catch::Contains("expected a number"));
  CHECK_THAT(duration_error("1e3ms"), Catch::Contains("unknown unit 'e3ms'"));
  CHECK_THAT(duration_error("0.5ns"), Catch::Contains("not a whole number of nanoseconds"));
  CHECK_THAT(duration_error("9223372036854775808ns"), Catch::Contains("too large"));
  CHECK_THAT(duration_error("9223372037s"), Catch::Contains("too large"));
  CHECK_THAT(duration_error("99999999999999999999999999999s"), Catch::Contains("too large"));
  CHECK_THAT(duration_error("1  ms"), Catch::Contains("unexpected space"));
  CHECK_THAT(duration_error("1.1234567890123456789s"), Catch::Contains("too many decimals"));
}

TEST_CASE("sizes parse exactly in SI and IEC units") {
  CHECK(*parse_bytes("80GiB") == 80LL * 1024 * 1024 * 1024);
  CHECK(*parse_bytes("512MiB") == 512LL * 1024 * 1024);
  CHECK(*parse_bytes("1.5GB") == 1'500'000'000);
  CHECK(*parse_bytes("4096B") == 4096);
  CHECK(*parse_bytes("10KiB") == 10240);
  CHECK(*parse_bytes("1kB") == 1000);
  CHECK(*parse_bytes("1.1GiB") == 1'181'116'006);  // 1181116006.4 rounds down
  CHECK_FALSE(parse_bytes("1.5B").ok());
  CHECK_THAT(parse_bytes("8Gb").error().message, Catch::Contains("ambiguous unit 'Gb'"));
  CHECK_THAT(parse_bytes("8gib").error().message, Catch::Contains("unknown unit 'gib'"));
  CHECK_THAT(parse_bytes("9000PiB").error().message, Catch::Contains("too large"));
  CHECK_THAT(parse_bytes("80").error().message, Catch::Contains("missing unit"));
}

TEST_CASE("bandwidth and FLOP rates") {
  CHECK(*parse_bandwidth("900GB/s") == 900e9);
  CHECK(*parse_bandwidth("25Gbit/s") == 25e9 / 8);
  CHECK(*parse_bandwidth("100GiB/s") == 100.0 * 1024 * 1024 * 1024);
  CHECK(*parse_bandwidth("400Gbit/s") == 50e9);
  CHECK_THAT(parse_bandwidth("25Gb/s").error().message, Catch::Contains("ambiguous"));
  CHECK_THAT(parse_bandwidth("25Gbps").error().message, Catch::Contains("ambiguous"));
  CHECK_THAT(parse_bandwidth("25GB").error().message, Catch::Contains("unknown unit 'GB'"));
  CHECK(*parse_flop_rate("989TFLOP/s") == 989e12);
  CHECK(*parse_flop_rate("1.5PFLOPS") == 1.5e15);
  CHECK(*parse_flop_rate("50GFLOP/s") == 50e9);
  CHECK_THAT(parse_flop_rate("989TOPS").error().message, Catch::Contains("unknown unit"));
  CHECK_THAT(parse_flop_rate("989XFLOP/s").error().message, Catch::Contains("unknown unit"));
  std::string huge(400, '9');
  CHECK_THAT(parse_flop_rate(huge + "FLOP/s").error().message, Catch::Contains("too large"));
}

TEST_CASE("human formatting") {
  CHECK(format_duration(1'500'000) == "1.50 ms");
  CHECK(format_duration(999) == "999 ns");
  CHECK(format_duration(20'000) == "20.00 us");
  CHECK(format_duration(2'500'000'000) == "2.50 s");
  CHECK(format_bytes(1'342'177'280) == "1.25 GiB");
  CHECK(format_bytes(512) == "512 B");
  CHECK(format_bytes(3 << 20) == "3.00 MiB");
  CHECK(format_bandwidth(450e9) == "450.00 GB/s");
  CHECK(format_bandwidth(kUnboundedBandwidth) == "unbounded");
  CHECK(format_bandwidth(999e12) == "999.00 TB/s");
  CHECK(format_flop_rate(989e12) == "989.00 TFLOP/s");
  CHECK(format_flop_rate(1.5e15) == "1.50 PFLOP/s");
}

TEST_CASE("exact strings read back to the same value") {
  CHECK(exact_duration_string(1'500'000) == "1.5ms");
  CHECK(exact_duration_string(20'000) == "20us");
  CHECK(exact_duration_string(0) == "0ns");
  CHECK(exact_duration_string(1'234'567) == "1234567ns");
  CHECK(exact_bytes_string(3 << 20) == "3MiB");
  CHECK(exact_bytes_string(1'500'000'000) == "1.5GB");
  CHECK(exact_bytes_string(17) == "17B");
  CHECK(exact_bytes_string(1536) == "1536B");  // shorter than "1.5KiB"
  CHECK(exact_bytes_string(1'610'612'736) == "1.5GiB");
  for (const Nanoseconds ns : {Nanoseconds{0}, Nanoseconds{1}, Nanoseconds{999'999}, Nanoseconds{1'000'500},
                               Nanoseconds{123'456'789'012}, Nanoseconds{9'223'372'036'854'775'807}}) {
    CHECK(*parse_duration(exact_duration_string(ns)) == ns);
  }
  for (const Bytes b : {Bytes{0}, Bytes{1}, Bytes{1023}, Bytes{1'181'116'006}, Bytes{3'221'225'472},
                        Bytes{9'223'372'036'854'775'807}}) {
    CHECK(*parse_bytes(exact_bytes_string(b)) == b);
  }
}

}  // namespace
}  // namespace pipeworks::sim
