// Multi-process runs end to end: `pipeworks run --distributed` started K times by the launcher
// (hw/dist/launcher.h) produces, rank by rank, parameters and gradients bit-identical to the
// in-process executor on the same schedule, and rank 0 reports one merged timeline.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "hw/dist/launcher.h"
#include "hw/dist/launch_support.h"
#include "hw/exec/cpu_affinity.h"
#include "hw/exec/executor.h"
#include "hw/model/model_zoo.h"
#include "hw/model/stage_cell.h"
#include "hw/run/layer_partition.h"
#include "hw/run/run.h"
#include "sim/plan/partition_text.h"

namespace pipeworks::hw {
namespace {

using testing::fresh_dir;
using testing::launch_run;
using testing::Launched;
namespace fs = std::filesystem;

// The in-process executor on the same config (one intra-op thread per worker, as --intra-op-threads 1).
std::vector<StageCell> run_in_process(const RunConfig& config) {
  const Model model = build_model(config.model).value();
  const sched::Schedule schedule = build_schedule(config).value();
  const sim::Partition partition =
      sim::fixed_partition(config.partition, static_cast<int>(model.layers.size()), config.num_stages).value();
  ExecutorOptions options;
  options.threads_per_worker = 1;
  options.optimizer = config.optimizer;
  auto executor = Executor::create(schedule, make_cells(model, partition, schedule.placement).value(), options);
  REQUIRE(executor.ok());
  for (int step = 0; step < config.steps; ++step) {
    const std::uint64_t seed = step_seed(config.model, step);
    const MicroBatches mb = split_batch(make_batch(config.model, config.batch_size, seed), config.num_microbatches)
                                .value();
    REQUIRE((*executor)->step(mb, seed).ok());
  }
  return std::move((*executor)->cells());
}

// Each rank's dump holds its cells' parameters, then their gradients, in stage order.
void require_bit_identical(const fs::path& dir, const std::vector<StageCell>& cells, int ranks) {
  for (int r = 0; r < ranks; ++r) {
    std::vector<torch::Tensor> dumped;
    torch::load(dumped, (dir / ("rank" + std::to_string(r) + ".pt")).string());
    std::vector<torch::Tensor> params, grads;
    for (const StageCell& c : cells) {
      if (c.device != r) continue;
      for (const torch::Tensor& p : c.parameters()) {
        params.push_back(p);
        grads.push_back(p.grad());
      }
    }
    REQUIRE(dumped.size() == 2 * params.size());
    REQUIRE_FALSE(params.empty());
    for (std::size_t i = 0; i < params.size(); ++i) {
      INFO("rank " << r << " parameter " << i);
      CHECK(torch::equal(dumped[i], params[i]));
      REQUIRE(grads[i].defined());
      CHECK(torch::equal(dumped[params.size() + i], grads[i]));
    }
  }
}

struct Case {
  std::string name;
  RunConfig config;
  std::vector<std::string> args;
};

Case make_case(const std::string& name, int k, int m, sched::ScheduleKind kind, bool recompute, double dropout,
               std::vector<int> placement = {}, int virtual_stages = 1) {
  Case c;
  c.name = name;
  c.config.model.kind = ModelKind::kMlp;
  c.config.model.depth = 6;
  c.config.model.width = 16;
  c.config.model.dropout = dropout;
  c.config.num_stages = k;
  c.config.num_microbatches = m;
  c.config.batch_size = 2 * m;
  c.config.schedule = kind;
  c.config.recompute = recompute;
  c.config.placement = placement;
  c.config.virtual_stages = virtual_stages;
  c.config.steps = 2;
  c.args = {"--model", "mlp", "--depth", "6", "--width", "16", "--dropout", std::to_string(dropout), "-K",
            std::to_string(k), "-M", std::to_string(m), "--batch", std::to_string(2 * m), "--schedule",
            std::string(sched::schedule_kind_name(kind)), "--virtual-stages", std::to_string(virtual_stages),
            "--steps", "2", "--intra-op-threads", "1", "--timeout", "30", "--check", "--optimizer", "sgd",
            "--lr", "0.01"};  // c.config's optimizer
  if (recompute) c.args.push_back("--recompute");
  if (!placement.empty()) {
    c.args.push_back("--placement");
    for (int d : placement) c.args.push_back(std::to_string(d));
  }
  return c;
}

TEST_CASE("distributed run: every schedule kind over Gloo ranks matches the in-process executor bit for bit",
          "[distributed]") {
  const std::vector<Case> cases = {
      make_case("k2_1f1b_dropout", 2, 4, sched::ScheduleKind::kOneFOneB, false, 0.1),
      make_case("k4_gpipe_recompute", 4, 4, sched::ScheduleKind::kGPipe, true, 0.1),
      make_case("k4_on_2_ranks", 4, 2, sched::ScheduleKind::kOneFOneB, false, 0.0, {0, 0, 1, 1}),
      // The split backward (I then W) and several stages per rank.
      make_case("k2_zb_h1", 2, 4, sched::ScheduleKind::kZbH1, false, 0.1),
      make_case("k2_zb_h2_recompute", 2, 4, sched::ScheduleKind::kZbH2, true, 0.0),
      make_case("k4_zb_v_on_2_ranks_recompute", 4, 4, sched::ScheduleKind::kZbV, true, 0.0),
      make_case("k4_dualpipe_v_on_2_ranks", 4, 4, sched::ScheduleKind::kDualPipeV, false, 0.0),
      make_case("k4_interleaved_v2_on_2_ranks", 4, 4, sched::ScheduleKind::kInterleaved1F1B, false, 0.1, {}, 2),
      make_case("k4_looped_bfs_v2_on_2_ranks", 4, 2, sched::ScheduleKind::kLoopedBfs, true, 0.0, {}, 2),
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      const int ranks = build_schedule(c.config).value().num_devices();
      const fs::path dir = fresh_dir(c.name);
      LaunchOptions options;
      options.extra_env = {{"PIPEWORKS_TEST_DUMP_DIR", dir.string()}};
      std::vector<std::string> args = c.args;
      args.insert(args.end(), {"--json", (dir / "report.json").string()});
      const Launched launched = launch_run(ranks, args, options);
      INFO(launched.out << launched.err);
      REQUIRE(launched.result.exit_code == 0);
      require_bit_identical(dir, run_in_process(c.config), ranks);
      // Rank 0 alone prints the merged table and writes the report.
      CHECK_THAT(launched.out, Catch::Contains("[rank 0] check vs micro-batch reference"));
      CHECK_THAT(launched.out, Catch::Contains("exactly equal"));
      CHECK_THAT(launched.out, !Catch::Contains("[rank 1] check"));
      std::ifstream in(dir / "report.json");
      const auto report = nlohmann::json::parse(in);
      REQUIRE(report.at("steps").size() == 2);
      CHECK(report.at("steps")[0].at("peak_activation_bytes").size() == static_cast<std::size_t>(ranks));
      CHECK(report.at("check").at("exactly_equal").get<bool>());
      fs::remove_all(dir);
    }
  }
}

// The report's worker_cpus of a 2-rank run with these layout flags.
nlohmann::json reported_worker_cpus(const std::string& name, std::vector<std::string> args) {
  const fs::path dir = fresh_dir(name);
  args.insert(args.end(), {"-M", "2", "--batch", "8", "--steps", "1", "--json", (dir / "report.json").string()});
  const Launched launched = launch_run(2, args);
  INFO(launched.out << launched.err);
  REQUIRE(launched.result.exit_code == 0);
  std::ifstream in(dir / "report.json");
  const nlohmann::json cpus = nlohmann::json::parse(in).at("worker_cpus");
  fs::remove_all(dir);
  return cpus;
}

TEST_CASE("distributed run: a pipeline's ranks are bound to cores of their own where they fit", "[distributed]") {
  const std::vector<int> usable = usable_cpus();
  const nlohmann::json bound = reported_worker_cpus("bound", {"-K", "2", "--intra-op-threads", "1"});
  if (usable.size() >= 2) {
    CHECK(bound == nlohmann::json::array({{usable[0]}, {usable[1]}}));
  } else {
    CHECK(bound.empty());
  }
  CHECK(reported_worker_cpus("off", {"-K", "2", "--intra-op-threads", "1", "--pin-workers", "off"}).empty());
  // Replicas run their collectives on Gloo's own threads, which a bound rank would crowd: unbound.
  CHECK(reported_worker_cpus("replicas", {"--pp", "1", "--dp", "2", "--intra-op-threads", "1"}).empty());
}

TEST_CASE("distributed run: WORLD_SIZE must match the schedule's devices", "[distributed]") {
  const Launched launched = launch_run(3, {"-K", "2", "-M", "2", "--batch", "4", "--steps", "1", "--timeout", "10"});
  INFO(launched.out << launched.err);
  CHECK(launched.result.exit_code == 1);
  CHECK_THAT(launched.err, Catch::Contains("the schedule has 2 devices but WORLD_SIZE is 3"));
}

}  // namespace
}  // namespace pipeworks::hw
