// The properties the model and cluster spec harnesses share: an error names the input and, where
// it has one, a JSON pointer that exists in it; what parses passes its check, writes and reads
// back equal, and writing again gives the same text.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sched/result.h"
#include "tests/fuzz/fuzz_check.h"

namespace pipeworks::fuzz {

// One spec format: its name in messages ("model spec"), the source name errors must start with,
// and its parser, checker and writer.
template <class Spec>
struct SpecFormat {
  std::string_view what;
  std::string_view source;
  sched::Result<Spec> (*parse)(std::string_view, std::string_view);
  sched::Status (*check)(const Spec&);
  std::string (*write)(const Spec&);
};

// An error of parsing `text`: names `source` and, unless it reports invalid JSON, a missing field
// or a duplicate key, a JSON pointer that exists in the parsed document.
void check_spec_error(std::string_view text, const std::string& message, std::string_view source,
                      std::string_view what);

// The spec `text` holds, with every property above checked; none when it is refused.
template <class Spec>
std::optional<Spec> parse_and_round_trip(std::string_view text, const SpecFormat<Spec>& format) {
  auto spec = format.parse(text, format.source);
  if (!spec) {
    check_spec_error(text, spec.error().message, format.source, format.what);
    return std::nullopt;
  }
  const std::string what(format.what);
  const auto checked = format.check(*spec);
  require(checked.ok(), "a parsed " + what + " passes its check",
          [&] { return checked ? std::string() : checked.error().message; });
  const std::string written = format.write(*spec);
  auto again = format.parse(written, format.source);
  require(again && *again == *spec, what + " parse -> write -> parse gives the same spec",
          [&] { return again ? written : again.error().message + "\n" + written; });
  require(format.write(*again) == written, "a written " + what + " writes the same text again",
          [&] { return written; });
  return std::move(spec).value();
}

}  // namespace pipeworks::fuzz
