// Model spec JSON: the documented forms load to exact values, costs rescale with the
// micro-batch size, and a written spec loads back unchanged.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "sim/spec/model_presets.h"
#include "sim/spec/model_spec.h"
#include "sim/spec/tensor_parallel.h"
#include "temp_path.h"

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

TEST_CASE("backward with backward_input and backward_weight: B measured apart from I and W") {
  constexpr const char* kBoth = R"({"name": "m", "layers": [
    {"name": "block", "forward": "1ms", "backward": "2ms", "backward_input": "1.5ms", "backward_weight": "1ms"}]})";
  auto spec = parse_model_spec(kBoth, "both.json");
  REQUIRE(spec.ok());
  const LayerSpec& l = spec->layers[0];
  CHECK(l.backward_split);
  REQUIRE(l.whole_backward.has_value());
  // A plain duration is per sample.
  CHECK(*l.whole_backward == ScaledDuration{0, 2'000'000});
  CHECK(l.backward() == ScaledDuration{0, 2'000'000});
  CHECK(l.backward_input == ScaledDuration{0, 1'500'000});
  CHECK(l.backward_weight == ScaledDuration{0, 1'000'000});
  auto again = parse_model_spec(model_spec_to_json(*spec), "again.json");
  REQUIRE(again.ok());
  CHECK(*again == *spec);
  // Setting an unsplit backward drops the whole one; a whole backward needs the split.
  LayerSpec unsplit = l;
  unsplit.set_backward(ScaledDuration{0, 10});
  CHECK_FALSE(unsplit.whole_backward.has_value());
  ModelSpec bad = *spec;
  bad.layers[0].backward_split = false;
  CHECK_THAT(check_model_spec(bad).error().message, Catch::Contains("a whole backward beside I and W needs backward_split"));
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

TEST_CASE("a measured table: exact at its sizes, straight lines between, the fitted slope outside") {
  //   size   1   2    3    4    6    8    10
  //   value  90  100  200  300  350  400  420     (table 2:100 4:300 8:400, per_sample 10)
  const ScaledDuration d{0, 10, {{2, 100}, {4, 300}, {8, 400}}};
  const std::pair<int, Nanoseconds> expected[] = {{1, 90}, {2, 100}, {3, 200}, {4, 300}, {6, 350}, {8, 400}, {10, 420}};
  for (const auto& [size, ns] : expected) CHECK(d.at(size).value() == ns);
  CHECK_FALSE(d.at(0).ok());
  // Rounded to the nearest: 10/3 -> 3, 20/3 -> 7.
  const ScaledBytes b{0, 0, {{1, 0}, {4, 10}}};
  CHECK(b.at(2).value() == 3);
  CHECK(b.at(3).value() == 7);
  // Below the table the slope may reach 0, never below.
  CHECK(ScaledDuration(0, 1000, {{4, 100}}).at(1).value() == 0);
  CHECK_FALSE(ScaledDuration(0, std::int64_t{1} << 62, {{1, 5}}).at(10).ok());
}

TEST_CASE("sums and splits keep the table") {
  const ScaledDuration a{0, 1, {{1, 10}, {3, 30}}};
  const ScaledDuration b{5, 2};
  CHECK(a + b == ScaledDuration{5, 3, {{1, 17}, {3, 41}}});
  LayerSpec layer;
  layer.set_backward(ScaledDuration{1, 3, {{1, 11}, {2, 20}}});
  CHECK(layer.backward_input == ScaledDuration{1, 2, {{1, 6}, {2, 10}}});
  CHECK(layer.backward_weight == ScaledDuration{0, 1, {{1, 5}, {2, 10}}});
  CHECK(layer.backward() == ScaledDuration{1, 3, {{1, 11}, {2, 20}}});
}

TEST_CASE("measured tables, forwards without the graph and backward temporaries round-trip through JSON") {
  constexpr const char* kTable = R"({"name": "t", "layers": [
    {"name": "fc", "forward": {"fixed": "2us", "per_sample": "1us", "measured": {"4": "9us", "1": "3us"}},
     "backward": "2us", "forward_no_grad": {"per_sample": "1us", "measured": {"1": "2us"}},
     "backward_transient_bytes": {"measured": {"2": "1KiB", "8": "4KiB"}},
     "split_held_bytes": {"per_sample": "3KiB"}},
    {"name": "relu", "forward": "1us", "backward": "1us"}]})";
  auto spec = parse_model_spec(kTable, "t.json");
  REQUIRE(spec.ok());
  const LayerSpec& fc = spec->layers[0];
  CHECK(fc.forward == ScaledDuration{2000, 1000, {{1, 3000}, {4, 9000}}});
  CHECK(fc.forward.at(2).value() == 5000);
  REQUIRE(fc.forward_no_grad.has_value());
  CHECK(*fc.forward_no_grad == ScaledDuration{0, 1000, {{1, 2000}}});
  CHECK(fc.backward_transient_bytes.at(4).value() == 2048);
  REQUIRE(fc.split_held_bytes.has_value());
  CHECK(fc.split_held_bytes->at(2).value() == 6144);
  CHECK_FALSE(spec->layers[1].split_held_bytes.has_value());  // absent: the output's gradient
  auto again = parse_model_spec(model_spec_to_json(*spec), "again.json");
  REQUIRE(again.ok());
  CHECK(*again == *spec);
  CHECK(check_model_spec(*spec).ok());

  const std::pair<const char*, const char*> bad[] = {
      {R"({"name": "t", "layers": [{"name": "a", "forward": {"measured": {"0": "1us"}}, "backward": "1us"}]})",
       "/layers/0/forward/measured/0"},
      {R"({"name": "t", "layers": [{"name": "a", "forward": {"measured": {"two": "1us"}}, "backward": "1us"}]})",
       "/layers/0/forward/measured/two"},
      {R"({"name": "t", "layers": [{"name": "a", "forward": {"measured": {}}, "backward": "1us"}]})",
       "/layers/0/forward/measured"},
      {R"({"name": "t", "layers": [{"name": "a", "forward": {"measured": {"1": "1xs"}}, "backward": "1us"}]})",
       "/layers/0/forward/measured/1"}};
  for (const auto& [text, pointer] : bad) {
    auto refused = parse_model_spec(text, "bad.json");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message.find(pointer) != std::string::npos);
  }
  ModelSpec unsorted = *spec;
  unsorted.layers[0].forward.measured = {{4, 1}, {1, 1}};
  CHECK_FALSE(check_model_spec(unsorted).ok());
  ModelSpec negative = *spec;
  negative.layers[0].split_held_bytes = ScaledBytes{-1, 0};
  CHECK_FALSE(check_model_spec(negative).ok());
}

TEST_CASE("a layer's tensor-parallel split and a rank's model round-trip through JSON, bad ones name their field") {
  constexpr const char* kSplit = R"({"name": "t", "tensor_parallel": 2, "sequence_parallel": true,
    "tensor_parallel_overlap": true, "layers": [
    {"name": "block", "forward": "1ms", "backward": "2ms", "param_bytes": "1MiB",
     "tensor_parallel": {"forward_collectives": 2, "backward_collectives": 2,
                         "collective_bytes": {"per_sample": "6MiB"}, "replicated_stash_fraction": 0.25,
                         "replicated_param_bytes": "12KiB"}}]})";
  auto spec = parse_model_spec(kSplit, "t.json");
  REQUIRE(spec.ok());
  CHECK(spec->tensor_parallel == 2);
  CHECK(spec->sequence_parallel);
  CHECK(spec->tensor_parallel_overlap);
  REQUIRE(spec->layers[0].tensor_parallel.has_value());
  const TensorParallelSplit& split = *spec->layers[0].tensor_parallel;
  CHECK(split.forward_collectives == 2);
  CHECK(split.collective_bytes.at(2).value() == 12 * 1024 * 1024);
  CHECK(split.replicated_stash_fraction == 0.25);
  CHECK(split.replicated_param_bytes == 12 * 1024);
  CHECK(check_model_spec(*spec).ok());
  auto again = parse_model_spec(model_spec_to_json(*spec), "again.json");
  REQUIRE(again.ok());
  CHECK(*again == *spec);

  const std::pair<const char*, const char*> bad[] = {
      {R"({"name": "t", "layers": [{"name": "a", "forward": "1us", "backward": "1us",
           "tensor_parallel": {"forward_collectives": -1}}]})", "/layers/0/tensor_parallel/forward_collectives"},
      {R"({"name": "t", "layers": [{"name": "a", "forward": "1us", "backward": "1us",
           "tensor_parallel": {"replicated_stash_fraction": 1.5}}]})", "/layers/0/tensor_parallel/replicated_stash_fraction"},
      {R"({"name": "t", "layers": [{"name": "a", "forward": "1us", "backward": "1us",
           "tensor_parallel": {"all_reduces": 2}}]})", "/layers/0/tensor_parallel/all_reduces"},
      {R"({"name": "t", "tensor_parallel": 0, "layers": [{"name": "a", "forward": "1us", "backward": "1us"}]})",
       "/tensor_parallel"},
      {R"({"name": "t", "sequence_parallel": 1, "layers": [{"name": "a", "forward": "1us", "backward": "1us"}]})",
       "/sequence_parallel"},
      {R"({"name": "t", "tensor_parallel_overlap": true, "layers": [{"name": "a", "forward": "1us", "backward": "1us"}]})",
       "/tensor_parallel_overlap"}};
  for (const auto& [text, pointer] : bad) {
    auto refused = parse_model_spec(text, "bad.json");
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains(pointer));
  }
  ModelSpec params = *spec;
  params.layers[0].tensor_parallel->replicated_param_bytes = 2 * 1024 * 1024;  // more than the layer has
  CHECK_THAT(check_model_spec(params).error().message, Catch::Contains("replicated_param_bytes must be from 0"));
  ModelSpec lone = *spec;
  lone.tensor_parallel = 1;
  CHECK_THAT(check_model_spec(lone).error().message, Catch::Contains("sequence_parallel needs tensor_parallel above 1"));
}

TEST_CASE("stage temporaries: one entry per measured range of layers, looked up by range, round-tripped") {
  constexpr const char* kRanges = R"({"name": "r", "layers": [
    {"name": "a", "forward": "1us", "backward": "2us"}, {"name": "b", "forward": "1us", "backward": "2us"}],
    "stage_temporaries": [
      {"layers": [0, 2], "forward": "1KiB", "later_backward": {"measured": {"1": "2KiB", "4": "8KiB"}},
       "first_backward": "3KiB"},
      {"layers": [1, 2], "forward_no_grad": "512B"}]})";
  auto spec = parse_model_spec(kRanges, "r.json");
  REQUIRE(spec.ok());
  REQUIRE(spec->stage_temporaries.size() == 2);
  const StageTemporaries* whole = spec->temporaries_of(0, 2);
  REQUIRE(whole != nullptr);
  CHECK(whole->later_backward.at(2).value() == 4096);
  CHECK(whole->first_backward.at(2).value() == 2 * 3072);
  CHECK(spec->temporaries_of(0, 1) == nullptr);
  CHECK(spec->temporaries_of(1, 2)->forward_no_grad.at(1).value() == 512);
  auto again = parse_model_spec(model_spec_to_json(*spec), "again.json");
  REQUIRE(again.ok());
  CHECK(*again == *spec);
  CHECK(check_model_spec(*spec).ok());

  const std::string layers = R"({"name": "r", "layers": [{"name": "a", "forward": "1us", "backward": "2us"}], )";
  const std::pair<const char*, const char*> bad[] = {
      {R"("stage_temporaries": [{"layers": [0, 2]}]})", "/stage_temporaries/0/layers: [0,2]: not a range"},
      {R"("stage_temporaries": [{"layers": [0]}]})", "/stage_temporaries/0/layers: [0]: expected [first layer"},
      {R"("stage_temporaries": [{"forward": "1B"}]})",
       "/stage_temporaries/0/layers: missing required field ([first layer, one past the last])"},
      {R"("stage_temporaries": [{"layers": [0, 1]}, {"layers": [0, 1]}]})", "/stage_temporaries/1/layers: [0,1]: this range is given twice"},
      {R"("stage_temporaries": [{"layers": [0, 1], "backward": "1B"}]})", "/stage_temporaries/0/backward: unknown field"}};
  for (const auto& [tail, message] : bad) {
    auto refused = parse_model_spec(layers + tail, "bad.json");
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Matchers::Contains(message));
  }
  ModelSpec coded = *spec;
  coded.stage_temporaries.push_back(coded.stage_temporaries.front());
  CHECK_FALSE(check_model_spec(coded).ok());
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
  const auto path = test::temp_path("model_spec_test", ".json").string();
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

TEST_CASE("a split's rank times round-trip, are used for their group size, and bad ones name their field") {
  constexpr const char* kRanks = R"({"name": "t", "layers": [
    {"name": "block", "forward": "8ms", "backward_input": "8ms", "backward_weight": "8ms", "param_bytes": "1MiB",
     "tensor_parallel": {"forward_collectives": 2, "backward_collectives": 2, "collective_bytes": "1MiB",
                         "rank_times": [{"tp": 2, "forward": "5ms", "backward_input": {"measured": {"1": "5ms", "4": "17ms"}},
                                         "backward_weight": "4500us"}]}}]})";
  auto spec = parse_model_spec(kRanks, "r.json");
  REQUIRE(spec.ok());
  REQUIRE(check_model_spec(*spec).ok());
  const TensorParallelSplit& split = *spec->layers[0].tensor_parallel;
  REQUIRE(split.rank_times.size() == 1);
  CHECK(split.rank_times_for(2)->backward_input.at(4).value() == 17'000'000);
  CHECK(split.rank_times_for(4) == nullptr);
  auto again = parse_model_spec(model_spec_to_json(*spec), "again.json");
  REQUIRE(again.ok());
  CHECK(*again == *spec);
  // tp 2 takes the stated times; tp 4, without an entry, a quarter of the whole.
  CHECK(tensor_parallel_view(*spec, 2, false)->layers[0].forward.at(1).value() == 5'000'000);
  CHECK(tensor_parallel_view(*spec, 2, false)->layers[0].backward_weight.at(1).value() == 4'500'000);
  CHECK(tensor_parallel_view(*spec, 4, false)->layers[0].forward.at(1).value() == 2'000'000);

  const std::pair<const char*, const char*> bad[] = {
      {R"([{"tp": 1, "forward": "1ms", "backward_input": "1ms", "backward_weight": "1ms"}])", "/rank_times/0/tp"},
      {R"([{"tp": 4, "forward": "1ms", "backward_input": "1ms", "backward_weight": "1ms"},
           {"tp": 2, "forward": "1ms", "backward_input": "1ms", "backward_weight": "1ms"}])", "/rank_times/1/tp"},
      {R"([{"tp": 2, "forward": "1ms", "backward_input": "1ms"}])", "/rank_times/0/backward_weight"},
      {R"([{"tp": 2, "forward": "-1ms", "backward_input": "1ms", "backward_weight": "1ms"}])", "/rank_times/0/forward"},
      {R"({"tp": 2})", "/rank_times"}};
  for (const auto& [list, pointer] : bad) {
    const std::string text = fmt::format(R"({{"name": "t", "layers": [{{"name": "a", "forward": "1us", "backward": "1us",
      "tensor_parallel": {{"rank_times": {}}}}}]}})", list);
    auto refused = parse_model_spec(text, "bad.json");
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains(std::string("/layers/0/tensor_parallel") + pointer));
  }
  ModelSpec unsorted = *spec;
  unsorted.layers[0].tensor_parallel->rank_times.push_back(split.rank_times[0]);
  CHECK_THAT(check_model_spec(unsorted).error().message, Catch::Contains("strictly increasing"));
}

}  // namespace
}  // namespace pipeworks::sim
