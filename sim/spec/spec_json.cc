// Spec JSON helpers: strict parsing (duplicate keys rejected), JSON pointers, and SpecReader's
// typed getters that turn every bad value into "<source>: <pointer>: <value>: <reason>".
#include "sim/spec/spec_json.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "sched/text_file.h"

namespace pipeworks::sim {
namespace {

// One open container while parsing, for pointers to duplicate keys.
struct Frame {
  bool is_array = false;
  std::size_t next_index = 0;
  std::string key;
  std::set<std::string> keys;
};

std::string frames_pointer(const std::vector<Frame>& frames) {
  std::string pointer;
  for (const Frame& frame : frames) {
    pointer = frame.is_array ? pointer_index(pointer, frame.next_index - 1)
                             : pointer_child(pointer, frame.key);
  }
  return pointer;
}

std::string display_pointer(std::string_view pointer) {
  return pointer.empty() ? std::string("(root)") : std::string(pointer);
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Deepest nesting of [ and { outside strings; specs need 4, hostile input may need millions
// (and would exhaust the stack of the recursive JSON value destructor).
std::size_t nesting_depth(std::string_view text) {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

constexpr std::size_t kMaxDepth = 64;

// A SAX pass that finds the first duplicate key, in time linear in the text (nlohmann's
// callback parser rescans a container on every value it closes: quadratic in a spec's layers).
struct DuplicateKeys {
  std::vector<Frame> frames;
  std::optional<std::string> duplicate;

  void value() {
    if (!frames.empty() && frames.back().is_array) ++frames.back().next_index;
  }
  bool open(bool is_array) {
    value();
    frames.push_back(Frame{is_array, 0, {}, {}});
    return true;
  }
  bool close() {
    if (!frames.empty()) frames.pop_back();
    return true;
  }
  bool null() { return value(), true; }
  bool boolean(bool) { return value(), true; }
  bool number_integer(Json::number_integer_t) { return value(), true; }
  bool number_unsigned(Json::number_unsigned_t) { return value(), true; }
  bool number_float(Json::number_float_t, const Json::string_t&) { return value(), true; }
  bool string(Json::string_t&) { return value(), true; }
  bool binary(Json::binary_t&) { return value(), true; }
  bool start_object(std::size_t) { return open(false); }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(true); }
  bool end_array() { return close(); }
  bool key(Json::string_t& name) {
    if (frames.empty()) return true;
    Frame& frame = frames.back();
    frame.key = name;
    if (!frame.keys.insert(frame.key).second) {
      duplicate = frames_pointer(frames);
      return false;  // the first one is reported
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }
};


}  // namespace

sched::Result<Json> parse_spec_json(std::string_view text, std::string_view source) {
  if (nesting_depth(text) > kMaxDepth) {
    return sched::Error{fmt::format("{}: invalid JSON: nested deeper than {} levels", source, kMaxDepth),
                        std::nullopt};
  }
  Json json;
  try {
    json = Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    std::string what = e.what();
    if (const auto end = what.find("] "); what.rfind("[json.exception", 0) == 0 && end != std::string::npos) {
      what = what.substr(end + 2);
    }
    return sched::Error{fmt::format("{}: invalid JSON: {}", source, what), std::nullopt};
  }
  DuplicateKeys keys;
  Json::sax_parse(text.begin(), text.end(), &keys);
  if (keys.duplicate) {
    return sched::Error{fmt::format("{}: {}: duplicate key (ambiguous)", source, *keys.duplicate),
                        std::nullopt};
  }
  return json;
}

sched::Result<std::string> read_spec_file(const std::string& path) {
  return sched::read_text_file(path, kMaxSpecFileBytes);
}

std::string pointer_child(std::string_view pointer, std::string_view key) {
  std::string out(pointer);
  out += '/';
  for (const char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string pointer_index(std::string_view pointer, std::size_t index) {
  return fmt::format("{}/{}", pointer, index);
}

void SpecReader::fail(std::string_view pointer, const Json* value, std::string_view reason) {
  if (error_) return;
  std::string message = fmt::format("{}: {}: ", source_, display_pointer(pointer));
  if (value != nullptr) {
    message += value->dump(-1, ' ', false, Json::error_handler_t::replace);
    message += ": ";
  }
  message += reason;
  error_ = sched::Error{std::move(message), std::nullopt};
}

bool SpecReader::expect_object(const Json& value, std::string_view pointer) {
  if (value.is_object()) return true;
  fail(pointer, &value, "expected a JSON object");
  return false;
}

bool SpecReader::expect_array(const Json& value, std::string_view pointer) {
  if (value.is_array()) return true;
  fail(pointer, &value, "expected a JSON array");
  return false;
}

void SpecReader::allow_keys(const Json& object, std::string_view pointer,
                            std::initializer_list<std::string_view> allowed) {
  if (!object.is_object()) return;
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (const std::string_view name : allowed) known = known || name == key;
    if (!known) {
      std::string names;
      for (const std::string_view name : allowed) names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
      fail(pointer_child(pointer, key), nullptr, fmt::format("unknown field (expected one of: {})", names));
      return;
    }
  }
}

const Json* SpecReader::required(const Json& object, std::string_view pointer,
                                 std::string_view key, bool has_fallback) {
  if (!ok() || !object.is_object()) return nullptr;
  const auto it = object.find(key);
  if (it != object.end()) return &*it;
  if (!has_fallback) fail(pointer_child(pointer, key), nullptr, "missing required field");
  return nullptr;
}

std::string SpecReader::string(const Json& object, std::string_view pointer, std::string_view key,
                               std::optional<std::string> fallback) {
  const Json* value = required(object, pointer, key, fallback.has_value());
  if (value == nullptr) return fallback.value_or("");
  if (!value->is_string()) {
    fail(pointer_child(pointer, key), value, "expected a string");
    return fallback.value_or("");
  }
  // Names and descriptions reach terminals, tables and reports: a control character (an escape
  // sequence, a carriage return) is refused here, where every spec string is read.
  std::string text = value->get<std::string>();
  const auto control = std::find_if(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
  if (control != text.end()) {
    fail(pointer_child(pointer, key), value,
         fmt::format("control character U+{:04X} at offset {} (names and descriptions are printed)",
                     static_cast<unsigned char>(*control), control - text.begin()));
    return fallback.value_or("");
  }
  return text;
}

std::int64_t SpecReader::integer(const Json& object, std::string_view pointer, std::string_view key,
                                 std::int64_t min_value, std::optional<std::int64_t> fallback) {
  const Json* value = required(object, pointer, key, fallback.has_value());
  if (value == nullptr) return fallback.value_or(0);
  const std::string where = pointer_child(pointer, key);
  if (!value->is_number_integer() || (value->is_number_unsigned() &&
                                      value->get<std::uint64_t>() > static_cast<std::uint64_t>(
                                                                        std::numeric_limits<std::int64_t>::max()))) {
    fail(where, value, "expected an integer");
    return fallback.value_or(0);
  }
  const auto result = value->get<std::int64_t>();
  if (result < min_value) {
    fail(where, value, fmt::format("must be at least {}", min_value));
    return fallback.value_or(0);
  }
  return result;
}

double SpecReader::positive_number(const Json& object, std::string_view pointer,
                                   std::string_view key, std::optional<double> fallback) {
  const Json* value = required(object, pointer, key, fallback.has_value());
  if (value == nullptr) return fallback.value_or(0);
  if (!value->is_number() || !std::isfinite(value->get<double>()) || value->get<double>() <= 0) {
    fail(pointer_child(pointer, key), value, "expected a positive number");
    return fallback.value_or(0);
  }
  return value->get<double>();
}

SpecReader::Field SpecReader::field(const Json& object, std::string_view pointer,
                                    std::string_view name, std::string_view unit_suffix) {
  Field result;
  if (!ok() || !object.is_object()) return result;
  if (ends_with(name, unit_suffix)) {
    result.pointer = pointer_child(pointer, name);
    result.number_allowed = true;
    result.number_key = std::string(name);
    const auto it = object.find(name);
    if (it != object.end()) result.value = &*it;
    return result;
  }
  const std::string suffixed = fmt::format("{}{}", name, unit_suffix);
  result.number_key = suffixed;
  const auto plain = object.find(name);
  const auto with_unit = object.find(suffixed);
  if (plain != object.end() && with_unit != object.end()) {
    fail(pointer, nullptr, fmt::format("both '{}' and '{}' given; use one", name, suffixed));
    return result;
  }
  if (plain != object.end()) {
    result.value = &*plain;
    result.pointer = pointer_child(pointer, name);
  } else if (with_unit != object.end()) {
    result.value = &*with_unit;
    result.pointer = pointer_child(pointer, suffixed);
    result.number_allowed = true;
  } else {
    result.pointer = pointer_child(pointer, name);  // absent: name the plain key
  }
  return result;
}

std::optional<std::int64_t> SpecReader::whole_number(const Field& f, std::string_view unit_name) {
  const Json& value = *f.value;
  if (!f.number_allowed) {
    fail(f.pointer, &value,
         fmt::format("a plain number needs the unit in the field name (write '{}' or a string "
                     "with a unit)",
                     f.number_key));
    return std::nullopt;
  }
  if (value.is_number_unsigned()) {
    if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      fail(f.pointer, &value, "value too large");
      return std::nullopt;
    }
    return static_cast<std::int64_t>(value.get<std::uint64_t>());
  }
  if (value.is_number_integer()) {
    if (value.get<std::int64_t>() < 0) {
      fail(f.pointer, &value, "negative values are not allowed");
      return std::nullopt;
    }
    return value.get<std::int64_t>();
  }
  const double number = value.get<double>();
  if (!std::isfinite(number) || number < 0 || number >= 9.2e18 || number != std::floor(number)) {
    fail(f.pointer, &value, fmt::format("expected a whole, non-negative number of {}", unit_name));
    return std::nullopt;
  }
  return static_cast<std::int64_t>(number);
}

Nanoseconds SpecReader::duration_value(const Field& f) {
  if (!ok() || f.value == nullptr) return 0;
  if (f.value->is_string()) {
    auto parsed = parse_duration(f.value->get<std::string>());
    if (!parsed) fail(f.pointer, nullptr, parsed.error().message);
    return parsed ? *parsed : 0;
  }
  if (!f.value->is_number()) {
    fail(f.pointer, f.value, "expected a duration such as \"1.5ms\"");
    return 0;
  }
  return whole_number(f, "ns").value_or(0);
}

Bytes SpecReader::bytes_value(const Field& f) {
  if (!ok() || f.value == nullptr) return 0;
  if (f.value->is_string()) {
    auto parsed = parse_bytes(f.value->get<std::string>());
    if (!parsed) fail(f.pointer, nullptr, parsed.error().message);
    return parsed ? *parsed : 0;
  }
  if (!f.value->is_number()) {
    fail(f.pointer, f.value, "expected a size such as \"80GiB\"");
    return 0;
  }
  return whole_number(f, "bytes").value_or(0);
}

Nanoseconds SpecReader::duration(const Json& object, std::string_view pointer,
                                 std::string_view name, std::optional<Nanoseconds> fallback) {
  const Field f = field(object, pointer, name, "_ns");
  if (!ok()) return 0;
  if (f.value == nullptr) {
    if (!fallback) fail(f.pointer, nullptr, "missing required field");
    return fallback.value_or(0);
  }
  return duration_value(f);
}

Bytes SpecReader::bytes(const Json& object, std::string_view pointer, std::string_view name,
                        std::optional<Bytes> fallback) {
  const Field f = field(object, pointer, name, "_bytes");
  if (!ok()) return 0;
  if (f.value == nullptr) {
    if (!fallback) fail(f.pointer, nullptr, "missing required field");
    return fallback.value_or(0);
  }
  return bytes_value(f);
}

double SpecReader::rate(const Json& object, std::string_view pointer, std::string_view name,
                        std::optional<double> fallback,
                        sched::Result<double> (*parse)(std::string_view)) {
  const Json* value = required(object, pointer, name, fallback.has_value());
  if (value == nullptr) return fallback.value_or(0);
  const std::string where = pointer_child(pointer, name);
  double result = 0;
  if (value->is_string()) {
    auto parsed = parse(value->get<std::string>());
    if (!parsed) {
      fail(where, nullptr, parsed.error().message);
      return 0;
    }
    result = *parsed;
  } else if (value->is_number()) {
    result = value->get<double>();
  } else {
    fail(where, value, "expected a string with a unit or a number");
    return 0;
  }
  if (!std::isfinite(result) || result <= 0) {
    fail(where, value, "must be positive");
    return 0;
  }
  return result;
}

double SpecReader::bandwidth(const Json& object, std::string_view pointer, std::string_view name,
                             std::optional<double> fallback) {
  return rate(object, pointer, name, fallback, &parse_bandwidth);
}

double SpecReader::flop_rate(const Json& object, std::string_view pointer, std::string_view name,
                             std::optional<double> fallback) {
  return rate(object, pointer, name, fallback, &parse_flop_rate);
}

}  // namespace pipeworks::sim
