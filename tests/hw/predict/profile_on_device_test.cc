// `profile --device cuda` without a GPU: the profiler, the stage temporaries and the machine
// profile driven through a scripted stand-in for queued devices (tests/hw/scripted_devices.h),
// so the branch a GPU takes -- layers timed on the device's clock, bytes from the device's
// allocator, hand-offs through the device's transport -- is checked on every machine.
#include "hw/hw_test_support.h"  // first: LibTorch (glog's CHECK is undefined there for Catch's)

#include <catch2/catch.hpp>

#include <algorithm>

#include "hw/run/device_support.h"
#include "hw/predict/machine_profile.h"
#include "hw/predict/profiler.h"
#include "hw/predict/stage_memory.h"
#include "hw/scripted_devices.h"

namespace pipeworks::hw {
namespace {

using testing::kScriptedMarkNs;
using testing::ScriptedDevices;

TEST_CASE("profile on a device: every layer is timed between two marks of the device's clock") {
  ScriptedDevices devices;
  devices.counting_allocator = true;
  const ModelConfig model = testing::tiny_mlp();
  auto layers = profile_layers(model, {1, 2}, 1, 2, 1, 1, 0, devices);
  REQUIRE(layers.ok());
  // 1 warm-up + 2 timed passes for each of 2 sizes, each pass resolved once.
  CHECK(devices.steps_finished == 6);
  for (std::size_t l = 0; l < layers->size(); ++l) {
    const LayerProfile& layer = (*layers)[l];
    const bool has_params = layer.param_bytes > 0;
    for (const LayerSample& s : layer.samples) {
      INFO(layer.name << " at size " << s.microbatch_size);
      CHECK(s.forward.median_ns == kScriptedMarkNs);
      CHECK(s.forward_no_grad.median_ns == kScriptedMarkNs);
      CHECK(s.backward.median_ns == kScriptedMarkNs);
      CHECK(s.backward_input.median_ns == (l == 0 ? 0 : kScriptedMarkNs));  // the data needs no gradient
      CHECK(s.backward_weight.median_ns == (has_params ? kScriptedMarkNs : 0));
    }
  }
}

TEST_CASE("profile on a device: bytes come from the device's meter, equal to the CPU's for the same allocator") {
  ScriptedDevices devices;
  devices.counting_allocator = true;  // the stand-in meters with the CPU's counters
  const ModelConfig model = testing::tiny_mlp();
  auto on_device = profile_layers(model, {2}, 0, 1, 1, 1, 0, devices);
  REQUIRE(on_device.ok());
  CHECK(devices.meter_reads > 0);
  auto on_cpu = profile_layers(model, {2}, 0, 1, 1);
  REQUIRE(on_cpu.ok());
  REQUIRE(on_device->size() == on_cpu->size());
  for (std::size_t l = 0; l < on_cpu->size(); ++l) {
    const LayerSample& d = (*on_device)[l].samples.front();
    const LayerSample& c = (*on_cpu)[l].samples.front();
    INFO((*on_cpu)[l].name);
    CHECK(d.stash_bytes == c.stash_bytes);
    CHECK(d.output_bytes == c.output_bytes);
    CHECK(d.backward_transient_bytes == c.backward_transient_bytes);
    CHECK(d.stash_bytes > 0);
  }
  auto ranges = measure_range_extra_bytes(model, 2, 1, devices, num_model_layers(model));
  REQUIRE(ranges.ok());
  const int layers = num_model_layers(model);
  CHECK(ranges->size() == static_cast<std::size_t>(layers * (layers + 1) / 2));
  // Bounded ranges: only those of up to 2 layers, with progress as the work goes.
  std::vector<std::int64_t> heard;
  auto short_ranges = measure_range_extra_bytes(model, 2, 1, devices, 2,
                                                [&](std::int64_t done, std::int64_t total) {
                                                  CHECK(total == range_layer_runs(layers, 2));
                                                  heard.push_back(done);
                                                });
  REQUIRE(short_ranges.ok());
  CHECK(short_ranges->size() == static_cast<std::size_t>(layers + layers - 1));
  for (const RangeExtraBytes& r : *short_ranges) CHECK(r.end - r.begin <= 2);
  CHECK(std::is_sorted(heard.begin(), heard.end()));
}

TEST_CASE("profile on a device: the contention's workers run on the cores given and a core out of range is an error") {
  ScriptedDevices devices;
  devices.counting_allocator = true;
  std::vector<std::string> notes;
  auto pinned = profile_machine(testing::tiny_mlp(), 2, 2, 1, 2, notes, devices, {{0}, {0}});
  REQUIRE(pinned.ok());
  CHECK(pinned->contention_factor == 1.0);
  auto refused = profile_machine(testing::tiny_mlp(), 2, 2, 1, 2, notes, devices, {{0}, {100000}});
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("contention: pin_thread: core 100000 is out of range"));
}

TEST_CASE("profile on a device: hand-off, dispatch and contention are measured on the device") {
  ScriptedDevices devices;
  devices.counting_allocator = true;
  std::vector<std::string> notes;
  auto machine = profile_machine(testing::tiny_mlp(), 2, 2, 1, 2, notes, devices, {});
  REQUIRE(machine.ok());
  CHECK(machine->device == DeviceKind::kCuda);  // the stand-in is a queued device
  // Each hand-off is the two receiver's marks around SEND + RECV: one mark apart at every size.
  REQUIRE(machine->handoff.size() == 3);
  for (const HandoffSample& h : machine->handoff) CHECK(h.latency.median_ns == kScriptedMarkNs);
  CHECK(machine->handoff_latency_ns == kScriptedMarkNs);
  CHECK(machine->handoff_bandwidth_bytes_per_s == kUnboundedBandwidth);
  // Every stage's F + B spans one mark, alone or together: no contention.
  CHECK(machine->contention_factor == 1.0);
  CHECK(machine->contention_alone.median_ns == 2 * kScriptedMarkNs);
  const sim::ClusterSpec cluster = cluster_from_machine(*machine);
  CHECK(cluster.name == "cuda-inprocess-2");
  CHECK(cluster.intra_node.latency_ns == kScriptedMarkNs);
  CHECK(cluster.cores == 0);  // devices that are not CPU workers never wait for a core
  CHECK(machine->idle_slowdown == 1.0);  // queued kernels: not measured
  CHECK(cluster.idle_slowdown == 1.0);
  CHECK(cluster.compute_slots() == 0);
}

TEST_CASE("profile on a device: profile_model takes the device kind and refuses what this build cannot drive") {
  ProfileOptions options;
  options.model = testing::tiny_mlp();
  options.microbatch_sizes = {1};
  options.repetitions = 1;
  options.warmup = 0;
  options.measure_machine = false;
  options.measure_stage_temporaries = false;
  if (!check_device_available(DeviceKind::kCuda).ok()) {
    options.device = DeviceKind::kCuda;
    REQUIRE_FALSE(profile_model(options).ok());
  }
  options.device = DeviceKind::kCpu;
  auto cpu = profile_model(options);
  REQUIRE(cpu.ok());
  CHECK(cpu->machine.device == DeviceKind::kCpu);
  CHECK(cpu->cluster.name == "cpu-inprocess-2");
}

}  // namespace
}  // namespace pipeworks::hw
