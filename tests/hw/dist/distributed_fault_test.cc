// Faults in multi-process runs: a rank killed at an action (PIPEWORKS_TEST_DIE_AT, an
// _exit(3) with no goodbye) makes every surviving rank exit non-zero within the timeout plus a
// few seconds, with a message naming the peer or barrier it was waiting on -- never a hang.
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "hw/dist/launcher.h"

namespace pipeworks::hw {
namespace {

std::string pipeworks_exe() { return std::string(PIPEWORKS_BINARY_DIR) + "/cli/pipeworks"; }

constexpr double kTimeoutS = 4;
constexpr double kSlackS = 3;

struct Trial {
  int ranks;
  std::string die_at;  // stage,KIND,microbatch; stage s runs on rank s (replica 0's with --dp)
  int dying_rank;
  int replicas = 1;  // --dp: ranks = stages x replicas, Megatron's order (rank = replica + dp x device)
};

TEST_CASE("distributed faults: a killed rank stops every survivor within the timeout", "[distributed]") {
  REQUIRE(std::filesystem::exists(pipeworks_exe()));
  const std::vector<Trial> trials = {
      {2, "1,B,0", 1},      {2, "0,SEND_F,1", 0}, {2, "1,RECV_F,3", 1},
      {4, "3,F,1", 3},      {4, "0,RECV_B,0", 0}, {4, "2,SEND_B,2", 2},
      // pp 2 x dp 2: rank 2 dies at its last backward, while rank 3, its replica, reduces with it.
      {4, "1,B,3", 2, 2},   {4, "0,F,2", 0, 2},
  };
  for (const Trial& t : trials) {
    DYNAMIC_SECTION("ranks " << t.ranks << ", dp " << t.replicas << ", die at " << t.die_at) {
      LaunchOptions options;
      options.num_processes = t.ranks;
      options.keep_going = true;  // let the survivors find out by themselves
      options.kill_after_s = 60;  // a hang fails the test instead of blocking it
      options.extra_env = {{"PIPEWORKS_TEST_DIE_AT", t.die_at}};
      options.command = {pipeworks_exe(), "run", "--distributed", "-K", std::to_string(t.ranks / t.replicas),
                         "--dp", std::to_string(t.replicas), "-M", "4", "--batch", std::to_string(8 * t.replicas),
                         "--depth", "4", "--width", "8", "--steps", "2", "--intra-op-threads", "1",
                         "--timeout", std::to_string(kTimeoutS)};
      std::string err;
      auto result = launch(options, [&](int rank, bool is_stderr, std::string_view line) {
        if (is_stderr) err += "[rank " + std::to_string(rank) + "] " + std::string(line) + "\n";
      });
      REQUIRE(result.ok());
      INFO(err);
      CHECK_FALSE(result->timed_out);
      CHECK(result->exit_code == 1);
      for (const RankExit& e : result->exits) {
        INFO("rank " << e.rank);
        if (e.rank == t.dying_rank) {
          CHECK(e.exit_code == 3);
          continue;
        }
        CHECK(e.exit_code == 1);
        CHECK_FALSE(e.stopped_by_launcher);
        CHECK(e.seconds_after_first_failure <= kTimeoutS + kSlackS);
        const std::string prefix = "[rank " + std::to_string(e.rank) + "] pipeworks run: error: rank " +
                                   std::to_string(e.rank) + ": ";
        CHECK_THAT(err, Catch::Contains(prefix));
      }
      CHECK_THAT(err, Catch::Contains("PIPEWORKS_TEST_DIE_AT: exiting with code 3"));
    }
  }
}

}  // namespace
}  // namespace pipeworks::hw
