// Reading spec JSON (model and cluster specs) with errors that name the field by JSON pointer:
// "model.json: /layers/3/forward/per_sample: \"1.5xs\": unknown unit 'xs' (...)".
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sched/result.h"
#include "sim/spec/units.h"

namespace pipeworks::sim {

using Json = nlohmann::json;

// Parses JSON text. Syntax errors and duplicate keys (ambiguous) are errors naming `source`.
sched::Result<Json> parse_spec_json(std::string_view text, std::string_view source);
// A spec file's text (at most kMaxSpecFileBytes), or an error naming the path.
inline constexpr std::size_t kMaxSpecFileBytes = std::size_t{1} << 28;
sched::Result<std::string> read_spec_file(const std::string& path);

// JSON pointer of a member / an element (RFC 6901 escaping of '~' and '/').
std::string pointer_child(std::string_view pointer, std::string_view key);
std::string pointer_index(std::string_view pointer, std::size_t index);

// Walks one spec and remembers the first error. Getters return the fallback (or 0) once an
// error is recorded so parsing code reads straight through; callers check ok() at the end.
//
// Quantities follow one rule: a string must carry a unit ("1.5ms"); a plain number is accepted
// only under a key that names the unit ("forward_ns": 1500000, "param_bytes": 4096,
// "bandwidth_bytes_per_s": 4.5e11, "flops_per_s": 4e14).
class SpecReader {
 public:
  explicit SpecReader(std::string source) : source_(std::move(source)) {}

  bool ok() const { return !error_.has_value(); }
  sched::Error error() const { return error_.value_or(sched::Error{"no error", std::nullopt}); }
  const std::string& source() const { return source_; }

  // "<source>: <pointer>: <value dump>: <reason>"; the value part is left out when null.
  void fail(std::string_view pointer, const Json* value, std::string_view reason);

  bool expect_object(const Json& value, std::string_view pointer);
  bool expect_array(const Json& value, std::string_view pointer);
  // Fails on the first member of `object` whose key is not in `allowed` (catches typos).
  void allow_keys(const Json& object, std::string_view pointer,
                  std::initializer_list<std::string_view> allowed);

  // Plain members. `fallback` empty means the member is required.
  std::string string(const Json& object, std::string_view pointer, std::string_view key,
                     std::optional<std::string> fallback);
  std::int64_t integer(const Json& object, std::string_view pointer, std::string_view key,
                       std::int64_t min_value, std::optional<std::int64_t> fallback);
  double positive_number(const Json& object, std::string_view pointer, std::string_view key,
                         std::optional<double> fallback);

  // Locates quantity `name`: when `name` ends in `unit_suffix` only that key is looked up and
  // numbers are allowed; otherwise `name` (strings only) or `name + unit_suffix` (either), never
  // both. `value` is null when absent.
  struct Field {
    const Json* value = nullptr;
    std::string pointer;
    bool number_allowed = false;
    std::string number_key;  // the key under which a plain number would be accepted
  };
  Field field(const Json& object, std::string_view pointer, std::string_view name,
              std::string_view unit_suffix);

  // Leaf readers for a located field (value must be non-null).
  Nanoseconds duration_value(const Field& field);
  Bytes bytes_value(const Field& field);

  // Member readers. `fallback` empty means required.
  Nanoseconds duration(const Json& object, std::string_view pointer, std::string_view name,
                       std::optional<Nanoseconds> fallback);
  Bytes bytes(const Json& object, std::string_view pointer, std::string_view name,
              std::optional<Bytes> fallback);
  // name ends in "_bytes_per_s"; must be > 0.
  double bandwidth(const Json& object, std::string_view pointer, std::string_view name,
                   std::optional<double> fallback);
  // name ends in "_per_s" ("flops_per_s"); must be > 0.
  double flop_rate(const Json& object, std::string_view pointer, std::string_view name,
                   std::optional<double> fallback);

 private:
  const Json* required(const Json& object, std::string_view pointer, std::string_view key,
                       bool has_fallback);
  std::optional<std::int64_t> whole_number(const Field& field, std::string_view unit_name);
  double rate(const Json& object, std::string_view pointer, std::string_view name,
              std::optional<double> fallback, sched::Result<double> (*parse)(std::string_view));

  std::string source_;
  std::optional<sched::Error> error_;
};

}  // namespace pipeworks::sim
