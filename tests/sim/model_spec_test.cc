// Model spec JSON: the documented forms load to exact values, costs rescale with the
// micro-batch size, and a written spec loads back unchanged.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>

#include "sim/model_presets.h"
#include "sim/model_spec.h"

namespace pipeworks::sim {
namespace {

constexpr const char* kSpec = R"({
  "name": "two",
  "description": "doc example",
  "param_dtype": "bf16",
  "input_bytes": {"per_sample": "1MiB"},
  "layers": [
    {"name": "a", "forward": {"fixed": "20us", "per_sample": "1.5ms"}, "backward": "3ms",
     "output_bytes": {"per_sample": "3MiB"}, "stash_bytes": {"fixed": "1KiB", "per_sample": "12MiB"},
     "param_bytes": "24MiB"},
    {"name": "b", "forward_ns": {"fixed": 1000, "per_sample": 2000}, "backward_input": "1ms",
     "backward_weight_ns": 500000, "output_bytes": 4096, "param_bytes": 1000}
  ]
})";

TEST_CASE("a spec loads to exact values") {
  auto spec = parse_model_spec(kSpec, "model.json");
  REQUIRE(spec.ok());
  CHECK(spec->name == "two");
  CHECK(spec->param_dtype == ParamDtype::kBf16);
  CHECK(spec->input_bytes == ScaledBytes{0, 1 << 20});
  REQUIRE(spec->num_layers() == 2);
  const LayerSpec& a = spec->layers[0];
  CHECK(a.forward == ScaledDuration{20'000, 1'500'000});
  CHECK(a.backward() == ScaledDuration{0, 3'000'000});
  CHECK_FALSE(a.backward_split);
  CHECK(a.backward_input == ScaledDuration{0, 1'500'000});
  CHECK(a.output_bytes == ScaledBytes{0, 3 << 20});
  CHECK(a.stash_bytes == ScaledBytes{1024, 12 << 20});
  CHECK(a.param_bytes == 24 << 20);
  const LayerSpec& b = spec->layers[1];
  CHECK(b.forward == ScaledDuration{1000, 2000});
  CHECK(b.backward_split);
  CHECK(b.backward_input == ScaledDuration{0, 1'000'000});
  CHECK(b.backward_weight == ScaledDuration{0, 500'000});
  CHECK(b.output_bytes == ScaledBytes{0, 4096});
  CHECK(b.stash_bytes == ScaledBytes{});
  CHECK(spec->total_param_bytes() == (24 << 20) + 1000);
}

TEST_CASE("costs rescale with the micro-batch size: fixed + per_sample * size") {
  auto spec = parse_model_spec(kSpec);
  REQUIRE(spec.ok());
  const LayerSpec& a = spec->layers[0];
  for (int m : {1, 2, 7, 64}) {
    CHECK(*a.forward.at(m) == 20'000 + 1'500'000LL * m);
    CHECK(*a.backward().at(m) == 3'000'000LL * m);
    CHECK(*a.stash_bytes.at(m) == 1024 + (12LL << 20) * m);
    CHECK(*a.output_bytes.at(m) == (3LL << 20) * m);
  }
  CHECK_FALSE(a.forward.at(0).ok());
  CHECK_THAT((ScaledDuration{0, Nanoseconds{1} << 62}).at(4).error().message, Catch::Contains("overflows"));
}

TEST_CASE("an odd full backward splits into I + W that add back up") {
  LayerSpec layer;
  layer.set_backward(ScaledDuration{3, 7});
  CHECK(layer.backward_input == ScaledDuration{2, 4});
  CHECK(layer.backward_weight == ScaledDuration{1, 3});
  CHECK(layer.backward() == ScaledDuration{3, 7});
}

TEST_CASE("a written spec loads back unchanged") {
  auto spec = parse_model_spec(kSpec);
  REQUIRE(spec.ok());
  auto again = parse_model_spec(model_spec_to_json(*spec));
  REQUIRE(again.ok());
  CHECK(*again == *spec);
  for (const PresetInfo& info : model_presets()) {
    INFO(info.name);
    auto preset = model_preset(info.name);
    REQUIRE(preset.ok());
    auto loaded = parse_model_spec(model_spec_to_json(*preset));
    REQUIRE(loaded.ok());
    CHECK(*loaded == *preset);
  }
  const auto path = (std::filesystem::temp_directory_path() / "pipeworks_model_spec_test.json").string();
  REQUIRE(save_model_spec(*spec, path).ok());
  auto from_file = load_model_spec(path);
  std::remove(path.c_str());
  REQUIRE(from_file.ok());
  CHECK(*from_file == *spec);
}

TEST_CASE("the per-sample shorthand equals the object form") {
  auto shorthand = parse_model_spec(R"({"name": "m", "layers": [{"name": "x", "forward": "2ms", "backward": "4ms"}]})");
  auto object = parse_model_spec(
      R"({"name": "m", "layers": [{"name": "x", "forward": {"per_sample": "2ms"}, "backward": {"fixed": "0ns", "per_sample": "4ms"}}]})");
  REQUIRE(shorthand.ok());
  REQUIRE(object.ok());
  CHECK(*shorthand == *object);
}

TEST_CASE("check_model_spec catches specs built in code") {
  ModelSpec spec;
  spec.name = "m";
  CHECK_THAT(check_model_spec(spec).error().message, Catch::Contains("at least one layer"));
  spec.layers.resize(2);
  spec.layers[0].name = std::string("x");
  spec.layers[1].name = std::string("x");
  CHECK_THAT(check_model_spec(spec).error().message, Catch::Contains("duplicate layer name 'x'"));
  spec.layers[1].name = std::string("y");
  spec.layers[1].param_bytes = -1;
  CHECK_THAT(check_model_spec(spec).error().message, Catch::Contains("negative"));
  spec.layers[1].param_bytes = 0;
  CHECK(check_model_spec(spec).ok());
}

}  // namespace
}  // namespace pipeworks::sim

namespace pipeworks::sim {
namespace {

TEST_CASE("hostile input gives errors, not crashes") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(parse_model_spec(deep, "m.json").error().message == "m.json: invalid JSON: nested deeper than 64 levels");
  const std::string nul = R"({"name": "m", "layers": [{"name": "a", "forward": "\u0000ms", "backward": "1ms"}]})";
  CHECK(parse_model_spec(nul, "m.json").error().message ==
        "m.json: /layers/0/forward: \"\\u0000ms\": expected a number followed by a unit");
  CHECK_THAT(parse_model_spec("\xff\xfe", "m.json").error().message, Catch::StartsWith("m.json: invalid JSON: "));
  const std::string escaped = R"({"name": "m", "layers": [{"name": "a", "forward": "1ms", "backward": "1ms", "a/b~c": 1}]})";
  CHECK_THAT(parse_model_spec(escaped, "m.json").error().message, Catch::StartsWith("m.json: /layers/0/a~1b~0c: unknown field"));
  CHECK(parse_model_spec("", "m.json").error().message.rfind("m.json: invalid JSON", 0) == 0);
}

}  // namespace
}  // namespace pipeworks::sim
