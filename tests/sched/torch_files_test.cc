// The files torch.distributed.pipelining itself writes (tests/data/torch_emitted/, made by its
// make_torch_files.py with torch 2.14.1): every one reads, validates with its placement inferred,
// writes back as the same text (but for torch's idle cells, which the IR drops), survives JSON,
// and a compute_only file lowers by our passes into a valid schedule.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "golden_file.h"
#include "sched/csv_io.h"
#include "sched/generators.h"
#include "sched/json_io.h"
#include "sched/passes.h"
#include "sched/validate.h"

using namespace pipeworks::sched;

namespace {

const std::string kDir = std::string(PIPEWORKS_TEST_DATA_DIR) + "/torch_emitted/";

std::vector<std::string> torch_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    if (entry.path().extension() == ".csv") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

LoadedSchedule load(const std::string& path) {
  auto loaded = parse_csv(pipeworks::test::read_text_file(path), path);
  REQUIRE(loaded.ok());
  return *loaded;
}

int count(const Schedule& s, int stage, ActionKind kind) {
  int n = 0;
  for (const Program& p : s.programs) {
    n += static_cast<int>(std::count(p.begin(), p.end(), Action{stage, kind, 0}));
  }
  return n;
}

std::string first_problem(const std::vector<Diagnostic>& diagnostics) {
  return diagnostics.empty() ? "" : diagnostics.front().message;
}

}  // namespace

TEST_CASE("every file torch writes reads, validates and writes back", "[io][torch]") {
  const std::vector<std::string> files = torch_files();
  CHECK(files.size() == 13);
  for (const std::string& path : files) {
    INFO(path);
    const std::string text = pipeworks::test::read_text_file(path);
    const LoadedSchedule loaded = load(path);
    const auto diagnostics = validate(loaded.schedule, ValidateOptions{true});
    CHECK(first_problem(diagnostics).empty());
    // torch writes an idle slot as an empty cell (",,"); the IR has none to write back.
    if (text.find(",,") == std::string::npos && text.find("\n,") == std::string::npos && text.front() != ',') {
      CHECK(to_csv(loaded.schedule) == text);
    }
    auto json = parse_json(to_json(loaded.schedule), "j.json");
    REQUIRE(json.ok());
    CHECK(json->schedule == loaded.schedule);
    if (path.find(".compute_only.") != std::string::npos || path.find(".pipeline_order.") != std::string::npos) {
      REQUIRE_FALSE(loaded.schedule.has_comm());
      auto lowered = lower_comm(loaded.schedule);
      REQUIRE(lowered.ok());
      CHECK(first_problem(validate(*lowered)).empty());
      CHECK(strip_comm(*lowered) == loaded.schedule);
    }
  }
}

TEST_CASE("torch's files hold its whole vocabulary", "[io][torch]") {
  // LoopedBFS with 4 stages a rank: torch frees stage 0 (the first it computes) and gathers it again.
  const Schedule looped = load(kDir + "ScheduleLoopedBFS_p2_v4_m8.compute_comms.csv").schedule;
  CHECK(count(looped, 0, ActionKind::kUnshard) == 2);
  CHECK(count(looped, 0, ActionKind::kReshard) == 2);
  CHECK(count(looped, 0, ActionKind::kReduceGrad) == 1);
  // DualPipeV: OVERLAP_F_B composites in both formats, the same ones.
  const Schedule only = load(kDir + "ScheduleDualPipeV_p2_v2_m4.compute_only.csv").schedule;
  const Schedule comms = load(kDir + "ScheduleDualPipeV_p2_v2_m4.compute_comms.csv").schedule;
  CHECK(only.composites.size() == 6);
  CHECK(comms.composites.size() == 6);
  CHECK(comms.has_stage_level());
  CHECK_FALSE(only.has_stage_level());
  CHECK(only.placement == std::vector<int>{0, 1, 1, 0});
  // Our dualpipe-v is torch's ScheduleDualPipeV, its overlapped pairs marked alike, byte for byte.
  for (const auto& [k, file] : {std::pair{4, "ScheduleDualPipeV_p2_v2_m4.compute_only.csv"},
                                std::pair{8, "ScheduleDualPipeV_p4_v2_m8.compute_only.csv"}}) {
    const Schedule ours = generate(ScheduleKind::kDualPipeV, ScheduleShape{k, k, {}}).value();
    CHECK(to_csv(ours) == pipeworks::test::read_text_file(kDir + file));
  }
  // GPipe's pipeline_order ends each rank with its REDUCE_GRAD.
  const Schedule gpipe = load(kDir + "ScheduleGPipe_p4_m8.pipeline_order.csv").schedule;
  for (int s = 0; s < 4; ++s) CHECK(gpipe.programs[static_cast<std::size_t>(s)].back() == Action{s, ActionKind::kReduceGrad, 0});
}
