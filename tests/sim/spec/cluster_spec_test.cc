// Cluster spec JSON: both device forms, topology, defaults, round trip, and the checks.
#include <catch2/catch.hpp>

#include "sim/spec/cluster_presets.h"
#include "sim/spec/cluster_spec.h"
#include "sim/spec/gpu_kernels.h"

namespace pipeworks::sim {
namespace {

// A one-device spec with `members` added to its top level.
sched::Result<ClusterSpec> one_device_with(const char* members) {
  return parse_cluster_spec(std::string(R"({"name": "x", "devices": 1, "device": {"memory_bytes": "1GiB"}, )") +
                            members + "}");
}

TEST_CASE("a uniform cluster loads") {
  auto spec = parse_cluster_spec(R"({
    "name": "two-nodes", "devices": 16,
    "device": {"memory_bytes": "80GiB", "flops_per_s": "989TFLOP/s"},
    "devices_per_node": 8,
    "intra_node": {"bandwidth_bytes_per_s": "450GB/s", "latency": "3us"},
    "inter_node": {"bandwidth_bytes_per_s": "400Gbit/s", "latency_ns": 5000},
    "comm_mode": "blocking", "dispatch_overhead": "10us"})");
  REQUIRE(spec.ok());
  CHECK(spec->num_devices() == 16);
  CHECK(spec->num_nodes() == 2);
  CHECK(spec->node_of(7) == 0);
  CHECK(spec->node_of(8) == 1);
  CHECK(spec->devices[3] == DeviceSpec{80LL << 30, 1.0, 989e12});
  CHECK(spec->intra_node == LinkSpec{450e9, 3000});
  CHECK(spec->inter_node == LinkSpec{50e9, 5000});
  CHECK(spec->comm_mode == CommMode::kBlocking);
  CHECK(spec->dispatch_overhead_ns == 10'000);
  CHECK(check_cluster_spec(*spec).ok());
}

TEST_CASE("devices may differ, one node needs no inter-node link") {
  auto spec = parse_cluster_spec(R"({"name": "mixed", "devices": [
      {"memory_bytes": "16GiB", "relative_speed": 2},
      {"memory_bytes": 8589934592, "relative_speed": 0.5}],
    "intra_node": {"bandwidth_bytes_per_s": 1e10}})");
  REQUIRE(spec.ok());
  CHECK(spec->devices_per_node == 2);
  CHECK(spec->devices[0] == DeviceSpec{16LL << 30, 2.0, 0});
  CHECK(spec->devices[1] == DeviceSpec{8LL << 30, 0.5, 0});
  CHECK(spec->comm_mode == CommMode::kOverlap);
  CHECK(spec->dispatch_overhead_ns == 0);
  auto again = parse_cluster_spec(cluster_spec_to_json(*spec));
  REQUIRE(again.ok());
  CHECK(*again == *spec);
}

TEST_CASE("cluster presets round-trip and pass their checks") {
  for (const PresetInfo& info : cluster_presets()) {
    INFO(info.name);
    auto spec = cluster_preset(info.name);
    REQUIRE(spec.ok());
    CHECK(check_cluster_spec(*spec).ok());
    CHECK_FALSE(info.description.empty());
    auto again = parse_cluster_spec(cluster_spec_to_json(*spec));
    REQUIRE(again.ok());
    CHECK(*again == *spec);
  }
}

TEST_CASE("check_cluster_spec rejects inconsistent specs built in code") {
  ClusterSpec spec;
  spec.name = "x";
  CHECK_THAT(check_cluster_spec(spec).error().message, Catch::Contains("at least one device"));
  spec.devices.assign(4, DeviceSpec{1, 1, 0});
  spec.devices_per_node = 3;
  CHECK_THAT(check_cluster_spec(spec).error().message, Catch::Contains("divide"));
  spec.devices_per_node = 2;
  spec.intra_node = LinkSpec{1e9, 0};
  CHECK_THAT(check_cluster_spec(spec).error().message, Catch::Contains("inter_node"));
  spec.inter_node = LinkSpec{1e9, 0};
  CHECK(check_cluster_spec(spec).ok());
  spec.devices[1].relative_speed = 0;
  CHECK_THAT(check_cluster_spec(spec).error().message, Catch::Contains("device 1"));
}

TEST_CASE("a link's send overhead round-trips and must not be negative") {
  auto spec = parse_cluster_spec(R"({"name": "gloo", "devices": 2, "device": {"memory_bytes": "1GiB"},
    "intra_node": {"bandwidth_bytes_per_s": "1GB/s", "latency": "25us", "send_overhead": "42us"}})");
  REQUIRE(spec.ok());
  CHECK(spec->intra_node == LinkSpec{1e9, 25'000, 42'000});
  auto again = parse_cluster_spec(cluster_spec_to_json(*spec));
  REQUIRE(again.ok());
  CHECK(*again == *spec);
  CHECK_THAT(cluster_spec_to_json(*spec), Catch::Contains("send_overhead"));
  spec->intra_node.send_overhead_ns = 0;  // the default is left out of the JSON
  CHECK_THAT(cluster_spec_to_json(*spec), !Catch::Contains("send_overhead"));
  spec->intra_node.send_overhead_ns = -1;
  CHECK_THAT(check_cluster_spec(*spec).error().message, Catch::Contains("send overhead"));
  auto refused = parse_cluster_spec(R"({"name": "x", "devices": 2, "device": {"memory_bytes": "1GiB"},
    "intra_node": {"bandwidth_bytes_per_s": "1GB/s", "send_overhead": "-3us"}})");
  CHECK_FALSE(refused.ok());
}

TEST_CASE("a tensor-parallel link round-trips, defaults to intra_node and is checked") {
  auto spec = parse_cluster_spec(R"({"name": "gloo", "devices": 2, "device": {"memory_bytes": "1GiB"},
    "intra_node": {"bandwidth_bytes_per_s": "1GB/s"},
    "tensor_parallel_link": {"bandwidth_bytes_per_s": "2GB/s", "latency": "40us"}})");
  REQUIRE(spec.ok());
  REQUIRE(spec->tensor_parallel_link);
  CHECK(*spec->tensor_parallel_link == LinkSpec{2e9, 40'000});
  auto again = parse_cluster_spec(cluster_spec_to_json(*spec));
  REQUIRE(again.ok());
  CHECK(*again == *spec);
  spec->tensor_parallel_link.reset();  // none: the JSON leaves it out
  CHECK_THAT(cluster_spec_to_json(*spec), !Catch::Contains("tensor_parallel_link"));
  spec->tensor_parallel_link = LinkSpec{0, 1};
  CHECK_THAT(check_cluster_spec(*spec).error().message, Catch::Contains("tensor_parallel_link"));
  auto refused = parse_cluster_spec(R"({"name": "x", "devices": 2, "device": {"memory_bytes": "1GiB"},
    "intra_node": {"bandwidth_bytes_per_s": "1GB/s"}, "tensor_parallel_link": {"latency": "3us"}})");
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message, Catch::Contains("/tensor_parallel_link/bandwidth_bytes_per_s"));
}

TEST_CASE("a CPU node's idle slowdown round-trips: a factor below 1 or without its idle time is refused") {
  auto spec = parse_cluster_spec(R"({"name": "cpu", "devices": 2, "device": {"memory_bytes": "1GiB"},
    "intra_node": {"bandwidth_bytes_per_s": "8GB/s"}, "idle_slowdown": 1.25, "idle_slowdown_after": "5ms"})");
  REQUIRE(spec.ok());
  CHECK(spec->idle_slowdown == 1.25);
  CHECK(spec->idle_slowdown_after_ns == 5'000'000);
  auto again = parse_cluster_spec(cluster_spec_to_json(*spec));
  REQUIRE(again.ok());
  CHECK(*again == *spec);
  ClusterSpec plain = *spec;
  plain.idle_slowdown = 1;
  plain.idle_slowdown_after_ns = 0;
  CHECK_THAT(cluster_spec_to_json(plain), !Catch::Contains("idle_slowdown"));
  spec->idle_slowdown_after_ns = 0;
  CHECK_THAT(check_cluster_spec(*spec).error().message, Catch::Contains("idle_slowdown"));
  spec->idle_slowdown = 0.9;
  CHECK_THAT(check_cluster_spec(*spec).error().message, Catch::Contains("idle_slowdown"));
  for (const char* bad : {R"("idle_slowdown": 0.9, "idle_slowdown_after": "5ms")", R"("idle_slowdown": 1.2)",
                          R"("idle_slowdown": "fast", "idle_slowdown_after": "5ms")",
                          R"("idle_slowdown": 1.2, "idle_slowdown_after": "-1ms")",
                          R"("idle_slowdown": 2000, "idle_slowdown_after": "5ms")"}) {
    INFO(bad);
    auto refused = one_device_with(bad);
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("/idle_slowdown"));
  }
}

TEST_CASE("a CPU node's cores and threads per device round-trip and give its compute slots") {
  auto spec = parse_cluster_spec(R"({"name": "cpu", "devices": 16, "device": {"memory_bytes": "1GiB"},
    "intra_node": {"bandwidth_bytes_per_s": "8GB/s"}, "cores": 2, "threads_per_device": 1, "core_slice": "3ms"})");
  REQUIRE(spec.ok());
  CHECK(spec->cores == 2);
  CHECK(spec->compute_slots() == 2);
  CHECK(spec->core_slice_ns == 3'000'000);
  auto again = parse_cluster_spec(cluster_spec_to_json(*spec));
  REQUIRE(again.ok());
  CHECK(*again == *spec);
  ClusterSpec gpus = *spec;
  gpus.cores = 0;
  CHECK(gpus.compute_slots() == 0);
  CHECK_THAT(cluster_spec_to_json(gpus), !Catch::Contains("cores"));
  spec->threads_per_device = 0;
  CHECK_THAT(check_cluster_spec(*spec).error().message, Catch::Contains("threads_per_device"));
  spec->threads_per_device = 1;
  spec->core_slice_ns = -1;
  CHECK_THAT(check_cluster_spec(*spec).error().message, Catch::Contains("core_slice"));
  for (const char* bad : {R"("cores": -1)", R"("cores": 1.5)", R"("threads_per_device": 0)", R"("cores": 100000)",
                          R"("core_slice": "-1ms")", R"("core_slice": "soon")"}) {
    INFO(bad);
    auto refused = one_device_with(bad);
    CHECK_FALSE(refused.ok());
  }
}

TEST_CASE("comm modes parse strictly") {
  CHECK(*parse_comm_mode("overlap") == CommMode::kOverlap);
  CHECK(*parse_comm_mode("blocking") == CommMode::kBlocking);
  CHECK(*parse_comm_mode("eager") == CommMode::kEager);
  CHECK(comm_mode_name(CommMode::kEager) == "eager");
  CHECK_FALSE(parse_comm_mode("Overlap").ok());
}

TEST_CASE("a node's contention factor round-trips and reaches every device of the cost model") {
  constexpr const char* kCpu = R"({"name": "cpu", "devices": 2, "device": {"memory_bytes": "unknown"},
    "devices_per_node": 2, "intra_node": {"bandwidth_bytes_per_s": 1e15}, "contention": 1.5})";
  auto spec = parse_cluster_spec(kCpu, "cpu.json");
  REQUIRE(spec.ok());
  CHECK(spec->contention_factor == 1.5);
  auto again = parse_cluster_spec(cluster_spec_to_json(*spec), "again.json");
  REQUIRE(again.ok());
  CHECK(*again == *spec);
  for (const char* bad : {"0.5", "0", "1001", "\"2\""}) {
    const std::string text = std::string(R"({"name": "c", "devices": 1, "device": {"memory_bytes": "unknown"}, "contention": )") + bad + "}";
    auto refused = parse_cluster_spec(text, "c.json");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().message.find("/contention") != std::string::npos);
  }
  ClusterSpec coded = *spec;
  coded.contention_factor = 0.9;
  CHECK_FALSE(check_cluster_spec(coded).ok());
}

TEST_CASE("how much overlapped passes slow each other round-trips") {
  constexpr const char* kGpu = R"({"name": "gpu", "devices": 2, "device": {"memory_bytes": "80GiB"},
    "devices_per_node": 2, "intra_node": {"bandwidth_bytes_per_s": 1e11}, "overlapped_pass_share": 0.25})";
  auto spec = parse_cluster_spec(kGpu, "gpu.json");
  REQUIRE(spec.ok());
  CHECK(spec->overlapped_pass_share == 0.25);
  auto again = parse_cluster_spec(cluster_spec_to_json(*spec), "again.json");
  REQUIRE(again.ok());
  CHECK(*again == *spec);
  for (const char* bad : {"-0.1", "1.5", "\"half\""}) {
    const std::string text =
        std::string(R"({"name": "c", "devices": 1, "device": {"memory_bytes": "unknown"}, "overlapped_pass_share": )") + bad + "}";
    auto refused = parse_cluster_spec(text, "c.json");
    REQUIRE_FALSE(refused.ok());
    CHECK_THAT(refused.error().message, Catch::Contains("/overlapped_pass_share"));
  }
  ClusterSpec coded = *spec;
  coded.overlapped_pass_share = 2;
  CHECK_THAT(check_cluster_spec(coded).error().message, Catch::Contains("overlapped_pass_share 2 must be from 0 to 1"));
}

TEST_CASE("a device names its GPU cost model, built in or written out, and a bad one is an error") {
  const std::string named = R"({"name": "n", "devices": 2, "devices_per_node": 2,
    "device": {"memory_bytes": "80GiB", "gpu": "h100-sxm"},
    "intra_node": {"bandwidth_bytes_per_s": 4.5e11, "latency": "3us"}})";
  auto spec = parse_cluster_spec(named);
  REQUIRE(spec.ok());
  REQUIRE(spec->devices[0].gpu.has_value());
  CHECK(*spec->devices[0].gpu == gpu_kernel_model("h100-sxm").value());
  CHECK(cluster_spec_to_json(*spec).find(R"("gpu": "h100-sxm")") != std::string::npos);
  auto again = parse_cluster_spec(cluster_spec_to_json(*spec));
  REQUIRE(again.ok());
  CHECK(*again == *spec);
  // A model of one's own travels as an object and comes back equal.
  spec->devices[0].gpu->host_ns_per_kernel = 1234;
  spec->devices[1].gpu = spec->devices[0].gpu;
  again = parse_cluster_spec(cluster_spec_to_json(*spec));
  REQUIRE(again.ok());
  CHECK(*again == *spec);
  std::string unknown = named;
  unknown.replace(unknown.find("h100-sxm"), 8, "h100");
  const auto bad = parse_cluster_spec(unknown, "c.json");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message ==
        "c.json: /device/gpu: unknown GPU 'h100' (built-in GPU cost models: a100-sxm-80gb, h100-sxm, h200-sxm)");
  CHECK(cluster_preset("dgx-a100")->devices[0].gpu->name == "a100-sxm-80gb");
  CHECK(cluster_preset("dgx-h200")->devices[0].gpu->name == "h200-sxm");
  CHECK_FALSE(cluster_preset("cpu2")->devices[0].gpu.has_value());
}

}  // namespace
}  // namespace pipeworks::sim
