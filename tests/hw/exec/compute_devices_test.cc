// Where runs compute (hw/exec/compute_devices.h): the CPU's devices, the choice by name, the memory
// domains of devices sharing a GPU, and the step meter's arithmetic for devices whose work is
// queued and whose allocator, not the executor, counts memory (the GPU branch, driven here by a
// scripted stand-in so it runs without a GPU).
#include "hw/hw_test_support.h"  // first: LibTorch (glog's CHECK is undefined there for Catch's)

#include <catch2/catch.hpp>

#include <map>

#include <fmt/format.h>

#include "hw/exec/compute_devices.h"
#include "hw/run/device_choice.h"
#include "hw/run/device_support.h"
#include "hw/scripted_devices.h"

namespace pipeworks::hw {
namespace {

using testing::ScriptedDevices;

TEST_CASE("compute devices: the CPU is what the executor does by default") {
  auto cpu = make_compute_devices(DeviceKind::kCpu);
  REQUIRE(cpu.ok());
  const ComputeDevices& d = **cpu;
  CHECK(d.kind() == DeviceKind::kCpu);
  CHECK(d.device_of(3) == torch::Device(torch::kCPU));
  CHECK_FALSE(d.asynchronous());
  CHECK(d.executor_meters_memory());
  CHECK(d.memory_domain(2) == 2);
  ExecutorOptions options;
  options.measure_memory = false;
  d.configure(options);
  CHECK(options.measure_memory);
  CHECK_FALSE(options.clock);  // the host clock
  CHECK(d.transport({}) == nullptr);

  // Batches stay where they are: the very tensors, no copies.
  MicroBatches batch;
  batch.inputs = {torch::ones({2, 3})};
  batch.targets = {torch::zeros({2, 1})};
  sched::Schedule schedule;
  schedule.placement = {0, 1};
  const MicroBatches placed = place_batch(d, batch, schedule);
  CHECK(placed.inputs.front().data_ptr() == batch.inputs.front().data_ptr());

  // The step meter leaves the executor's step time and peaks alone.
  StepMeter meter(d, 2);
  meter.start();
  StepResult result;
  result.step_ns = 1234;
  result.peak_activation_bytes = {10, 20};
  CHECK(meter.finish(result) == 1234);
  CHECK(result.peak_activation_bytes == std::vector<sched::Bytes>{10, 20});
}

TEST_CASE("compute devices: device names are read once, unknown ones are clear errors") {
  CHECK(*parse_device_kind("cpu") == DeviceKind::kCpu);
  CHECK(*parse_device_kind("cuda") == DeviceKind::kCuda);
  for (const DeviceKind kind : {DeviceKind::kCpu, DeviceKind::kCuda}) {
    CHECK(*parse_device_kind(device_kind_name(kind)) == kind);
  }
  for (const char* unknown : {"tpu", "CPU", "", "cuda:0"}) {
    auto parsed = parse_device_kind(unknown);
    REQUIRE_FALSE(parsed.ok());
    CHECK_THAT(parsed.error().message,
               Catch::Contains(fmt::format("device '{}' is not supported (cpu or cuda)", unknown)));
  }
}

TEST_CASE("compute devices: CUDA without CUDA is a clear error") {
  if (!built_with_cuda()) {
    auto cuda = make_compute_devices(DeviceKind::kCuda);
    REQUIRE_FALSE(cuda.ok());
    CHECK_THAT(cuda.error().message, Catch::Contains("LibTorch without CUDA"));
    REQUIRE_FALSE(check_device_available(DeviceKind::kCuda).ok());
    REQUIRE_FALSE(memory_domains(DeviceKind::kCuda, 2).ok());
  } else if (!torch::cuda::is_available()) {  // CUDA compiled in, no GPU here (CI)
    auto cuda = make_compute_devices(DeviceKind::kCuda);
    REQUIRE_FALSE(cuda.ok());
    CHECK_THAT(cuda.error().message, Catch::Contains("no CUDA device is visible"));
    REQUIRE_FALSE(check_device_available(DeviceKind::kCuda).ok());
  } else {
    REQUIRE(make_compute_devices(DeviceKind::kCuda).ok());
  }
}

TEST_CASE("compute devices: devices sharing a GPU are compared by the GPU's peak") {
  auto cpu = memory_domains(DeviceKind::kCpu, 3);
  REQUIRE(cpu.ok());
  CHECK(*cpu == std::vector<int>{0, 1, 2});
  CHECK(shared_peaks({5, 7, 9}, *cpu) == std::vector<sched::Bytes>{5, 7, 9});
  // Devices 0, 2 on GPU 0 and device 1 on GPU 1 (3 devices on 2 GPUs).
  CHECK(shared_peaks({5, 7, 9}, {0, 1, 0}) == std::vector<sched::Bytes>{14, 7, 14});
}

TEST_CASE("compute devices: a queued device's step is timed to its synchronize and metered by its allocator") {
  ScriptedDevices d;
  d.live = {{0, 1000}, {1, 500}};
  d.peak = {{0, 4000}, {1, 9000}};  // before the step: must not count
  StepMeter meter(d, 4);            // devices 0, 1 on domain 0; 2, 3 on domain 1
  meter.start();
  CHECK(d.synchronized == 1);
  CHECK(d.peak == std::map<int, sched::Bytes>{{0, 1000}, {1, 500}});  // new peak windows
  // The step: domain 0 peaks 3000 above its start, domain 1 allocates and frees 200.
  d.peak = {{0, 4000}, {1, 700}};
  d.live = {{0, 1200}, {1, 500}};
  StepResult result;
  result.step_ns = 1;  // the host's return from the step, long before queued work ends
  result.peak_activation_bytes = {0, 0, 0, 0};
  const sched::Nanoseconds ns = meter.finish(result);
  CHECK(d.synchronized == 2);
  CHECK(ns > 0);
  CHECK(result.peak_activation_bytes == std::vector<sched::Bytes>{3000, 3000, 200, 200});
}

}  // namespace
}  // namespace pipeworks::hw
