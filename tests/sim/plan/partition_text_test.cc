// `--partition` text and the batch split: the one reading every command and run shares.
#include <catch2/catch.hpp>

#include "sim/plan/partition_text.h"
#include "sim/spec/batch_split.h"
#include "sim/spec/model_presets.h"

using namespace pipeworks;

TEST_CASE("layer counts parse strictly and point at the bad entry", "[partition]") {
  CHECK(*sim::parse_layer_counts("7,6,6,7") == std::vector<int>{7, 6, 6, 7});
  CHECK(*sim::parse_layer_counts("12") == std::vector<int>{12});
  for (const char* bad : {"", ",", "1,", ",1", "1,,2", "1, 2", "0,3", "-1,4", "x", "3a", "99999999999"}) {
    INFO(bad);
    CHECK_FALSE(sim::parse_layer_counts(bad).ok());
  }
  const auto error = sim::parse_layer_counts("3,x,4").error();
  REQUIRE(error.column.has_value());
  CHECK(*error.column == 2);
  CHECK_THAT(error.message, Catch::Contains("'x' is not a positive layer count"));
}

TEST_CASE("partition text: uniform or counts that name every stage and sum to the layers", "[partition]") {
  CHECK(sim::parse_partition("uniform", 9, 4)->boundaries == std::vector<int>{0, 3, 5, 7, 9});
  CHECK(sim::parse_partition("2,3,4", 9, 3)->boundaries == std::vector<int>{0, 2, 5, 9});
  CHECK_THAT(sim::parse_partition("2,3", 9, 3).error().message, Catch::Contains("names 2 stages, the run has 3"));
  CHECK_THAT(sim::parse_partition("2,3,5", 9, 3).error().message, Catch::Contains("the model has 9 layers"));
  CHECK_FALSE(sim::parse_partition("2147483647,2147483647,1", 9, 3).ok());  // no overflow on the way
  CHECK_FALSE(sim::parse_partition("balanced", 9, 3).ok());  // needs costs: choose_partition
}

TEST_CASE("choose_partition balances a model's costs and reads the other texts as parse_partition", "[partition]") {
  const auto model = sim::model_preset("amoeba");
  REQUIRE(model.ok());
  sim::PartitionContext context;
  context.num_microbatches = 8;
  const auto balanced = sim::choose_partition(sim::parse_partition_choice("balanced").value(), *model, 4, context);
  REQUIRE(balanced.ok());
  sim::BalanceOptions direct;
  direct.microbatch_size = context.microbatch_size;
  direct.optimizer = context.optimizer;
  direct.in_flight = {4, 3, 2, 1};  // 1F1B, K = 4, M = 8
  CHECK(balanced->boundaries == sim::balanced_partition(*model, 4, direct)->boundaries);
  CHECK(sim::choose_partition(sim::PartitionChoice{}, *model, 4, context)->boundaries ==
        sim::uniform_partition(model->num_layers(), 4)->boundaries);
}

TEST_CASE("a batch splits into equal micro-batches or is an error", "[partition]") {
  CHECK(*sim::microbatch_size(32, 8) == 4);
  CHECK(*sim::microbatch_size(7, 7) == 1);
  for (const auto& [batch, m] : std::vector<std::pair<int, int>>{{32, 5}, {0, 4}, {4, 0}, {-8, 4}, {8, -4}, {3, 4}}) {
    INFO(batch << " / " << m);
    CHECK_FALSE(sim::microbatch_size(batch, m).ok());
  }
  CHECK(sim::microbatch_size(30, 4).error().message == "batch size 30 must be a positive multiple of the 4 micro-batches");
}

TEST_CASE("a --partition text is read once into its choice", "[partition]") {
  using Rule = sim::PartitionChoice::Rule;
  CHECK(sim::parse_partition_choice("uniform")->rule == Rule::kUniform);
  CHECK(sim::parse_partition_choice("balanced")->balanced());
  const auto counts = sim::parse_partition_choice("7,6*2,7");
  REQUIRE(counts.ok());
  CHECK(counts->rule == Rule::kCounts);
  CHECK(counts->counts == std::vector<int>{7, 6, 6, 7});
  CHECK(counts->text == "7,6*2,7");
  CHECK(sim::counts_choice({3, 3, 2}) == *sim::parse_partition_choice("3,3,2"));
  const auto bad = sim::parse_partition_choice("7,x");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().column == std::optional<std::size_t>(2));  // the column of the bad entry
  // Cutting needs costs only for balanced.
  CHECK(sim::fixed_partition(*counts, 26, 4)->boundaries == std::vector<int>{0, 7, 13, 19, 26});
  CHECK(sim::fixed_partition(*counts, 26, 3).error().message == "partition '7,6*2,7' names 4 stages, the run has 3");
  CHECK_FALSE(sim::fixed_partition(*sim::parse_partition_choice("balanced"), 26, 4).ok());
  CHECK(sim::fixed_partition(sim::PartitionChoice{}, 9, 4)->boundaries == std::vector<int>{0, 3, 5, 7, 9});
}
