// One rank's model under tensor parallelism (sim/spec/tensor_parallel.h): the GPT preset's
// blocks, embedding and head against Megatron's and Korthikanti et al.'s per-rank formulas.
#include <catch2/catch.hpp>

#include <cmath>

#include "sim/spec/model_presets.h"
#include "sim/spec/tensor_parallel.h"

namespace pipeworks::sim {
namespace {

ModelSpec small_gpt() {
  PresetOptions options;
  options.flops_per_s = 1e12;  // 1 ns per 1000 FLOPs
  options.layers = 2;
  return model_preset("gpt", options).value();  // s 1024, h 768, a 12, V 50257
}

TEST_CASE("tensor parallelism: a block's rank does 1/t of the work and keeps 10 s h of its stash whole",
          "[tensor_parallel]") {
  const ModelSpec whole = small_gpt();
  const auto rank = tensor_parallel_view(whole, 4, false);
  REQUIRE(rank.ok());
  CHECK(rank->tensor_parallel == 4);
  CHECK_FALSE(rank->sequence_parallel);
  const LayerSpec& w = whole.layers[1];
  const LayerSpec& r = rank->layers[1];
  const double s = 1024, h = 768, a = 12;
  CHECK(r.forward.per_sample_ns == std::llround(static_cast<double>(w.forward.per_sample_ns) / 4));
  CHECK(r.backward_input.per_sample_ns == std::llround(static_cast<double>(w.backward_input.per_sample_ns) / 4));
  CHECK(r.backward_weight.per_sample_ns == std::llround(static_cast<double>(w.backward_weight.per_sample_ns) / 4));
  // Korthikanti et al. 2022 eq. 2: s h (10 + 24 / t + 5 a s / (h t)) bytes per sample.
  CHECK(r.stash_bytes.per_sample_bytes == std::llround(s * h * (10 + 24.0 / 4 + 5 * a * s / (h * 4))));
  // 12 h^2 + 7 h split, 6 h (norms and two output biases) whole, bf16.
  CHECK(r.param_bytes == 2 * 6 * 768 + (2 * (12 * 768 * 768 + 13 * 768) - 2 * 6 * 768) / 4);
  CHECK(r.output_bytes.per_sample_bytes == 2 * 1024 * 768 / 4);  // each rank sends its quarter
  // The collectives stay whole on the layer: every rank all-reduces the 2 s h hidden state.
  REQUIRE(r.tensor_parallel.has_value());
  CHECK(r.tensor_parallel->forward_collectives == 2);
  CHECK(r.tensor_parallel->backward_collectives == 2);
  CHECK(r.tensor_parallel->collective_bytes.per_sample_bytes == 2 * 1024 * 768);
}

TEST_CASE("tensor parallelism: sequence parallelism divides the whole stash", "[tensor_parallel]") {
  const auto rank = tensor_parallel_view(small_gpt(), 4, true);
  REQUIRE(rank.ok());
  CHECK(rank->sequence_parallel);
  const double s = 1024, h = 768, a = 12;
  // Korthikanti et al. 2022 eq. 3: s h (34 + 5 a s / h) / t.
  CHECK(rank->layers[1].stash_bytes.per_sample_bytes == std::llround(s * h * (34 + 5 * a * s / h) / 4));
}

TEST_CASE("tensor parallelism: vocabulary-parallel embedding and head", "[tensor_parallel]") {
  const ModelSpec whole = small_gpt();
  const auto rank = tensor_parallel_view(whole, 2, false);
  REQUIRE(rank.ok());
  const LayerSpec& embedding = rank->layers.front();
  const LayerSpec& head = rank->layers.back();
  // Embedding: half the token table, the whole position table; one all-reduce forward.
  CHECK(embedding.param_bytes == 2 * 1024 * 768 + 2 * 50257 * 768 / 2);
  CHECK(embedding.tensor_parallel->forward_collectives == 1);
  CHECK(embedding.tensor_parallel->backward_collectives == 0);
  // Head: half the logits' work and table; its input (2 s h) kept whole, the fp32 logits halved.
  CHECK(head.forward.per_sample_ns == std::llround(static_cast<double>(whole.layers.back().forward.per_sample_ns) / 2));
  CHECK(head.stash_bytes.per_sample_bytes == 2 * 1024 * 768 + 4 * 1024 * 50257 / 2);
  CHECK(head.param_bytes == 2 * 2 * 768 + 2 * 50257 * 768 / 2);
  CHECK(head.tensor_parallel->backward_collectives == 1);
}

TEST_CASE("tensor parallelism: tp 1 is the model itself, bad requests are errors that name the cause",
          "[tensor_parallel]") {
  const ModelSpec whole = small_gpt();
  CHECK(*tensor_parallel_view(whole, 1, false) == whole);
  CHECK(splits_over_tensor_parallel(whole));
  CHECK_THAT(tensor_parallel_view(whole, 1, true).error().message, Catch::Contains("needs tensor parallelism above 1"));
  CHECK_THAT(tensor_parallel_view(whole, 0, false).error().message, Catch::Contains("from 1 to"));
  const ModelSpec twice = tensor_parallel_view(whole, 2, false).value();
  CHECK_THAT(tensor_parallel_view(twice, 2, false).error().message, Catch::Contains("already one rank's"));
  const ModelSpec uniform = model_preset("uniform").value();
  CHECK_FALSE(splits_over_tensor_parallel(uniform));
  CHECK_THAT(tensor_parallel_view(uniform, 2, false).error().message,
             Catch::Contains("layer 0 ('layer0') does not say how it splits"));
}

}  // namespace
}  // namespace pipeworks::sim
