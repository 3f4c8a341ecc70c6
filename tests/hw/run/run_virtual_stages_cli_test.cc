// `pipeworks run` with several stages per device (interleaved 1F1B, looped BFS): it says so in
// its header, trains K stages on K/v workers and passes the gradient check.
#include <string>

#include <catch2/catch.hpp>

#define PIPEWORKS_EXE (std::string(PIPEWORKS_BINARY_DIR) + "/cli/pipeworks")
#include "cli/run_pipeworks.h"

TEST_CASE("run interleaved-1f1b and looped-bfs with 2 stages per device on half the workers passes the check",
          "[cli]") {
  for (const std::string schedule : {"interleaved-1f1b", "looped-bfs"}) {
    for (const std::string recompute : {"", " --recompute"}) {
      const pipeworks::test::CliRun run = pipeworks::test::run_pipeworks(
          "run --model mlp --depth 4 --width 8 --steps 2 --intra-op-threads 1 -K 4 -v 2 -M 4 --check --schedule " +
          schedule + recompute);
      INFO(run.output);
      REQUIRE(run.exit_code == 0);
      CHECK_THAT(run.output, Catch::Contains("4 stages x 4 micro-batches (batch 16), " + schedule +
                                             " (2 stages per device)"));
      // Two workers: one peak per device in each step's row.
      CHECK_THAT(run.output, Catch::Matches("(.|\n)*\n   1 .* [0-9.]+ KiB, [0-9.]+ KiB\n(.|\n)*"));
      CHECK_THAT(run.output, Catch::Contains("): PASS"));
    }
  }
}
