// Hostile specs and sizes inside the simulator's inputs: a link table past its device limit, a
// model past its layer limit, a capacity of 0, control characters in names and a FLOP rate too
// low for any representable time are refused with their figure and the limit; what is
// accepted round-trips.
#include <string>

#include <catch2/catch.hpp>

#include "sim/engine/cost_model.h"
#include "sim/spec/cluster_presets.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/model_presets.h"
#include "sim/spec/model_spec.h"

namespace pipeworks::sim {
namespace {

std::string cluster_with_memory(const std::string& memory) {
  return R"({"name": "c", "devices": 2, "device": {"memory_bytes": )" + memory +
         R"(}, "devices_per_node": 2, "intra_node": {"bandwidth_bytes_per_s": "1GB/s"}})";
}

template <class Set>
PresetOptions options(Set set) {
  PresetOptions o;
  set(o);
  return o;
}

TEST_CASE("a cost model past the device limit is refused with its link table's size", "[sim][hostile]") {
  CHECK(check_cost_model_devices(kMaxCostModelDevices));
  const auto refused = check_cost_model_devices(65536);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message ==
        "65536 devices need a 65536 x 65536 link table (4294967296 entries, 17.2 GB); the simulator takes at most "
        "4096 devices");
  CostModel model;
  model.stages.resize(1);
  model.num_devices = 46341;  // past it, num_devices^2 no longer fits an int
  CHECK_THAT(check_cost_model(model).error().message, Catch::Contains("46341 devices need a 46341 x 46341"));
}

TEST_CASE("a model spec past the layer limit is refused before its layers are read", "[sim][hostile]") {
  std::string layers = "[";
  for (int i = 0; i <= kMaxModelLayers; ++i) layers += i == 0 ? "{}" : ",{}";
  const auto refused = parse_model_spec(R"({"name": "deep", "input_bytes": "1KiB", "layers": )" + layers + "]}", "deep.json");
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("/layers"));
  CHECK_THAT(refused.error().message, Catch::Contains("100001 layers; at most 100000 are supported"));
  CHECK_THAT(model_preset("uniform", options([](PresetOptions& o) { o.layers = kMaxModelLayers + 1; })).error().message,
             Catch::Contains("layers must be in [1, 100000]"));
}

TEST_CASE("a spec's duplicate keys are still found, with their pointer", "[sim][hostile]") {
  const auto refused = parse_model_spec(
      R"({"name": "m", "input_bytes": "1KiB", "layers": [{"name": "a", "forward": "1ms", "backward": "1ms"},
          {"name": "b", "forward": "1ms", "forward": "2ms", "backward": "1ms"}]})",
      "m.json");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "m.json: /layers/1/forward: duplicate key (ambiguous)");
}

TEST_CASE("a capacity of 0 is refused and unknown memory is said so", "[sim][hostile]") {
  const auto zero = parse_cluster_spec(cluster_with_memory("\"0B\""), "c.json");
  REQUIRE_FALSE(zero);
  CHECK_THAT(zero.error().message, Catch::Contains("/device/memory_bytes"));
  CHECK_THAT(zero.error().message, Catch::Contains("write \"unknown\" when the memory is not known"));
  CHECK_FALSE(parse_cluster_spec(cluster_with_memory("0"), "c.json"));
  const auto unknown = parse_cluster_spec(cluster_with_memory("\"unknown\""), "c.json");
  REQUIRE(unknown);
  CHECK(unknown->devices[0].memory_bytes == 0);
  const std::string written = cluster_spec_to_json(*unknown);
  CHECK_THAT(written, Catch::Contains("\"memory_bytes\": \"unknown\""));
  CHECK(*parse_cluster_spec(written, "again.json") == *unknown);
}

TEST_CASE("control characters in spec names are refused where specs are read", "[sim][hostile]") {
  const auto model = parse_model_spec(
      "{\"name\": \"m\", \"input_bytes\": \"1KiB\", \"layers\": [{\"name\": \"a\\u001b[2J\", \"forward\": \"1ms\", "
      "\"backward\": \"1ms\"}]}",
      "m.json");
  REQUIRE_FALSE(model);
  CHECK_THAT(model.error().message, Catch::Contains("/layers/0/name"));
  CHECK_THAT(model.error().message, Catch::Contains("control character U+001B at offset 1"));
  CHECK(model.error().message.find('\x1b') == std::string::npos);
  const auto cluster = parse_cluster_spec(
      R"({"name": "c\r", "devices": 1, "device": {"memory_bytes": "1GiB"}, "devices_per_node": 1})", "c.json");
  REQUIRE_FALSE(cluster);
  CHECK_THAT(cluster.error().message, Catch::Contains("control character U+000D"));
}

TEST_CASE("a FLOP rate too low for any representable layer time names the rate, not the model", "[sim][hostile]") {
  const auto refused = model_preset("gpt3-175b", options([](PresetOptions& o) { o.flops_per_s = 1; }));
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("option 'flops_per_s' is 1 FLOP/s"));
  CHECK_THAT(refused.error().message, Catch::Contains("the rate must be at least"));
  CHECK_FALSE(model_preset("amoeba", options([](PresetOptions& o) { o.flops_per_s = 1; })));
  CHECK(model_preset("gpt3-175b", options([](PresetOptions& o) { o.flops_per_s = 1e12; })));
  ClusterSpec slow = cluster_preset("dgx-h100").value();
  for (DeviceSpec& d : slow.devices) {
    d.flops_per_s = 1;
    d.gpu.reset();  // else the GPT is timed on the GPU cost model, not at the rate
  }
  CHECK_THAT(model_preset_on("gpt3-175b", {}, slow).error().message,
             Catch::StartsWith("cluster 'dgx-h100''s device flops_per_s is 1 FLOP/s"));
  CHECK_THAT(model_preset("gpt2-small", options([](PresetOptions& o) { o.hidden = kMaxPresetHidden + 1; })).error().message,
             Catch::Contains("option 'hidden' must be in [1, 1000000]"));
}

TEST_CASE("a GPT too large for the simulator's clock on a GPU cost model says which layer", "[sim][hostile]") {
  const auto refused = model_preset("gpt", options([](PresetOptions& o) {
    o.gpu = gpu_kernel_model("a100-sxm-80gb").value();
    o.sequence = kMaxPresetSequence;
    o.hidden = kMaxPresetHidden;
    o.heads = kMaxPresetHidden;
  }));
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::StartsWith("layer 'block0' would take"));
  CHECK_THAT(refused.error().message, Catch::Contains("beyond the 1e+15 ns per sample a preset layer may take"));
}

}  // namespace
}  // namespace pipeworks::sim
