// Sweeps: which configurations are skipped and counted, exact figures for uniform costs,
// determinism across thread counts, the memory cap, rankings and the Pareto frontier.
#include <catch2/catch.hpp>

#include "sim/engine/closed_form_bubble.h"
#include "sim/plan/pareto.h"
#include "sim/plan/partition_text.h"
#include "sim/plan/sweep.h"
#include "sim/plan/sweep_table.h"
#include "sim/spec/model_presets.h"

namespace {

using namespace pipeworks;
using sim::SweepRow;
constexpr sim::Bytes kMiB = 1024 * 1024;
constexpr sim::Nanoseconds kMs = 1'000'000;

// `devices` identical devices on one node with free, instant links, no dispatch overhead.
sim::ClusterSpec ideal_cluster(int devices, sim::Bytes memory_bytes = 0) {
  sim::ClusterSpec cluster;
  cluster.name = "ideal";
  cluster.devices.assign(static_cast<std::size_t>(devices), sim::DeviceSpec{memory_bytes, 1.0, 0});
  cluster.devices_per_node = devices;
  cluster.intra_node = {1e12, 0};
  cluster.inter_node = {1e12, 0};
  return cluster;
}

// 8 layers; per sample forward 1 ms, backward 2 ms, nothing sent, 1 MiB stash, no parameters.
sim::SweepSpec uniform_spec(int devices) {
  sim::SweepSpec spec;
  spec.model = sim::uniform_model(8, kMs, 2 * kMs, 0, kMiB, 0);
  spec.cluster = ideal_cluster(devices);
  spec.batch_sizes = {8};
  spec.stage_counts = {1, 2, 4};
  spec.microbatch_counts = {1, 2, 4, 8};
  spec.schedules = {sched::ScheduleKind::kGPipe, sched::ScheduleKind::kOneFOneB};
  spec.recompute_modes = {false, true};
  return spec;
}

const SweepRow& find_row(const std::vector<SweepRow>& rows, const sim::SweepConfig& config) {
  for (const auto& row : rows) {
    if (row.config == config) return row;
  }
  FAIL("configuration not swept");
  return rows.front();
}

}  // namespace

TEST_CASE("impossible configurations are skipped and counted by their first reason") {
  sim::SweepSpec spec = uniform_spec(8);
  spec.model = sim::uniform_model(6, kMs, 2 * kMs, 0, kMiB, 0);
  spec.batch_sizes = {12};
  spec.stage_counts = {1, 2, 4, 7, 8, 16};
  spec.microbatch_counts = {1, 2, 3, 4, 5};
  sim::SkipCounts skipped;
  const auto configs = sim::sweep_configs(spec, skipped);
  // 4 schedule x recompute pairs per (K, M). K = 16 > 8 devices: 5 M values; K = 7, 8 > 6
  // layers: 2 x 5; M = 5 does not divide 12: with K = 1, 2, 4.
  CHECK(skipped.more_stages_than_devices == 1 * 5 * 4);
  CHECK(skipped.more_stages_than_layers == 2 * 5 * 4);
  CHECK(skipped.microbatches_not_dividing_batch == 3 * 1 * 4);
  CHECK(configs.size() == 3 * 4 * 4);
  CHECK(configs.size() + skipped.total() == 6 * 5 * 4);
  CHECK(configs.front() == sim::SweepConfig{12, 1, 1, sched::ScheduleKind::kGPipe, false});
  CHECK(configs.back() == sim::SweepConfig{12, 4, 4, sched::ScheduleKind::kOneFOneB, true});

  const auto result = sim::run_sweep(spec, {2, {}});
  REQUIRE(result);
  CHECK(result->skipped == skipped);
  CHECK(result->rows.size() == configs.size());
}

TEST_CASE("uniform costs give the closed-form GPipe and 1F1B figures") {
  const auto result = sim::run_sweep(uniform_spec(4));
  REQUIRE(result);
  // K = 4, M = 4, batch 8: micro-batch 2 samples, 2 layers per stage: F = 4 ms, B = 8 ms.
  for (const auto kind : {sched::ScheduleKind::kGPipe, sched::ScheduleKind::kOneFOneB}) {
    const SweepRow& row = find_row(result->rows, {8, 4, 4, kind, false});
    REQUIRE(row.simulated);
    CHECK(row.partition.boundaries == std::vector<int>{0, 2, 4, 6, 8});
    CHECK(row.makespan_ns == (4 + 4 - 1) * 12 * kMs);  // (M + K - 1)(F + B)
    CHECK(row.bubble_fraction == Approx(3.0 / 7.0));   // (K - 1)/(M + K - 1)
    CHECK(row.samples_per_s == Approx(8 / 0.084));
    CHECK(row.stage_compute_ns == 12 * kMs);
    CHECK(row.fits);  // no capacity given
    CHECK(row.capacity_bytes == 0);
  }
  // Activations: 2 layers x 1 MiB x 2 samples = 4 MiB per micro-batch; GPipe holds all M = 4,
  // 1F1B stage 0 holds min(K, M) = 4 as well; with M = 8 (1 sample each, 2 MiB) GPipe holds 8.
  CHECK(find_row(result->rows, {8, 4, 4, sched::ScheduleKind::kGPipe, false}).peak_bytes == 16 * kMiB);
  CHECK(find_row(result->rows, {8, 4, 8, sched::ScheduleKind::kGPipe, false}).peak_bytes == 16 * kMiB);
  CHECK(find_row(result->rows, {8, 4, 8, sched::ScheduleKind::kOneFOneB, false}).peak_bytes == 8 * kMiB);
  // Re-materialization adds R = F to the compute of each micro-batch.
  CHECK(find_row(result->rows, {8, 4, 4, sched::ScheduleKind::kGPipe, true}).stage_compute_ns == 16 * kMs);
  // One stage: no bubble, the whole batch's compute.
  const SweepRow& single = find_row(result->rows, {8, 1, 2, sched::ScheduleKind::kGPipe, false});
  CHECK(single.makespan_ns == 2 * 8 * 4 * 3 * kMs);
  CHECK(single.bubble_fraction == 0);
}

TEST_CASE("sweep rows are identical for 1, 2 and 4 threads") {
  sim::SweepSpec spec = uniform_spec(4);
  sim::PresetOptions six_cells;
  six_cells.layers = 6;
  spec.model = sim::model_preset("amoeba", six_cells).value();
  spec.cluster.devices[1].relative_speed = 1.5;
  spec.stage_counts = {1, 2, 3, 4};
  spec.microbatch_counts = {1, 2, 4, 8};
  spec.memory_cap_bytes = 2LL * 1024 * kMiB;
  const auto one = sim::run_sweep(spec, {1, {}});
  REQUIRE(one);
  for (const int threads : {2, 4}) {
    std::vector<std::size_t> progress;
    const auto many = sim::run_sweep(spec, {threads, [&](std::size_t done, std::size_t total) {
                                              CHECK(total == one->rows.size());
                                              progress.push_back(done);
                                            }});
    REQUIRE(many);
    CHECK(many->rows == one->rows);
    CHECK(sim::sweep_csv(many->rows) == sim::sweep_csv(one->rows));
    REQUIRE(progress.size() == one->rows.size());
    for (std::size_t i = 0; i < progress.size(); ++i) CHECK(progress[i] == i + 1);
  }
}

TEST_CASE("the memory cap decides fits, and its overflow is reported") {
  sim::SweepSpec spec = uniform_spec(4);
  spec.stage_counts = {4};
  spec.microbatch_counts = {8};
  spec.memory_cap_bytes = 10 * kMiB;
  const auto result = sim::run_sweep(spec);
  REQUIRE(result);
  // GPipe holds 8 micro-batches x 2 MiB = 16 MiB on every stage: 6 MiB over, and no partition
  // can help (every stage holds the same); 1F1B's stage 0 holds 4 x 2 MiB = 8 MiB.
  const SweepRow& gpipe = find_row(result->rows, {8, 4, 8, sched::ScheduleKind::kGPipe, false});
  CHECK_FALSE(gpipe.fits);
  CHECK(gpipe.capacity_bytes == 10 * kMiB);
  CHECK(gpipe.overflow_bytes == 6 * kMiB);
  CHECK(gpipe.note == "device 0 needs 16.00 MiB, 6.00 MiB over its 10.00 MiB cap");
  CHECK_THAT(gpipe.partition_note, Catch::Contains("no partition into 4 stages fits in memory"));
  const SweepRow& one_f_one_b = find_row(result->rows, {8, 4, 8, sched::ScheduleKind::kOneFOneB, false});
  CHECK(one_f_one_b.fits);
  CHECK(one_f_one_b.peak_bytes == 8 * kMiB);
  CHECK(one_f_one_b.overflow_bytes == 0);
  for (const SweepRow& row : result->rows) {
    REQUIRE(row.simulated);
    CHECK(row.fits == (row.peak_bytes <= 10 * kMiB));
  }
  // A device smaller than the cap wins.
  spec.cluster = ideal_cluster(4, 9 * kMiB);
  const auto smaller = sim::run_sweep(spec);
  REQUIRE(smaller);
  CHECK(find_row(smaller->rows, {8, 4, 8, sched::ScheduleKind::kOneFOneB, false}).capacity_bytes == 9 * kMiB);
}

TEST_CASE("a sweep spec with an empty list is an error") {
  sim::SweepSpec spec = uniform_spec(4);
  spec.stage_counts.clear();
  const auto result = sim::run_sweep(spec);
  REQUIRE_FALSE(result);
  CHECK(result.error().message == "sweep: no stage counts given");
  spec = uniform_spec(4);
  spec.memory_cap_bytes = 0;
  CHECK_FALSE(sim::run_sweep(spec));
}

namespace {
SweepRow constructed(double samples_per_s, sim::Bytes peak_bytes, bool fits = true, bool simulated = true) {
  SweepRow row;
  row.samples_per_s = samples_per_s;
  row.peak_bytes = peak_bytes;
  row.fits = fits;
  row.simulated = simulated;
  return row;
}
}  // namespace

TEST_CASE("the Pareto frontier keeps exactly the non-dominated rows") {
  //   samples/s  peak   on the frontier?
  //   0: 10      100    yes (least memory)
  //   1: 30      300    yes
  //   2: 20      300    no  (1 is faster with the same memory)
  //   3: 25      400    no  (1 is faster with less)
  //   4: 50      500    yes
  //   5: 50      600    no  (4: as fast, less memory)
  //   6: 99      50     not simulated: ignored
  //   7: 10      100    no  (duplicate of 0)
  //   8: 60      900    yes
  const std::vector<SweepRow> rows = {constructed(10, 100), constructed(30, 300),   constructed(20, 300),
                                      constructed(25, 400), constructed(50, 500),   constructed(50, 600),
                                      constructed(99, 50, true, false), constructed(10, 100), constructed(60, 900)};
  CHECK(sim::pareto_rows(rows) == std::vector<std::size_t>{0, 1, 4, 8});
  CHECK(sim::pareto_frontier({}).empty());
  CHECK(sim::pareto_frontier({{std::nan(""), 1}, {1, 2}}) == std::vector<std::size_t>{1});
}

TEST_CASE("rows rank fitting first, then by throughput, then by memory") {
  const std::vector<SweepRow> rows = {constructed(10, 100), constructed(90, 100, false), constructed(30, 300),
                                      constructed(30, 200), constructed(99, 1, true, false)};
  CHECK(sim::rank_rows(rows) == std::vector<std::size_t>{3, 2, 0, 1});
  CHECK(sim::best_fitting_row(rows) == 3u);
  CHECK_FALSE(sim::best_fitting_row({constructed(90, 100, false)}).has_value());
}

TEST_CASE("virtual-stage kinds: v stages on each of the depth's devices, bubble at the closed form") {
  sim::SweepSpec spec = uniform_spec(4);
  spec.stage_counts = {2, 4};
  spec.microbatch_counts = {4};
  spec.schedules = {sched::ScheduleKind::kOneFOneB, sched::ScheduleKind::kInterleaved1F1B, sched::ScheduleKind::kZbV};
  spec.virtual_stage_counts = {2, 4};
  spec.recompute_modes = {false};
  sim::SkipCounts skipped;
  const auto configs = sim::sweep_configs(spec, skipped);
  // Depth 4 with v = 4 is 16 stages on an 8-layer model: skipped; the rest are
  // 1f1b, interleaved v=2, interleaved v=4, zb-v at depth 2 and all but one of them at depth 4.
  CHECK(skipped.more_stages_than_layers == 1);
  CHECK(configs.size() == 4 + 3);
  const auto result = sim::run_sweep(spec);
  REQUIRE(result);
  // Depth 2, v = 2: K = 4 stages of 2 layers on 2 devices, F = 4 ms, B = 8 ms per micro-batch.
  const SweepRow& interleaved = find_row(result->rows, {8, 4, 4, sched::ScheduleKind::kInterleaved1F1B, false, 2});
  INFO(interleaved.note);
  REQUIRE(interleaved.simulated);
  CHECK(interleaved.config.num_devices() == 2);
  CHECK(interleaved.partition.boundaries == std::vector<int>{0, 2, 4, 6, 8});
  CHECK(interleaved.bubble_fraction == Approx(sim::closed_form_bubble(sched::ScheduleKind::kInterleaved1F1B, 4, 4, 2)->fraction()));
  CHECK(interleaved.bubble_fraction < find_row(result->rows, {8, 2, 4, sched::ScheduleKind::kOneFOneB, false}).bubble_fraction);
  const SweepRow& v = find_row(result->rows, {8, 4, 4, sched::ScheduleKind::kZbV, false, 2});
  REQUIRE(v.simulated);
  CHECK(v.config.num_devices() == 2);
  CHECK(sim::schedule_text(interleaved.config) == "interleaved-1f1b v=2");
  CHECK(sim::schedule_text(v.config) == "zb-v");
  spec.virtual_stage_counts = {1};
  CHECK_FALSE(sim::run_sweep(spec));
}

TEST_CASE("partitions print as layers per stage") {
  const sim::Partition p{{0, 3, 5, 7, 9, 12}};
  CHECK(sim::layer_counts_text(p, false) == "3,2,2,2,3");
  CHECK(sim::layer_counts_text(p, true) == "3,2*3,3");
  CHECK(sim::parse_partition(sim::layer_counts_text(p, true), 12, 5).value() == p);  // printed text reads back
}

TEST_CASE("sweep CSV has a header, one line per row, and quotes notes") {
  sim::SweepSpec spec = uniform_spec(4);
  spec.stage_counts = {4};
  spec.microbatch_counts = {8};
  spec.memory_cap_bytes = 10 * kMiB;
  const auto result = sim::run_sweep(spec);
  REQUIRE(result);
  const std::string csv = sim::sweep_csv(result->rows);
  CHECK(std::count(csv.begin(), csv.end(), '\n') >= 5);
  CHECK(csv.rfind("batch,stages,virtual_stages,microbatches,microbatch_size,schedule,recompute,partition,makespan_ns,", 0) == 0);
  CHECK_THAT(csv, Catch::Contains("8,4,1,8,1,1f1b,off,\"2,2,2,2\","));
  CHECK_THAT(csv, Catch::Contains(",no,6291456,"));  // GPipe's overflow in bytes
  const std::string json = sim::sweep_json(*result);
  CHECK_THAT(json, Catch::Contains("\"microbatches_not_dividing_batch\": 0"));
}

TEST_CASE("absurd sweeps are refused up front, absurd configurations get a note") {
  sim::SweepSpec spec = uniform_spec(4);
  spec.stage_counts.assign(1000, 1);
  spec.microbatch_counts.assign(10000, 1);
  const auto refused = sim::run_sweep(spec);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message == "sweep: 40000000 combinations is more than the 10000000 a sweep may enumerate");

  spec = uniform_spec(4);
  spec.batch_sizes = {1 << 21};
  const SweepRow row = sim::evaluate_config(spec, {1 << 21, 4, 1 << 21, sched::ScheduleKind::kGPipe, false});
  CHECK_FALSE(row.simulated);
  CHECK(row.note == "too large to simulate: 4 stages x 2097152 micro-batches is more than the limit of 4194304 cells");
}
