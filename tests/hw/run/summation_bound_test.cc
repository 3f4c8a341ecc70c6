// The data-parallel gradient check's tolerance (hw/run/reference_check.h): a difference within
// bound_terms x u x sum|x_i| passes, one beyond it fails; and the reference's magnitude mode
// gives the gradients of its micro-batch mode bit for bit, with sum|x_i| >= |sum x_i|.
#include "hw/hw_test_support.h"

#include <catch2/catch.hpp>

#include "hw/model/reference.h"
#include "hw/run/reference_check.h"

namespace pipeworks::hw {
namespace {

TEST_CASE("summation bound: a difference of the summation order's size passes, a larger one fails") {
  // u = 2^-24 for float; 10 x u x 1 = 5.96e-7.
  const std::vector<torch::Tensor> magnitudes = {torch::ones({2})};
  const std::vector<torch::Tensor> pipeline = {torch::tensor({1.0F, 2.0F})};
  GradientCheck within;
  check_summation_bound(within, pipeline, {torch::tensor({1.0F + std::ldexp(1.0F, -22), 2.0F})}, magnitudes, 10);
  CHECK(within.passed);
  CHECK_FALSE(within.exactly_equal);
  CHECK(within.max_abs_diff == std::ldexp(1.0, -22));
  GradientCheck beyond;
  check_summation_bound(beyond, pipeline, {torch::tensor({1.0F + std::ldexp(1.0F, -20), 2.0F})}, magnitudes, 10);
  CHECK_FALSE(beyond.passed);
  GradientCheck shapes;
  check_summation_bound(shapes, pipeline, {torch::tensor({1.0F})}, magnitudes, 10);
  CHECK_FALSE(shapes.passed);
}

TEST_CASE("summation bound: the reference's magnitude mode keeps its micro-batch gradients bit for bit") {
  const Model model = build_model(testing::tiny_mlp()).value();
  const MicroBatches batch = split_batch(make_batch(model.config, 8, 5), 4).value();
  OptimizerConfig sgd;
  Reference plain(model, sgd);
  Reference measured(model, sgd);
  REQUIRE(plain.accumulate(batch, 5, ReferenceMode::kMicrobatches).ok());
  REQUIRE(measured.accumulate(batch, 5, ReferenceMode::kMicrobatchMagnitudes).ok());
  const auto a = plain.gradients();
  const auto b = measured.gradients();
  REQUIRE(a.size() == b.size());
  REQUIRE(measured.magnitudes().size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(torch::equal(a[i], b[i]));
    CHECK((measured.magnitudes()[i] >= b[i].abs()).all().item<bool>());
  }
  GradientCheck check;
  check_summation_bound(check, b, a, measured.magnitudes(), 2);
  CHECK(check.passed);
  CHECK(check.exactly_equal);
}

}  // namespace
}  // namespace pipeworks::hw
