// Tensor-parallel runs end to end: `pipeworks run --distributed --tp 2` started by the launcher on
// tp 2 alone, tp 2 x pp 2 and tp 2 x dp 2, for the mlp (with dropout: masks sliced inside the
// split blocks) and the transformer: every --check passes (each rank's shards against the slice
// of the unsharded reference, replicated parameters bit-identical over the tensor ranks); the
// tensor ranks' dumps of a replicated parameter are bit-identical; a rank holding the wrong
// shard fails the check; bad --tp settings are clear errors.
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

struct Split {
  std::string model;
  int pp = 1;
  int dp = 1;
  std::string schedule = "1f1b";
  std::string zero = "0";
  std::string name() const {
    return model + "_tp2_pp" + std::to_string(pp) + "_dp" + std::to_string(dp) + "_" + schedule + "_zero" + zero;
  }
  int ranks() const { return 2 * pp * dp; }
};

std::vector<std::string> model_args(const std::string& model) {
  if (model == "mlp") return {"--model", "mlp", "--depth", "5", "--width", "16", "--dropout", "0.1"};
  return {"--model", "transformer", "--layers", "2", "--model-width", "16", "--heads", "4", "--ff-width", "32",
          "--seq-len", "8", "--vocab", "32", "--dropout", "0.1"};
}

std::vector<std::string> run_args(const Split& c, const fs::path& dir) {
  std::vector<std::string> args = model_args(c.model);
  const std::vector<std::string> rest = {
      "--tp", "2", "--pp", std::to_string(c.pp), "--dp", std::to_string(c.dp), "-M", "2", "--batch",
      std::to_string(4 * c.dp), "--schedule", c.schedule, "--steps", "2", "--intra-op-threads", "1", "--timeout", "30",
      "--check", "--json", (dir / "report.json").string()};
  args.insert(args.end(), rest.begin(), rest.end());
  if (c.dp > 1) args.insert(args.end(), {"--zero", c.zero});
  return args;
}

std::vector<torch::Tensor> dumped(const fs::path& dir, int rank) {
  std::vector<torch::Tensor> tensors;
  torch::load(tensors, (dir / ("rank" + std::to_string(rank) + ".pt")).string());
  return tensors;
}

// Ranks 2k and 2k + 1 are the two tensor ranks of one device (tp is the fastest in either order):
// a parameter both hold whole (same shape) is bit-identical, a split one (the same shape on
// both, the other slice) differs.
void require_replicated_agree(const Split& c, const fs::path& dir) {
  for (int first = 0; first < c.ranks(); first += 2) {
    const std::vector<torch::Tensor> a = dumped(dir, first);
    const std::vector<torch::Tensor> b = dumped(dir, first + 1);
    REQUIRE(a.size() == b.size());
    REQUIRE_FALSE(a.empty());
    int whole = 0, split = 0;
    for (std::size_t i = 0; i < a.size() / 2; ++i) {  // the parameters; the gradients follow
      INFO("ranks " << first << " and " << first + 1 << ", parameter " << i);
      REQUIRE(a[i].sizes() == b[i].sizes());
      torch::equal(a[i], b[i]) ? ++whole : ++split;
    }
    CHECK(split > 0);
  }
}

TEST_CASE("tensor-parallel run: tp 2 alone, with pp 2 and with dp 2 pass the check", "[distributed]") {
  const std::vector<Split> cases = {
      {"mlp", 1, 1},        {"transformer", 1, 1}, {"mlp", 2, 1, "gpipe"}, {"transformer", 2, 1},
      {"mlp", 1, 2, "1f1b", "1"}, {"transformer", 1, 2},
  };
  for (const Split& c : cases) {
    SECTION(c.name()) {
      const fs::path dir = testing::fresh_dir(c.name());
      LaunchOptions options;
      options.extra_env = {{"PIPEWORKS_TEST_DUMP_DIR", dir.string()}};
      const testing::Launched launched = testing::launch_run(c.ranks(), run_args(c, dir), options);
      INFO(launched.out << launched.err);
      REQUIRE(launched.result.exit_code == 0);
      CHECK_THAT(launched.out, Catch::Contains("[rank 0] check vs unsharded reference"));
      CHECK_THAT(launched.out, Catch::Contains("PASS"));
      CHECK_THAT(launched.out, Catch::Contains("layout tp 2 x pp " + std::to_string(c.pp)));
      std::ifstream in(dir / "report.json");
      const auto report = nlohmann::json::parse(in);
      CHECK(report.at("check").at("passed").get<bool>());
      CHECK(report.at("tensor_parallel").get<int>() == 2);
      CHECK(report.at("steps")[0].at("peak_activation_bytes").size() == static_cast<std::size_t>(c.pp));
      require_replicated_agree(c, dir);
      fs::remove_all(dir);
    }
  }
}

TEST_CASE("tensor-parallel run: a rank holding the other rank's shard fails the check", "[distributed]") {
  for (const std::string model : {"mlp", "transformer"}) {
    SECTION(model) {
      const Split c{model, 1, 1};
      const fs::path dir = testing::fresh_dir("wrong_shard_" + model);
      LaunchOptions options;
      options.extra_env = {{"PIPEWORKS_TEST_WRONG_SHARD", "1"}};
      const testing::Launched launched = testing::launch_run(2, run_args(c, dir), options);
      INFO(launched.out << launched.err);
      CHECK(launched.result.exit_code == 1);
      CHECK_THAT(launched.out, Catch::Contains("FAIL"));
      fs::remove_all(dir);
    }
  }
}

TEST_CASE("tensor-parallel run: bad --tp settings are clear errors", "[distributed]") {
  const std::vector<std::string> shape = {"-M", "2", "--batch", "4", "--steps", "1", "--timeout", "10"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), shape.begin(), shape.end());
    return args;
  };
  const testing::Launched world = testing::launch_run(2, with({"--tp", "2", "--pp", "2"}));
  CHECK(world.result.exit_code == 1);
  CHECK_THAT(world.err, Catch::Contains("the layout is tp 2 x pp 2 x dp 1 = 4 ranks but WORLD_SIZE is 2"));
  const testing::Launched heads = testing::launch_run(
      2, with({"--tp", "2", "--pp", "1", "--model", "transformer", "--heads", "3", "--model-width", "48"}));
  CHECK(heads.result.exit_code == 1);  // the launcher's: a rank failed (each rank exits 2, bad usage)
  CHECK_THAT(heads.err, Catch::Contains("--tp 2: the transformer's --heads (3) does not split into 2 equal shards"));
  const testing::Launched conv = testing::launch_run(2, with({"--tp", "2", "--pp", "1", "--model", "convnet"}));
  CHECK(conv.result.exit_code == 1);
  CHECK_THAT(conv.err, Catch::Contains("the convnet model cannot split over tensor-parallel ranks"));
}

}  // namespace
}  // namespace pipeworks::hw
