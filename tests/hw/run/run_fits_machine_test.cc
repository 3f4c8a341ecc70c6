// A run, a prediction or a profile that cannot fit this machine is refused before anything is
// built (hw/run/run_resources.h): too many compute threads for the cores, an activation or
// bookkeeping estimate past the memory available. The estimates against a stated machine, then
// the commands on this one with shapes no machine holds.
#include <catch2/catch.hpp>

#include <string>

#define PIPEWORKS_EXE (std::string(PIPEWORKS_BINARY_DIR) + "/cli/pipeworks")
#include "cli/run_pipeworks.h"
#include "hw/run/run_resources.h"

namespace pipeworks::hw {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
const MachineResources kTwoCores{2, 24 * kGiB};

RunConfig mlp_run(int stages, int microbatches, sched::ScheduleKind kind) {
  RunConfig c;
  c.model.kind = ModelKind::kMlp;
  c.model.depth = 63;
  c.model.width = 16;
  c.num_stages = stages;
  c.num_microbatches = microbatches;
  c.batch_size = microbatches;
  c.schedule = kind;
  c.threads_per_worker = 1;
  return c;
}

sched::Status fits(const RunConfig& c, const MachineResources& m = kTwoCores, double share = 1) {
  auto schedule = build_schedule(c);
  REQUIRE(schedule.ok());
  return check_run_fits(c, *schedule, m, share);
}

TEST_CASE("run fits: compute threads are bounded by the cores, one thread per worker always fits") {
  RunConfig c = mlp_run(64, 64, sched::ScheduleKind::kOneFOneB);
  CHECK(fits(c).ok());  // 64 workers x 1 thread: within kMaxRunDevices
  c.threads_per_worker = 256;
  const sched::Status crowded = fits(c);
  REQUIRE_FALSE(crowded);
  CHECK_THAT(crowded.error().message, Catch::Contains("64 workers x 256 intra-op threads = 16384 compute threads on 2 "
                                                      "usable cores"));
  CHECK(fits(c, {4096, 24 * kGiB}).ok());  // a machine with the cores
}

TEST_CASE("run fits: the in-flight micro-batches decide memory, so gpipe at large M is refused and 1f1b is not") {
  const MachineResources small{2, 1 * kGiB};
  const RunConfig gpipe = mlp_run(2, 16'384, sched::ScheduleKind::kGPipe);  // every micro-batch in flight
  const RunConfig one_f_one_b = mlp_run(2, 16'384, sched::ScheduleKind::kOneFOneB);  // at most 2
  auto schedule = build_schedule(gpipe);
  REQUIRE(schedule.ok());
  const RunMemoryEstimate e = estimate_run_memory(gpipe, *schedule);
  CHECK(e.bookkeeping == Approx(16'384.0 * 64 * kHostBytesPerLayerInFlight));
  CHECK(estimate_run_memory(gpipe, *schedule, 0.5).total() == Approx(e.total() / 2));
  const sched::Status refused = fits(gpipe, small);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("this run needs about") && Catch::Contains("1.00 GiB available"));
  CHECK(fits(one_f_one_b, small).ok());
  CHECK(fits(gpipe).ok());               // 24 GiB hold it
  CHECK(fits(gpipe, {2, 0}).ok());       // memory unknown: not checked
}

TEST_CASE("run fits: activations of a long sequence are refused, re-materialization keeps fewer") {
  RunConfig c;
  c.model.kind = ModelKind::kTransformer;
  c.model.seq_len = 8192;
  c.num_stages = 2;
  c.num_microbatches = 8;
  c.batch_size = 32;
  c.schedule = sched::ScheduleKind::kGPipe;
  c.threads_per_worker = 1;
  auto schedule = build_schedule(c);
  REQUIRE(schedule.ok());
  const RunMemoryEstimate e = estimate_run_memory(c, *schedule);
  CHECK(e.activations > 24 * kGiB);  // (S, S) scores of 4 heads x 4 layers x 32 samples
  c.data_parallel = 2;  // --batch is the whole mini-batch: a replica's micro-batches are half as large
  CHECK(estimate_run_memory(c, *schedule).activations == Approx(e.activations / 2));
  c.data_parallel = 1;
  c.recompute = true;
  CHECK(estimate_run_memory(c, *schedule).activations == Approx(e.activations / 8));
  c.device = DeviceKind::kCuda;  // activations live on the GPU there
  CHECK(estimate_run_memory(c, *schedule).activations == 0);
}

TEST_CASE("run fits: the commands refuse what no machine holds at once, exit 2, naming the estimate") {
  const test::CliRun seq = test::run_pipeworks("run --model transformer --seq-len 65536 -K 2 -M 8 --batch 32 "
                                               "--steps 1 --intra-op-threads 1");
  CHECK(seq.exit_code == 2);
  CHECK_THAT(seq.output, Catch::Contains("this run needs about") && Catch::Contains("activations"));
  const test::CliRun predict = test::run_pipeworks("run --predict --model transformer --seq-len 65536 -K 2 -M 8 "
                                                   "--batch 32 --steps 1 --intra-op-threads 1");
  CHECK(predict.exit_code == 2);
  CHECK_THAT(predict.output, Catch::Contains("this run needs about"));
  const test::CliRun threads = test::run_pipeworks("run --model mlp --depth 63 --width 4 -K 64 -M 64 --batch 64 "
                                                   "--steps 1 --intra-op-threads 256");
  CHECK(threads.exit_code == 2);
  CHECK_THAT(threads.output, Catch::Contains("64 workers x 256 intra-op threads"));
  const test::CliRun profile = test::run_pipeworks("profile --model transformer --seq-len 65536 --microbatch-sizes "
                                                   "1,8 -o /dev/null");
  CHECK(profile.exit_code == 2);
  CHECK_THAT(profile.output, Catch::Contains("profiling a micro-batch of 8 needs about"));
}

}  // namespace
}  // namespace pipeworks::hw
