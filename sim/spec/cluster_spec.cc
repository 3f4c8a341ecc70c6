// ClusterSpec checks and JSON I/O. Devices are given either as a count plus one "device"
// object (identical devices) or as an array of device objects.
#include "sim/spec/cluster_spec.h"

#include <cmath>

#include <fmt/format.h>

#include "sim/spec/spec_json.h"

namespace pipeworks::sim {
namespace {

sched::Error error(std::string message) { return sched::Error{std::move(message), std::nullopt}; }

constexpr const char* kMemoryKey = "memory_bytes";
constexpr const char* kUnknownMemory = "unknown";  // a device's capacity not known: nothing is checked

// A built-in GPU cost model's name or a data file's object (gpu_kernels.h).
std::optional<GpuKernelModel> read_gpu(SpecReader& reader, const Json& value, const std::string& pointer) {
  if (!value.is_string() && !value.is_object()) {
    reader.fail(pointer, &value, "expected a GPU cost model's name or its object (docs/gpu_cost_model.md)");
    return std::nullopt;
  }
  auto gpu = value.is_string() ? gpu_kernel_model(value.get<std::string>()) : parse_gpu_kernel_model(value.dump(), "gpu");
  if (!gpu) {
    reader.fail(pointer, nullptr, gpu.error().message);
    return std::nullopt;
  }
  return *gpu;
}

DeviceSpec read_device(SpecReader& reader, const Json& object, const std::string& pointer) {
  DeviceSpec device;
  if (!reader.expect_object(object, pointer)) return device;
  reader.allow_keys(object, pointer,
                    {"memory_bytes", "relative_speed", "flops_per_s", "peak_flops_per_s", "memory_bandwidth", "gpu"});
  // "unknown" is the one way to leave the capacity unchecked (0 in DeviceSpec); a 0 written as
  // a size would silently make every configuration fit.
  const auto memory = object.find(kMemoryKey);
  if (memory != object.end() && memory->is_string() && memory->get<std::string>() == kUnknownMemory) {
    device.memory_bytes = 0;
  } else {
    device.memory_bytes = reader.bytes(object, pointer, kMemoryKey, std::nullopt);
    if (reader.ok() && device.memory_bytes == 0) {
      reader.fail(pointer_child(pointer, kMemoryKey), &*memory,
                  fmt::format("0 bytes would make every configuration fit; write \"{}\" when the memory is not known "
                              "(then no plan checks it)",
                              kUnknownMemory));
    }
  }
  device.relative_speed = reader.positive_number(object, pointer, "relative_speed", 1.0);
  device.flops_per_s = object.contains("flops_per_s")
                           ? reader.flop_rate(object, pointer, "flops_per_s", std::nullopt)
                           : 0.0;
  device.peak_flops_per_s =
      object.contains("peak_flops_per_s") ? reader.flop_rate(object, pointer, "peak_flops_per_s", std::nullopt) : 0.0;
  device.memory_bandwidth_bytes_per_s =
      object.contains("memory_bandwidth") ? reader.bandwidth(object, pointer, "memory_bandwidth", std::nullopt) : 0.0;
  if (const auto it = object.find("gpu"); reader.ok() && it != object.end()) device.gpu = read_gpu(reader, *it, pointer_child(pointer, "gpu"));
  return device;
}

LinkSpec read_link(SpecReader& reader, const Json& root, std::string_view key) {
  LinkSpec link;
  const std::string pointer = pointer_child("", key);
  const Json& object = root[std::string(key)];
  if (!reader.expect_object(object, pointer)) return link;
  reader.allow_keys(object, pointer, {"bandwidth_bytes_per_s", "latency", "latency_ns", "send_overhead"});
  link.bandwidth_bytes_per_s = reader.bandwidth(object, pointer, "bandwidth_bytes_per_s", std::nullopt);
  link.latency_ns = reader.duration(object, pointer, "latency", Nanoseconds{0});
  link.send_overhead_ns = reader.duration(object, pointer, "send_overhead", Nanoseconds{0});
  return link;
}

// How the devices execute: comm mode, dispatch overhead, contention, overlapped passes, cores.
void read_execution(SpecReader& reader, const Json& root, ClusterSpec& spec) {
  const std::string mode = reader.string(root, "", "comm_mode", std::string("overlap"));
  if (reader.ok()) {
    auto parsed_mode = parse_comm_mode(mode);
    if (parsed_mode) {
      spec.comm_mode = *parsed_mode;
    } else {
      reader.fail("/comm_mode", &root["comm_mode"], "expected \"overlap\" or \"blocking\"");
    }
  }
  spec.dispatch_overhead_ns = reader.duration(root, "", "dispatch_overhead", Nanoseconds{0});
  spec.contention_factor = reader.positive_number(root, "", "contention", 1.0);
  if (reader.ok() && !(spec.contention_factor >= 1.0 && spec.contention_factor <= 1000.0)) {
    reader.fail("/contention", &root["contention"], "must be from 1 (no contention) to 1000");
  }
  if (const auto it = root.find("overlapped_pass_share"); reader.ok() && it != root.end()) {
    if (!it->is_number() || !(it->get<double>() >= 0 && it->get<double>() <= 1)) {
      reader.fail("/overlapped_pass_share", &*it, "expected a number from 0 (the shorter pass hidden) to 1 (back to back)");
    } else {
      spec.overlapped_pass_share = it->get<double>();
    }
  }
  spec.cores = static_cast<int>(reader.integer(root, "", "cores", 0, 0));
  spec.threads_per_device = static_cast<int>(reader.integer(root, "", "threads_per_device", 1, 1));
  spec.core_slice_ns = reader.duration(root, "", "core_slice", Nanoseconds{0});
  spec.idle_slowdown = reader.positive_number(root, "", "idle_slowdown", 1.0);
  if (reader.ok() && !(spec.idle_slowdown >= 1.0 && spec.idle_slowdown <= 1000.0)) {
    reader.fail("/idle_slowdown", &root["idle_slowdown"], "must be from 1 (no slowdown) to 1000");
  }
  spec.idle_slowdown_after_ns = reader.duration(root, "", "idle_slowdown_after", Nanoseconds{0});
  if (reader.ok() && spec.idle_slowdown != 1.0 && spec.idle_slowdown_after_ns <= 0) {
    reader.fail("/idle_slowdown_after", nullptr, "needs a positive idle time with an idle_slowdown above 1");
  }
  if (reader.ok() && (spec.cores > kMaxCores || spec.threads_per_device > kMaxCores)) {
    reader.fail(spec.cores > kMaxCores ? "/cores" : "/threads_per_device", nullptr,
                fmt::format("at most {}", kMaxCores));
  }
}

nlohmann::ordered_json device_json(const DeviceSpec& d) {
  nlohmann::ordered_json out;
  out[kMemoryKey] = d.memory_bytes == 0 ? std::string(kUnknownMemory) : exact_bytes_string(d.memory_bytes);
  out["relative_speed"] = d.relative_speed;
  if (d.flops_per_s > 0) out["flops_per_s"] = d.flops_per_s;
  if (d.peak_flops_per_s > 0) out["peak_flops_per_s"] = d.peak_flops_per_s;
  if (d.memory_bandwidth_bytes_per_s > 0) out["memory_bandwidth"] = d.memory_bandwidth_bytes_per_s;
  if (d.gpu) {
    auto built_in = gpu_kernel_model(d.gpu->name);
    out["gpu"] = built_in && *built_in == *d.gpu ? nlohmann::ordered_json(d.gpu->name)
                                                  : nlohmann::ordered_json::parse(gpu_kernel_model_to_json(*d.gpu));
  }
  return out;
}

nlohmann::ordered_json link_json(const LinkSpec& l) {
  nlohmann::ordered_json out{{"bandwidth_bytes_per_s", l.bandwidth_bytes_per_s},
                             {"latency", exact_duration_string(l.latency_ns)}};
  if (l.send_overhead_ns != 0) out["send_overhead"] = exact_duration_string(l.send_overhead_ns);
  return out;
}

}  // namespace

sched::Status check_cluster_spec(const ClusterSpec& spec) {
  const std::string who = fmt::format("cluster '{}'", spec.name);
  if (spec.devices.empty()) return error(who + ": needs at least one device");
  if (spec.devices_per_node < 1 || spec.num_devices() % spec.devices_per_node != 0) {
    return error(fmt::format("{}: devices_per_node ({}) must be >= 1 and divide the {} devices",
                             who, spec.devices_per_node, spec.num_devices()));
  }
  for (std::size_t i = 0; i < spec.devices.size(); ++i) {
    const DeviceSpec& d = spec.devices[i];
    if (d.memory_bytes < 0 || !(std::isfinite(d.relative_speed) && d.relative_speed > 0) ||
        !(std::isfinite(d.flops_per_s) && d.flops_per_s >= 0) ||
        !(std::isfinite(d.peak_flops_per_s) && d.peak_flops_per_s >= 0) ||
        !(std::isfinite(d.memory_bandwidth_bytes_per_s) && d.memory_bandwidth_bytes_per_s >= 0)) {
      return error(fmt::format("{}: device {}: memory, FLOP/s and memory bandwidth must be non-negative, speed positive",
                               who, i));
    }
  }
  auto bad_link = [](const LinkSpec& l) {
    return !(std::isfinite(l.bandwidth_bytes_per_s) && l.bandwidth_bytes_per_s > 0) || l.latency_ns < 0 ||
           l.send_overhead_ns < 0;
  };
  if (spec.devices_per_node > 1 && bad_link(spec.intra_node)) {
    return error(who + ": intra_node link needs a positive bandwidth, a non-negative latency and send overhead");
  }
  if (spec.num_nodes() > 1 && bad_link(spec.inter_node)) {
    return error(who + ": inter_node link needs a positive bandwidth, a non-negative latency and send overhead");
  }
  if (spec.tensor_parallel_link && bad_link(*spec.tensor_parallel_link)) {
    return error(who + ": tensor_parallel_link needs a positive bandwidth, a non-negative latency and send overhead");
  }
  if (spec.cores < 0 || spec.cores > kMaxCores || spec.threads_per_device < 1 || spec.threads_per_device > kMaxCores) {
    return error(fmt::format("{}: cores ({}) must be 0 (no limit) to {}, threads_per_device ({}) 1 to {}", who,
                             spec.cores, kMaxCores, spec.threads_per_device, kMaxCores));
  }
  if (spec.core_slice_ns < 0) return error(who + ": core_slice must not be negative");
  if (!valid_idle_slowdown(spec.idle_slowdown, spec.idle_slowdown_after_ns)) {
    return error(fmt::format("{}: idle_slowdown {} must be from 1 to 1000, and above 1 needs a positive "
                             "idle_slowdown_after ({} ns)",
                             who, spec.idle_slowdown, spec.idle_slowdown_after_ns));
  }
  if (spec.inter_node_links < 1 || spec.inter_node_links > spec.devices_per_node) {
    return error(fmt::format("{}: inter_node_links ({}) must be from 1 to devices_per_node ({})", who,
                             spec.inter_node_links, spec.devices_per_node));
  }
  if (spec.dispatch_overhead_ns < 0) return error(who + ": dispatch overhead must not be negative");
  if (!(spec.contention_factor >= 1.0 && spec.contention_factor <= 1000.0)) {
    return error(fmt::format("{}: contention {} must be from 1 to 1000", who, spec.contention_factor));
  }
  if (!(spec.overlapped_pass_share >= 0 && spec.overlapped_pass_share <= 1)) {
    return error(fmt::format("{}: overlapped_pass_share {} must be from 0 to 1", who, spec.overlapped_pass_share));
  }
  return sched::Ok{};
}

namespace {

// "devices": an array of devices, or a count with one "device" they all share.
void read_devices(SpecReader& reader, const Json& root, ClusterSpec& spec) {
  if (reader.ok() && !root.contains("devices")) reader.fail("/devices", nullptr, "missing required field");
  if (!reader.ok()) return;
  const Json& devices = root["devices"];
  if (devices.is_array()) {
    if (root.contains("device")) reader.fail("/device", nullptr, "not allowed when 'devices' is an array");
    if (devices.empty()) reader.fail("/devices", &devices, "needs at least one device");
    for (std::size_t i = 0; i < devices.size() && reader.ok(); ++i) {
      spec.devices.push_back(read_device(reader, devices[i], pointer_index("/devices", i)));
    }
    return;
  }
  const std::int64_t count = reader.integer(root, "", "devices", 1, std::nullopt);
  if (reader.ok() && count > 65536) reader.fail("/devices", &devices, "at most 65536 devices");
  if (reader.ok() && !root.contains("device")) {
    reader.fail("/device", nullptr, "missing required field (the properties of every device)");
  }
  if (!reader.ok()) return;
  spec.devices.assign(static_cast<std::size_t>(count), read_device(reader, root["device"], "/device"));
}

// The devices' nodes and the links inside and between them; a link given where the topology
// never uses it is refused.
void read_topology(SpecReader& reader, const Json& root, ClusterSpec& spec) {
  const auto per_node = reader.integer(root, "", "devices_per_node", 1, spec.num_devices());
  if (reader.ok() && (per_node > spec.num_devices() || spec.num_devices() % per_node != 0)) {
    reader.fail("/devices_per_node", &root["devices_per_node"],
                fmt::format("must divide the number of devices ({})", spec.num_devices()));
  }
  spec.devices_per_node = static_cast<int>(per_node);
  if (reader.ok() && spec.devices_per_node > 1) {
    if (!root.contains("intra_node")) reader.fail("/intra_node", nullptr, "missing required field");
    if (reader.ok()) spec.intra_node = read_link(reader, root, "intra_node");
  }
  if (reader.ok() && spec.num_nodes() > 1) {
    if (!root.contains("inter_node")) reader.fail("/inter_node", nullptr, "missing required field");
    if (reader.ok()) spec.inter_node = read_link(reader, root, "inter_node");
  }
  if (reader.ok() && spec.num_nodes() > 1) {
    spec.inter_node_links = static_cast<int>(reader.integer(root, "", "inter_node_links", 1, 1));
    if (reader.ok() && spec.inter_node_links > spec.devices_per_node) {
      reader.fail("/inter_node_links", &root["inter_node_links"],
                  fmt::format("a node of {} devices has at most {} egress links (one per device)",
                              spec.devices_per_node, spec.devices_per_node));
    }
  }
  if (reader.ok() && root.contains("tensor_parallel_link")) {
    spec.tensor_parallel_link = read_link(reader, root, "tensor_parallel_link");
  }
  if (!reader.ok()) return;
  for (const char* key : {"intra_node", "inter_node", "inter_node_links"}) {
    const bool used = std::string_view(key) == "intra_node" ? spec.devices_per_node > 1 : spec.num_nodes() > 1;
    if (!used && root.contains(key)) {
      reader.fail(pointer_child("", key), nullptr,
                  "given but never used with this topology (remove it or fix devices_per_node)");
    }
  }
}

}  // namespace

sched::Result<ClusterSpec> parse_cluster_spec(std::string_view json_text, std::string_view source) {
  auto parsed = parse_spec_json(json_text, source);
  if (!parsed) return parsed.error();
  const Json& root = *parsed;
  SpecReader reader{std::string(source)};
  ClusterSpec spec;
  if (!reader.expect_object(root, "")) return reader.error();
  reader.allow_keys(root, "", {"name", "description", "devices", "device", "devices_per_node",
                               "intra_node", "inter_node", "inter_node_links", "comm_mode", "dispatch_overhead",
                               "dispatch_overhead_ns", "contention", "cores", "threads_per_device",
                               "core_slice", "core_slice_ns", "idle_slowdown", "idle_slowdown_after",
                               "idle_slowdown_after_ns", "overlapped_pass_share", "tensor_parallel_link"});
  spec.name = reader.string(root, "", "name", std::nullopt);
  spec.description = reader.string(root, "", "description", std::string());
  read_devices(reader, root, spec);
  if (!reader.ok()) return reader.error();
  read_topology(reader, root, spec);
  read_execution(reader, root, spec);
  if (!reader.ok()) return reader.error();
  return spec;
}

sched::Result<ClusterSpec> load_cluster_spec(const std::string& path) {
  auto text = read_spec_file(path);
  if (!text) return text.error();
  return parse_cluster_spec(*text, path);
}

std::string cluster_spec_to_json(const ClusterSpec& spec) {
  nlohmann::ordered_json root;
  root["name"] = spec.name;
  if (!spec.description.empty()) root["description"] = spec.description;
  bool identical = !spec.devices.empty();
  for (const DeviceSpec& d : spec.devices) identical = identical && d == spec.devices.front();
  if (identical) {
    root["devices"] = spec.devices.size();
    root["device"] = device_json(spec.devices.front());
  } else {
    root["devices"] = nlohmann::ordered_json::array();
    for (const DeviceSpec& d : spec.devices) root["devices"].push_back(device_json(d));
  }
  root["devices_per_node"] = spec.devices_per_node;
  if (spec.devices_per_node > 1) root["intra_node"] = link_json(spec.intra_node);
  if (spec.num_nodes() > 1) root["inter_node"] = link_json(spec.inter_node);
  if (spec.num_nodes() > 1 && spec.inter_node_links != 1) root["inter_node_links"] = spec.inter_node_links;
  if (spec.tensor_parallel_link) root["tensor_parallel_link"] = link_json(*spec.tensor_parallel_link);
  root["comm_mode"] = std::string(comm_mode_name(spec.comm_mode));
  root["dispatch_overhead"] = exact_duration_string(spec.dispatch_overhead_ns);
  if (spec.contention_factor != 1.0) root["contention"] = spec.contention_factor;
  if (spec.overlapped_pass_share != 1.0) root["overlapped_pass_share"] = spec.overlapped_pass_share;
  if (spec.cores > 0) root["cores"] = spec.cores;
  if (spec.threads_per_device != 1) root["threads_per_device"] = spec.threads_per_device;
  if (spec.core_slice_ns != 0) root["core_slice"] = exact_duration_string(spec.core_slice_ns);
  if (spec.idle_slowdown != 1.0) root["idle_slowdown"] = spec.idle_slowdown;
  if (spec.idle_slowdown_after_ns != 0) root["idle_slowdown_after"] = exact_duration_string(spec.idle_slowdown_after_ns);
  return root.dump(2) + "\n";
}

}  // namespace pipeworks::sim
