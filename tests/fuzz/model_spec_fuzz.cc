// Harness: model spec JSON (sim/spec/model_spec.h). Properties: an error names the input
// and, unless it reports a missing field or a duplicate key, a JSON pointer that exists in it;
// what parses passes check_model_spec, writes (model_spec_to_json) and reads
// back equal, and writing again gives the same text (spec_round_trip.h); and it goes through
// partitioning, the cost model and the simulator with a reference cluster without an overflow (the
// sanitizers abort on one) or a broken figure.
#include <cstdint>
#include <string_view>

#include "sim/spec/model_spec.h"
#include "tests/fuzz/spec_round_trip.h"
#include "tests/fuzz/spec_simulation.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pipeworks;
  static const fuzz::SpecFormat<sim::ModelSpec> kFormat{"model spec", "fuzz-model.json", sim::parse_model_spec,
                                                        sim::check_model_spec, sim::model_spec_to_json};
  const auto spec = fuzz::parse_and_round_trip(std::string_view(reinterpret_cast<const char*>(data), size), kFormat);
  if (spec) fuzz::simulate_specs(*spec, fuzz::reference_cluster());
  return 0;
}
