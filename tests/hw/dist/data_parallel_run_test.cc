// Replicated pipelines end to end: `pipeworks run --distributed --dp N` started by the launcher
// for gpipe, 1f1b and zb-h1 on pp 2 x dp 2, pp 1 x dp 2 and pp 1 x dp 4, with and without ZeRO-1:
// every run's --check passes (reduced gradients against the whole-batch reference within the
// summation bound, parameters against it, replicas against each other), and the replicas of a
// device dump bit-identical parameters (under DDP, gradients too).
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "hw/dist/launch_support.h"

namespace pipeworks::hw {
namespace {

namespace fs = std::filesystem;

struct Replicated {
  std::string schedule;
  int pp = 1;
  int dp = 2;
  std::string zero = "0";
  std::string order = "tp-dp-pp";
  double dropout = 0.0;
  std::string name() const {
    return schedule + "_pp" + std::to_string(pp) + "_dp" + std::to_string(dp) + "_zero" + zero + "_" + order;
  }
  int rank(int replica, int device) const { return order == "tp-dp-pp" ? replica + dp * device : device + pp * replica; }
};

std::vector<std::string> run_args(const Replicated& c, const fs::path& dir) {
  return {"--model", "mlp", "--depth", "6", "--width", "16", "--dropout", std::to_string(c.dropout), "--pp",
          std::to_string(c.pp), "-M", "4", "--batch", std::to_string(8 * c.dp), "--schedule", c.schedule, "--dp",
          std::to_string(c.dp), "--zero", c.zero, "--rank-order", c.order, "--steps", "2", "--intra-op-threads", "1",
          "--timeout", "30", "--check", "--optimizer", "adam", "--json", (dir / "report.json").string()};
}

std::vector<torch::Tensor> dumped(const fs::path& dir, int rank) {
  std::vector<torch::Tensor> tensors;
  torch::load(tensors, (dir / ("rank" + std::to_string(rank) + ".pt")).string());
  return tensors;
}

// Each dump holds the rank's parameters, then its gradients (rank_tensors.h).
void require_replicas_agree(const Replicated& c, const fs::path& dir) {
  for (int device = 0; device < c.pp; ++device) {
    const std::vector<torch::Tensor> first = dumped(dir, c.rank(0, device));
    REQUIRE_FALSE(first.empty());
    const std::size_t params = first.size() / 2;
    for (int replica = 1; replica < c.dp; ++replica) {
      const std::vector<torch::Tensor> other = dumped(dir, c.rank(replica, device));
      REQUIRE(other.size() == first.size());
      for (std::size_t i = 0; i < first.size(); ++i) {
        if (i >= params && c.zero != "0") continue;  // ZeRO-1 keeps only a shard of the reduced gradients
        INFO("device " << device << ", replica " << replica << ", tensor " << i);
        CHECK(torch::equal(first[i], other[i]));
      }
    }
  }
}

TEST_CASE("data-parallel run: replicated pipelines pass the check and keep bit-identical replicas",
          "[distributed]") {
  const std::vector<Replicated> cases = {
      {"gpipe", 2, 2, "0", "tp-dp-pp", 0.1}, {"1f1b", 2, 2, "1", "tp-pp-dp"}, {"zb-h1", 2, 2, "0"},
      {"gpipe", 1, 2, "1"},                  {"1f1b", 1, 2, "0", "tp-dp-pp", 0.1}, {"zb-h1", 1, 2, "1"},
      {"gpipe", 1, 4, "0"},                  {"1f1b", 1, 4, "1"},              {"zb-h1", 1, 4, "0"},
  };
  for (const Replicated& c : cases) {
    SECTION(c.name()) {
      const fs::path dir = testing::fresh_dir(c.name());
      LaunchOptions options;
      options.extra_env = {{"PIPEWORKS_TEST_DUMP_DIR", dir.string()}};
      const testing::Launched launched = testing::launch_run(c.pp * c.dp, run_args(c, dir), options);
      INFO(launched.out << launched.err);
      REQUIRE(launched.result.exit_code == 0);
      CHECK_THAT(launched.out, Catch::Contains("[rank 0] check vs whole-batch reference"));
      CHECK_THAT(launched.out, Catch::Contains("PASS"));
      std::ifstream in(dir / "report.json");
      const auto report = nlohmann::json::parse(in);
      CHECK(report.at("check").at("passed").get<bool>());
      CHECK(report.at("data_parallel").get<int>() == c.dp);
      CHECK(report.at("steps")[0].at("peak_activation_bytes").size() == static_cast<std::size_t>(c.pp));
      require_replicas_agree(c, dir);
      fs::remove_all(dir);
    }
  }
}

TEST_CASE("data-parallel run: WORLD_SIZE must be devices x replicas", "[distributed]") {
  const testing::Launched launched =
      testing::launch_run(2, {"-K", "2", "--dp", "2", "-M", "2", "--batch", "8", "--steps", "1", "--timeout", "10"});
  INFO(launched.out << launched.err);
  CHECK(launched.result.exit_code == 1);
  CHECK_THAT(launched.err, Catch::Contains("the schedule has 2 devices x 2 replicas = 4 ranks but WORLD_SIZE is 2"));
}

}  // namespace
}  // namespace pipeworks::hw
