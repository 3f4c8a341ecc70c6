// Golden files in torch.distributed.pipelining's CSV layout for every generator, of our own
// making: `compute_only` (what torch's schedules hold in pipeline_order; our passes add the
// rest) and `compute_comms` (SEND/RECV included, taken as written). Each file is what to_csv
// writes for the generated schedule, and reading it gives back that schedule, its placement
// inferred from the rows (global stage indices in every action; V kinds with two stages a row).
// PIPEWORKS_UPDATE_GOLDEN=1 rewrites the files instead of comparing.
#include <catch2/catch.hpp>

#include <string>

#include "golden_file.h"
#include "sched/csv_io.h"
#include "sched/generators.h"
#include "sched/passes.h"
#include "sched/validate.h"

using namespace pipeworks::sched;

namespace {

struct GoldenCase {
  ScheduleKind kind;
  int stages;
  int virtual_stages;
};

// Four devices, eight micro-batches; two stages per device where the kind has several.
constexpr GoldenCase kCases[] = {
    {ScheduleKind::kGPipe, 4, 1},           {ScheduleKind::kOneFOneB, 4, 1},
    {ScheduleKind::kInterleaved1F1B, 8, 2}, {ScheduleKind::kLoopedBfs, 8, 2},
    {ScheduleKind::kZbH1, 4, 1},            {ScheduleKind::kZbH2, 4, 1},
    {ScheduleKind::kZbV, 8, 2},             {ScheduleKind::kDualPipeV, 8, 2},
    {ScheduleKind::kInterleavedZb, 8, 2},
};
constexpr int kMicrobatches = 8;

std::string golden_path(const GoldenCase& c, const char* variant) {
  return std::string(PIPEWORKS_TEST_DATA_DIR) + "/golden/torch_csv/" + std::string(schedule_kind_name(c.kind)) +
         "_k" + std::to_string(c.stages) + "_m" + std::to_string(kMicrobatches) + "." + variant + ".csv";
}

// Compares `schedule`'s CSV with the golden file (or rewrites it), then reads the file back.
void check_golden(const Schedule& schedule, const std::string& path) {
  INFO(path);
  const std::string golden = pipeworks::test::check_golden_file(to_csv(schedule), path);
  auto loaded = parse_csv(golden, path);
  REQUIRE(loaded.ok());
  CHECK(loaded->schedule == schedule);
  CHECK(loaded->placement_inferred);
  CHECK(validate(loaded->schedule, ValidateOptions{true}).empty());
}

}  // namespace

TEST_CASE("torch-layout CSV golden files: compute_only, every generator", "[io][golden]") {
  for (const GoldenCase& c : kCases) {
    auto schedule = generate(c.kind, ScheduleShape{c.stages, kMicrobatches, {}}, c.virtual_stages);
    REQUIRE(schedule.ok());
    REQUIRE_FALSE(schedule->has_comm());
    check_golden(*schedule, golden_path(c, "compute_only"));
  }
}

TEST_CASE("torch-layout CSV golden files: compute_comms, every generator", "[io][golden]") {
  for (const GoldenCase& c : kCases) {
    auto schedule = generate(c.kind, ScheduleShape{c.stages, kMicrobatches, {}}, c.virtual_stages);
    REQUIRE(schedule.ok());
    auto lowered = lower_comm(*schedule);
    REQUIRE(lowered.ok());
    check_golden(*lowered, golden_path(c, "compute_comms"));
  }
}

TEST_CASE("a compute_only golden file lowered by our passes is its compute_comms file", "[io][golden]") {
  for (const GoldenCase& c : kCases) {
    const std::string only = golden_path(c, "compute_only");
    INFO(only);
    auto loaded = parse_csv(pipeworks::test::read_text_file(only), only);
    REQUIRE(loaded.ok());
    auto lowered = lower_comm(loaded->schedule);
    REQUIRE(lowered.ok());
    CHECK(to_csv(*lowered) == pipeworks::test::read_text_file(golden_path(c, "compute_comms")));
  }
}
