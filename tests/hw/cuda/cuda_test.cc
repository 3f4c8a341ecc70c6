// The CUDA path (hw/cuda/, compiled against a LibTorch with CUDA, as the release build here is;
// run on a GPU by bench/gpu_check): device-to-device transfers, allocator statistics, event timing
// (alone and as the executor's action clock), a pipelined run on GPUs checked against the CPU
// reference and a profile taken on the GPU. Without a visible GPU each [cuda] test says it was
// skipped and why, and ctest counts it skipped (tests/CMakeLists.txt). A build without CUDA checks
// that --device cuda is a clear error.
#include <catch2/catch.hpp>

#include "hw/run/device_support.h"
#include "hw/run/run.h"

#if PIPEWORKS_HAVE_CUDA
#include <torch/torch.h>

#include "hw/cuda/cuda_copy_transport.h"
#include "hw/cuda/cuda_device.h"
#include "hw/cuda/event_action_clock.h"
#include "hw/predict/profiler.h"
#endif

namespace pipeworks::hw {
namespace {

#if PIPEWORKS_HAVE_CUDA

using sched::ActionKind;

// The first line of every [cuda] test: without a visible GPU, a note that ctest reads as "skipped".
#define PIPEWORKS_REQUIRE_GPU()                                                                       \
  do {                                                                                               \
    if (cuda::device_count() < 1) {                                                                  \
      WARN("SKIPPED: no CUDA device is visible (this build has CUDA; bench/gpu_check runs it on a GPU)"); \
      return;                                                                                        \
    }                                                                                                \
  } while (false)

TEST_CASE("cuda: the copy transport moves tensors to the receiving stage's GPU", "[cuda]") {
  PIPEWORKS_REQUIRE_GPU();
  const int other = cuda::device_count() > 1 ? 1 : 0;
  cuda::CudaCopyTransport transport({0, other});
  const torch::Tensor x =
      torch::arange(12, torch::TensorOptions(torch::kFloat32).device(torch::kCUDA, 0)).reshape({3, 4});
  REQUIRE(transport.send({0, ActionKind::kSendF, 0}, x * 2).ok());
  auto y = transport.recv({1, ActionKind::kRecvF, 0}, std::chrono::seconds(5));
  REQUIRE(y.ok());
  CHECK(y->device() == torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(other)));
  CHECK(torch::equal(y->cpu(), (x * 2).cpu()));
  auto missing = transport.recv({1, ActionKind::kRecvF, 1}, std::chrono::milliseconds(50));
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.error().message, Catch::Contains("timed out"));
  CHECK_FALSE(transport.send({0, ActionKind::kSendF, 1}, torch::zeros({2})).ok());  // a CPU tensor
}

TEST_CASE("cuda: allocator statistics see a tensor's bytes", "[cuda]") {
  PIPEWORKS_REQUIRE_GPU();
  cuda::reset_peak_memory(0);
  const sched::Bytes before = cuda::memory_stats(0).allocated_bytes;
  {
    const torch::Tensor t = torch::empty({1 << 20}, torch::TensorOptions(torch::kFloat32).device(torch::kCUDA, 0));
    CHECK(cuda::memory_stats(0).allocated_bytes - before >= 4 << 20);
  }
  CHECK(cuda::memory_stats(0).peak_allocated_bytes - before >= 4 << 20);
  CHECK(cuda::memory_stats(0).allocated_bytes == before);
}

TEST_CASE("cuda: event clock marks are ordered and measure GPU work", "[cuda]") {
  PIPEWORKS_REQUIRE_GPU();
  cuda::EventClock clock(0);
  clock.start();
  const std::size_t a = clock.mark();
  const torch::Tensor m = torch::randn({1024, 1024}, torch::TensorOptions().device(torch::kCUDA, 0));
  const torch::Tensor p = m.matmul(m).matmul(m);
  const std::size_t b = clock.mark();
  CHECK(clock.elapsed_ns(a) >= 0);
  CHECK(clock.elapsed_ns(b) > clock.elapsed_ns(a));
}

TEST_CASE("cuda: the event action clock measures GPU work from the host origin", "[cuda]") {
  PIPEWORKS_REQUIRE_GPU();
  using Clock = std::chrono::steady_clock;
  const auto ns_since = [](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
  };
  cuda::EventActionClock clock(0);
  const torch::Tensor m = torch::randn({2048, 2048}, torch::TensorOptions().device(torch::kCUDA, 0));
  for (int step = 0; step < 2; ++step) {  // the second step re-records the first one's events
    const auto origin = Clock::now();
    clock.start_step(origin);
    const sched::Nanoseconds started = ns_since(origin);
    const ClockMark a = clock.mark();
    const torch::Tensor p = m.matmul(m).matmul(m).matmul(m);
    const ClockMark b = clock.mark();
    const sched::Nanoseconds launched = ns_since(origin);
    REQUIRE(clock.finish_step().ok());
    const sched::Nanoseconds finished = ns_since(origin);
    CHECK(clock.ns(a) >= started - 1'000'000);   // E0 passed within the alignment's slack
    CHECK(clock.ns(b) > clock.ns(a));
    CHECK(clock.ns(b) <= finished + 1'000'000);
    CHECK(clock.ns(b) > launched - 1'000'000);  // the GPU finished after the host launched
  }
}

TEST_CASE("cuda: GPU runs time each device's program with events, in order", "[cuda]") {
  PIPEWORKS_REQUIRE_GPU();
  RunConfig config;
  config.model.depth = 6;
  config.model.width = 256;
  config.num_stages = 2;
  config.num_microbatches = 4;
  config.batch_size = 64;
  config.steps = 2;
  config.device = DeviceKind::kCuda;
  auto report = run_training(config);
  REQUIRE(report.ok());
  const sched::Timeline& t = report->last_timeline;
  REQUIRE(t.spans.size() == report->schedule.num_actions());
  for (int d = 0; d < report->schedule.num_devices(); ++d) {
    const auto& program = report->schedule.programs[static_cast<std::size_t>(d)];
    std::vector<sched::Span> spans;
    for (const sched::Span& s : t.spans) {
      if (s.device == d) spans.push_back(s);
    }
    REQUIRE(spans.size() == program.size());
    for (std::size_t i = 0; i < spans.size(); ++i) {
      CAPTURE(d, i);
      CHECK(spans[i].action == program[i]);
      CHECK(spans[i].start_ns >= 0);
      CHECK(spans[i].start_ns <= spans[i].end_ns);
      if (i > 0) CHECK(spans[i - 1].end_ns <= spans[i].start_ns);
      if (spans[i].action.kind == ActionKind::kForward) CHECK(spans[i].end_ns > spans[i].start_ns);
    }
  }
}

TEST_CASE("cuda: a pipelined run on GPUs matches the CPU reference", "[cuda]") {
  PIPEWORKS_REQUIRE_GPU();
  RunConfig config;
  config.model.depth = 6;
  config.model.width = 32;
  config.num_stages = 4;
  config.num_microbatches = 4;
  config.batch_size = 16;
  config.recompute = true;
  config.steps = 2;
  config.check = true;
  config.device = DeviceKind::kCuda;
  auto report = run_training(config);
  REQUIRE(report.ok());
  REQUIRE(report->check.has_value());
  CHECK(report->check->passed);
  REQUIRE(report->steps.size() == 2);
  CHECK(report->steps[1].peak_activation_bytes.size() == 4);
  CHECK(report->steps[1].step_ns > 0);
}

TEST_CASE("cuda: a profile on the GPU times layers with events and meters the caching allocator", "[cuda]") {
  PIPEWORKS_REQUIRE_GPU();
  ProfileOptions options;
  options.device = DeviceKind::kCuda;
  options.model.depth = 4;
  options.model.width = 64;
  options.microbatch_sizes = {2, 4};
  options.warmup = 1;
  options.repetitions = 3;
  options.workers = 2;
  auto profile = profile_model(options);
  REQUIRE(profile.ok());
  CHECK(profile->machine.device == DeviceKind::kCuda);
  CHECK(profile->cluster.name == "cuda-inprocess-2");
  for (const LayerProfile& layer : profile->layers) {
    for (const LayerSample& s : layer.samples) {
      CHECK(s.forward.median_ns > 0);
      CHECK(s.backward.median_ns > 0);
      CHECK(s.output_bytes > 0);
    }
  }
  CHECK(profile->machine.handoff.size() == 3);
  CHECK(profile->machine.handoff_latency_ns > 0);
}

#else

TEST_CASE("cuda: a build without CUDA says --device cuda is unavailable") {
  CHECK_FALSE(built_with_cuda());
  RunConfig config;
  config.device = DeviceKind::kCuda;
  auto report = run_training(config);
  REQUIRE_FALSE(report.ok());
  CHECK_THAT(report.error().message, Catch::Contains("LibTorch without CUDA"));
}

#endif

}  // namespace
}  // namespace pipeworks::hw
