// The spellings every record's writers share (sim/spec/field.h): cells as CSV and people read
// them, and the unit a field's name promises.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "sim/spec/field.h"

namespace pipeworks::sim {
namespace {

TEST_CASE("field: a name's suffix promises its unit, other names promise none", "[fields]") {
  CHECK(unit_named_by("makespan_ns") == FieldUnit::kNanoseconds);
  CHECK(unit_named_by("peak_bytes") == FieldUnit::kBytes);
  CHECK(unit_named_by("bubble_fraction") == FieldUnit::kFraction);
  CHECK(unit_named_by("samples_per_s") == FieldUnit::kSamplesPerSecond);
  CHECK(unit_named_by("tokens_per_s") == FieldUnit::kTokensPerSecond);
  CHECK_FALSE(unit_named_by("stages").has_value());
  CHECK_FALSE(unit_named_by("_ns").has_value());  // a suffix alone names nothing
  CHECK_FALSE(unit_named_by("ns").has_value());
  CHECK_FALSE(unit_named_by("bytes_total").has_value());
}

TEST_CASE("field: values as CSV cells", "[fields]") {
  CHECK(value_text(FieldValue{true}, FieldUnit::kFlag) == "yes");
  CHECK(value_text(FieldValue{7}, FieldUnit::kCount) == "7");
  CHECK(value_text(FieldValue{std::int64_t{1} << 40}, FieldUnit::kBytes) == "1099511627776");
  CHECK(value_text(FieldValue{0.25}, FieldUnit::kFraction) == "0.250000");
  CHECK(value_text(FieldValue{1234.5678}, FieldUnit::kSamplesPerSecond) == "1234.57");
  CHECK(value_text(FieldValue{std::vector<int>{0, 3, 5}}, FieldUnit::kLayers) == "0,3,5");
  CHECK(value_text(FieldValue{std::vector<std::int64_t>{10, 20}}, FieldUnit::kBytes) == "10,20");
  CHECK(unit_name(FieldUnit::kNumber) == "number");
}

}  // namespace
}  // namespace pipeworks::sim
