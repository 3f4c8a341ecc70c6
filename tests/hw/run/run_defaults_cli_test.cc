// Runs the built `pipeworks run` with no configuration flags: it trains what `simulate` predicts
// by default (cli/shared_defaults.h), and says so in its header.
#include <string>

#include <catch2/catch.hpp>

#define PIPEWORKS_EXE (std::string(PIPEWORKS_BINARY_DIR) + "/cli/pipeworks")
#include "cli/run_pipeworks.h"

TEST_CASE("run's defaults are simulate's: 1f1b, 4 stages, 8 micro-batches of 4 samples, adam", "[cli][vocabulary]") {
  const pipeworks::test::CliRun run =
      pipeworks::test::run_pipeworks("run --model mlp --depth 4 --width 8 --steps 1 --intra-op-threads 1");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.output, Catch::StartsWith("pipeworks run: mlp on cpu, 4 stages x 8 micro-batches (batch 32), 1f1b, "
                                           "adam (lr 0.001)\n"));
  CHECK_THAT(run.output, Catch::Contains("partition [0,"));
  const pipeworks::test::CliRun sgd =
      pipeworks::test::run_pipeworks("run --model mlp --depth 4 --width 8 --steps 1 --intra-op-threads 1 -M 2 --optimizer sgd");
  INFO(sgd.output);
  REQUIRE(sgd.exit_code == 0);
  CHECK_THAT(sgd.output, Catch::Contains("4 stages x 2 micro-batches (batch 8), 1f1b, sgd (lr 0.01)\n"));
}
