// Harness: model spec JSON (sim/model_spec.h). Properties: an error names the input
// and, unless it reports a missing field or a duplicate key, a JSON pointer that exists in it;
// what parses passes check_model_spec, writes (model_spec_to_json) and reads
// back equal, and writing again gives the same text; and it goes through partitioning, the cost
// model and the simulator with a reference cluster without an overflow (the sanitizers abort on
// one) or a broken figure.
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sim/model_spec.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/json_pointers.h"
#include "tests/fuzz/spec_simulation.h"

namespace {

using namespace pipeworks;
using fuzz::require;

constexpr std::string_view kSource = "fuzz-model.json";

void check_error(std::string_view text, const std::string& message) {
  require(message.rfind(kSource, 0) == 0, "a model spec error names its source", [&] { return message; });
  // A missing field has no value to point at; a duplicate key is named where it first repeats,
  // which the parsed document (the last duplicate wins) may not hold.
  for (const char* unresolved : {"invalid JSON", "missing required field", "duplicate key"}) {
    if (message.find(unresolved) != std::string::npos) return;
  }
  const auto document = nlohmann::json::parse(text, nullptr, false);
  if (document.is_discarded()) return;
  require(fuzz::message_pointer_resolves(message, kSource, document),
          "a model spec error's pointer exists in the input", [&] { return message; });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto spec = sim::parse_model_spec(text, kSource);
  if (!spec) {
    check_error(text, spec.error().message);
    return 0;
  }
  const auto checked = sim::check_model_spec(*spec);
  require(checked.ok(), "a parsed model spec passes check_model_spec",
          [&] { return checked ? std::string() : checked.error().message; });
  const std::string written = sim::model_spec_to_json(*spec);
  auto again = sim::parse_model_spec(written, kSource);
  require(again && *again == *spec, "model spec parse -> write -> parse gives the same spec",
          [&] { return again ? written : again.error().message + "\n" + written; });
  require(sim::model_spec_to_json(*again) == written, "a written model spec writes the same text again",
          [&] { return written; });
  fuzz::simulate_specs(*spec, fuzz::reference_cluster());
  return 0;
}
