// The profiler's output is a spec the simulator accepts, and a prediction of a run lines up with
// the measured run action by action. Timing accuracy is checked by bench/accuracy, not here.
#include "hw/hw_test_support.h"

#include <catch2/catch.hpp>

#include <cmath>

#include "hw/exec/malloc_tuning.h"
#include "hw/predict/cost_fit.h"
#include "hw/predict/prediction.h"
#include "hw/predict/profiler.h"
#include "hw/predict/stage_memory.h"
#include "hw/run/layer_partition.h"
#include "hw/run/measured_run.h"
#include "sim/engine/simulator.h"
#include "sim/plan/cost_model_builder.h"
#include "sim/plan/partition_text.h"
#include "viz/comparison.h"

namespace pipeworks::hw {
namespace {

ProfileOptions quick_profile(const ModelConfig& model) {
  ProfileOptions o;
  o.model = model;
  o.microbatch_sizes = {1, 2};
  o.warmup = 1;
  o.repetitions = 2;
  o.threads = 1;
  o.workers = 2;
  return o;
}

// A run's lowered schedule, uniform partition and profile (at `sizes`, no machine figures).
struct Prepared {
  sched::Schedule schedule;
  sim::Partition partition;
  Profile profile;
};

Prepared prepare(const RunConfig& config, std::vector<int> sizes = {1, 2}) {
  auto schedule = build_schedule(config);
  REQUIRE(schedule.ok());
  auto partition = sim::parse_partition("uniform", num_model_layers(config.model), config.num_stages);
  REQUIRE(partition.ok());
  ProfileOptions po = quick_profile(config.model);
  po.microbatch_sizes = std::move(sizes);
  po.measure_machine = false;
  auto profile = profile_model(po);
  REQUIRE(profile.ok());
  return {*schedule, *partition, *profile};
}

TEST_CASE("fit_linear: least squares with clamped parts") {
  auto exact = fit_linear({{1, 10}, {2, 14}, {4, 22}});
  REQUIRE(exact.ok());
  CHECK(exact->fixed == Approx(6));
  CHECK(exact->per_sample == Approx(4));
  CHECK_FALSE(exact->clamped_fixed);
  CHECK(to_scaled_duration(*exact) == sim::ScaledDuration{6, 4});

  // Least squares gives 4x - 3; the intercept is clamped and the slope refit through 0: 63/21.
  auto negative_fixed = fit_linear({{1, 1}, {2, 5}, {4, 13}});
  REQUIRE(negative_fixed.ok());
  CHECK(negative_fixed->clamped_fixed);
  CHECK(negative_fixed->fixed == 0);
  CHECK(negative_fixed->per_sample == Approx(3));

  auto negative_slope = fit_linear({{1, 10}, {2, 8}});
  REQUIRE(negative_slope.ok());
  CHECK(negative_slope->clamped_per_sample);
  CHECK(negative_slope->fixed == Approx(9));
  CHECK(negative_slope->per_sample == 0);

  auto single = fit_linear({{4, 20}});
  REQUIRE(single.ok());
  CHECK(single->per_sample == Approx(5));
  CHECK(single->fixed == 0);

  CHECK_FALSE(fit_linear({}).ok());
  CHECK_FALSE(fit_linear({{0, 1}}).ok());

  const Timing t = summarize_timings({5, 1, 3, 2});
  CHECK(t.median_ns == 2);  // (2 + 3) / 2 in integer ns
  CHECK(t.min_ns == 1);
  CHECK(t.max_ns == 5);
  CHECK(t.mean_ns == 3);  // 11 / 4 = 2.75, rounded
  CHECK(summarize_timings({1, 2, 1000}).mean_ns == 334);  // a rare slow sample moves the mean, not the median
  CHECK(summarize_timings({1, 2, 1000}).median_ns == 2);
}

TEST_CASE("executor memory attribution moves a re-materialized stage's kept bytes to its output") {
  sim::CostModel costs = sim::uniform_cost_model(3, 1, 2);
  for (std::size_t s = 0; s < 3; ++s) {
    costs.stages[s].input_bytes = 7;
    costs.stages[s].output_bytes = 10 * static_cast<sched::Bytes>(s + 1);
  }
  sim::CostModel unchanged = costs;
  apply_executor_memory(unchanged, false);
  CHECK(unchanged.stages[1].input_bytes == 7);
  apply_executor_memory(costs, true);
  CHECK(costs.stages[0].input_bytes == 10);
  CHECK(costs.stages[1].input_bytes == 20);
  CHECK(costs.stages[2].input_bytes == 0);
}

TEST_CASE("the profiler writes a model spec and a cluster spec the simulator accepts unchanged") {
  auto profile = profile_model(quick_profile(testing::tiny_mlp()));
  REQUIRE(profile.ok());
  CHECK(profile->spec.num_layers() == num_model_layers(testing::tiny_mlp()));
  for (const LayerProfile& l : profile->layers) {
    REQUIRE(l.samples.size() == 2);
    CHECK(l.samples[0].forward.median_ns > 0);
    CHECK(l.samples[1].backward.median_ns > 0);
    CHECK(l.samples[1].stash_bytes > 0);
  }
  auto parsed = sim::parse_model_spec(sim::model_spec_to_json(profile->spec), "profiled.json");
  REQUIRE(parsed.ok());
  CHECK(*parsed == profile->spec);
  auto cluster = sim::parse_cluster_spec(sim::cluster_spec_to_json(profile->cluster), "cluster.json");
  REQUIRE(cluster.ok());
  CHECK(cluster->num_devices() == 2);
  CHECK(cluster->devices[0].relative_speed <= 1.0);
  CHECK(cluster->comm_mode == sim::CommMode::kEager);
  // The idle slowdown measured on the CPU: at least 1, and in the cluster spec once above it.
  CHECK(profile->machine.idle_slowdown >= 1.0);
  CHECK(profile->machine.idle_hot.median_ns > 0);
  CHECK(profile->machine.idle_after.median_ns > 0);
  CHECK(cluster->idle_slowdown == profile->machine.idle_slowdown);
  CHECK(cluster->idle_slowdown_after_ns == (profile->machine.idle_slowdown > 1.0 ? 5'000'000 : 0));

  auto partition = sim::uniform_partition(parsed->num_layers(), 2);
  REQUIRE(partition.ok());
  auto costs = sim::build_cost_model(*parsed, *cluster, *partition, {0, 1}, 2, sim::OptimizerKind::kSgd);
  REQUIRE(costs.ok());
  const sched::Schedule schedule = testing::lowered(sched::ScheduleKind::kGPipe, 2, 4, false);
  auto result = sim::simulate(schedule, *costs);
  REQUIRE(result.ok());
  CHECK(result->makespan_ns > 0);
  CHECK(result->timeline.spans.size() == schedule.num_actions());
}

TEST_CASE("a profile carries tables, forwards without the graph and every layer range's temporaries") {
  const ModelConfig model = testing::tiny_mlp();
  ProfileOptions options = quick_profile(model);
  options.measure_machine = false;
  auto profile = profile_model(options);
  REQUIRE(profile.ok());
  const sim::ModelSpec& spec = profile->spec;
  for (std::size_t l = 0; l < spec.layers.size(); ++l) {
    const sim::LayerSpec& layer = spec.layers[l];
    const std::vector<LayerSample>& samples = profile->layers[l].samples;
    REQUIRE(layer.forward.measured.size() == 2);
    CHECK(layer.forward.at(1).value() == samples[0].forward.median_ns);
    CHECK(layer.forward.at(2).value() == samples[1].forward.median_ns);
    CHECK(layer.backward().at(2).value() == samples[1].backward.median_ns);
    // The split backward, timed apart: I and W as measured, B still the whole backward's.
    CHECK(layer.backward_split);
    REQUIRE(layer.whole_backward.has_value());
    CHECK(layer.backward_input.at(2).value() == samples[1].backward_input.median_ns);
    CHECK(layer.backward_weight.at(2).value() == samples[1].backward_weight.median_ns);
    if (l == 0) CHECK(samples[1].backward_input.median_ns == 0);  // the model's input needs no gradient
    if (profile->layers[l].param_bytes == 0) CHECK(samples[1].backward_weight.median_ns == 0);
    if (profile->layers[l].param_bytes > 0) CHECK(samples[1].backward_weight.median_ns > 0);
    REQUIRE(layer.forward_no_grad.has_value());
    CHECK(layer.forward_no_grad->at(1).value() == samples[0].forward_no_grad.median_ns);
    CHECK(layer.stash_bytes.at(2).value() == samples[1].stash_bytes);
    // What I leaves for W: at least the gradient into the layer's last operation with parameters.
    if (profile->layers[l].param_bytes > 0) {
      REQUIRE(layer.split_held_bytes.has_value());
      CHECK(layer.split_held_bytes->at(2).value() == samples[1].split_held_bytes);
      CHECK(samples[1].split_held_bytes > 0);
    }
  }
  const int layers = spec.num_layers();
  REQUIRE(spec.stage_temporaries.size() == static_cast<std::size_t>(layers * (layers + 1) / 2));
  // Bytes are exact under the counting allocator: the spec's range figures are the stage's own.
  auto partition = sim::parse_partition("uniform", layers, 2);
  REQUIRE(partition.ok());
  auto extra = measure_stage_extra_bytes(model, *partition, 2, 2);
  REQUIRE(extra.ok());
  for (int s = 0; s < 2; ++s) {
    const sim::StageTemporaries* t = spec.temporaries_of(partition->begin(s), partition->end(s));
    REQUIRE(t != nullptr);
    const StageExtraBytes& e = (*extra)[static_cast<std::size_t>(s)];
    CHECK(t->first_backward.at(2).value() == e.first);
    CHECK(t->later_backward.at(2).value() == e.later);
    CHECK(t->forward.at(2).value() == e.forward);
    CHECK(t->forward_no_grad.at(2).value() == e.forward_no_grad);
  }
}

TEST_CASE("a predicted run and its measurement hold the same actions") {
  RunConfig config;
  config.model = testing::tiny_mlp();
  config.num_stages = 2;
  config.num_microbatches = 4;
  config.batch_size = 8;
  config.schedule = sched::ScheduleKind::kOneFOneB;
  config.recompute = true;
  config.steps = 2;
  config.threads_per_worker = 1;
  const Prepared p = prepare(config);
  auto prediction = predict_run(config, p.schedule, p.partition, p.profile.spec, p.profile.cluster, &p.profile);
  REQUIRE(prediction.ok());
  REQUIRE(prediction->peak_activation_bytes.size() == 2);
  CHECK(prediction->peak_activation_bytes[0] > 0);

  auto run = measure_run(config, p.schedule, p.partition, 1);
  REQUIRE(run.ok());
  REQUIRE(run->warmup.size() == 1);
  REQUIRE(run->steps.size() == 2);
  const MeasuredStep& median = run->steps[static_cast<std::size_t>(median_step(run->steps))];
  auto comparison = viz::compare_timelines(prediction->result.timeline, median.timeline);
  REQUIRE(comparison.ok());
  CHECK(comparison->same_actions());
  CHECK(comparison->actions.size() == p.schedule.num_actions());

  // A spec with fewer layers than the partition cuts is refused, not simulated.
  sim::ModelSpec short_spec = p.profile.spec;
  short_spec.layers.pop_back();
  CHECK_FALSE(predict_run(config, p.schedule, p.partition, short_spec, p.profile.cluster, nullptr).ok());
}


TEST_CASE("contention slows a device only where it overlaps another: GPipe with one micro-batch never does") {
  RunConfig config;
  config.model = testing::tiny_mlp();
  config.num_stages = 2;
  config.num_microbatches = 1;
  config.batch_size = 4;
  config.schedule = sched::ScheduleKind::kGPipe;
  config.threads_per_worker = 1;
  const Prepared p = prepare(config);
  auto alone = predict_run(config, p.schedule, p.partition, p.profile.spec, p.profile.cluster, &p.profile);
  REQUIRE(alone.ok());
  // The same profile with a measured contention of 2x in its cluster.
  Profile contended = p.profile;
  contended.cluster.contention_factor = 2.0;
  auto prediction = predict_run(config, p.schedule, p.partition, contended.spec, contended.cluster, &contended);
  REQUIRE(prediction.ok());
  CHECK(prediction->device_slowdown == std::vector<double>{1.0, 1.0});
  CHECK(prediction->result.makespan_ns == alone->result.makespan_ns);
  // With 4 micro-batches under GPipe both devices overlap: the slow-down lies in (1, 2].
  config.num_microbatches = 4;
  config.batch_size = 8;
  auto schedule4 = build_schedule(config);
  REQUIRE(schedule4.ok());
  auto overlapped = predict_run(config, *schedule4, p.partition, contended.spec, contended.cluster, &contended);
  REQUIRE(overlapped.ok());
  for (double s : overlapped->device_slowdown) {
    CHECK(s > 1.0);
    CHECK(s <= 2.0);
  }
}

TEST_CASE("stage temporaries: measured per stage (forward, first and later backward), used for that partition only") {
  const ModelConfig model = testing::tiny_mlp();
  auto partition = sim::parse_partition("uniform", num_model_layers(model), 2);
  REQUIRE(partition.ok());
  auto extra = measure_stage_extra_bytes(model, *partition, 2, 2);
  REQUIRE(extra.ok());
  REQUIRE(extra->size() == 2);
  for (const StageExtraBytes& b : *extra) {
    CHECK(b.later >= 0);
    CHECK(b.first > 0);  // the first backward makes the stage's parameter gradients
    CHECK(b.forward >= 0);
    CHECK(b.forward_no_grad >= 0);
  }
  CHECK_FALSE(measure_stage_extra_bytes(model, sim::uniform_partition(6, 2).value(), 2, 2).ok());
  CHECK_FALSE(measure_stage_extra_bytes(model, *partition, 0, 2).ok());

  RunConfig config;
  config.model = model;
  config.num_stages = 2;
  config.num_microbatches = 2;
  config.batch_size = 4;
  auto schedule = build_schedule(config);
  REQUIRE(schedule.ok());
  ProfileOptions po = quick_profile(model);
  po.measure_machine = false;
  auto profile = profile_model(po);
  REQUIRE(profile.ok());
  const auto predict_with = [&](std::vector<int> boundaries, std::vector<StageExtraBytes> bytes) {
    Profile p = *profile;
    p.stage_boundaries = std::move(boundaries);
    p.stage_extra_bytes = std::move(bytes);
    return predict_run(config, *schedule, *partition, p.spec, p.cluster, &p).value().peak_activation_bytes;
  };
  // Huge temporaries decide each device's peak: exactly the stash at that backward's start above
  // the zero case's level there, so the difference of two such predictions is the difference.
  const std::vector<sched::Bytes> big = predict_with(partition->boundaries, {{1 << 20, 0}, {3 << 20, 0}});
  const std::vector<sched::Bytes> bigger = predict_with(partition->boundaries, {{2 << 20, 0}, {5 << 20, 0}});
  CHECK(bigger[0] - big[0] == 1 << 20);
  CHECK(bigger[1] - big[1] == 2 << 20);
  // Another partition's figures are ignored: the per-layer composition applies.
  const std::vector<sched::Bytes> composed = predict_with({}, {});
  CHECK(predict_with({0, 1, 4}, {{1 << 20, 0}, {3 << 20, 0}}) == composed);
}

namespace {

// The small mlp and transformer the peak tests use: big enough for every byte count to matter.
std::vector<ModelConfig> small_models() {
  ModelConfig mlp = testing::tiny_mlp();
  mlp.width = 64;
  ModelConfig transformer = testing::tiny_transformer();
  transformer.seq_len = 16;
  transformer.model_width = 32;
  return {mlp, transformer};
}

struct Peaks {
  std::vector<sched::Bytes> predicted, measured;
  sched::Bytes boundary_bytes = 0;  // one micro-batch's tensor at the first stage boundary
};

// Per device, the predicted and the measured peak activation bytes of one step of `config` (the
// stage temporaries measured for its partition, as run --predict measures them).
Peaks predicted_and_measured_peaks(const RunConfig& config) {
  const int size = config.batch_size / config.num_microbatches;
  Prepared p = prepare(config, {size});
  const auto last_of_stage_0 = static_cast<std::size_t>(p.partition.boundaries.at(1) - 1);
  auto boundary = p.profile.spec.layers.at(last_of_stage_0).output_bytes.at(size);
  REQUIRE(boundary.ok());
  auto extra = measure_stage_extra_bytes(config.model, p.partition, size, 1);
  REQUIRE(extra.ok());
  p.profile.stage_boundaries = p.partition.boundaries;
  p.profile.stage_extra_bytes = *extra;
  auto prediction = predict_run(config, p.schedule, p.partition, p.profile.spec, p.profile.cluster, &p.profile);
  REQUIRE(prediction.ok());
  auto run = measure_run(config, p.schedule, p.partition, 1);
  REQUIRE(run.ok());
  return {prediction->peak_activation_bytes, run->steps.front().peak_activation_bytes, *boundary};
}

RunConfig one_step(const ModelConfig& model, sched::ScheduleKind kind, int k, int m, bool recompute) {
  RunConfig config;
  config.model = model;
  config.num_stages = k;
  config.num_microbatches = m;
  config.batch_size = 16;
  config.schedule = kind;
  config.recompute = recompute;
  config.steps = 1;
  config.threads_per_worker = 1;
  return config;
}

}  // namespace

TEST_CASE("predicted peaks equal the executor's measured peaks, small mlp and transformer (bytes are exact)") {
  // Every schedule, with and without re-materialization, M = 1 (the first backward's gradients,
  // or the transformer's forward temporaries, decide the peak) and M = 4. The counting allocator
  // makes bytes exact. Times play a part under re-materialization only: the peak then falls in
  // the backward, where device 1 also holds each input gradient it sent until device 0's B has
  // used it; a late device 0 (a loaded machine) leaves up to one per micro-batch there, which a
  // prediction timed from the profile cannot know (a fresh clone's parallel test run once
  // measured two more than predicted: 16,388 bytes, transformer GPipe M = 4).
  for (const ModelConfig& model : small_models()) {
    for (const auto kind : {sched::ScheduleKind::kGPipe, sched::ScheduleKind::kOneFOneB}) {
      for (const bool recompute : {false, true}) {
        for (const int m : {1, 4}) {
          const auto [predicted, measured, boundary_bytes] =
              predicted_and_measured_peaks(one_step(model, kind, 2, m, recompute));
          const double waiting_gradients = recompute ? static_cast<double>(m * boundary_bytes) : 0.0;
          INFO(model_kind_name(model.kind) << " schedule " << sched::schedule_kind_name(kind) << " recompute "
                                            << recompute << " M " << m);
          REQUIRE(measured.size() == 2);
          for (std::size_t d = 0; d < 2; ++d) {
            INFO("device " << d << ": predicted " << predicted[d] << ", measured " << measured[d]);
            // 5%; 7% for the transformer, whose re-materializing forward is predicted up to 6.2% high
            // (GPipe, M = 4): R's temporaries are taken from a forward measured on the stage alone.
            const double tolerance = model.kind == ModelKind::kTransformer ? 0.07 : 0.05;
            CHECK(std::abs(static_cast<double>(predicted[d] - measured[d])) <=
                  tolerance * static_cast<double>(measured[d]) + waiting_gradients);
          }
        }
      }
    }
  }
}

TEST_CASE("predicted peaks of the split-backward schedules: from 25% low to 45% high of the executor's measured peaks") {
  // As above for ZB-H1, ZB-H2 (K = 2) and ZB-V (K = 4 on 2 devices). The walk adds what I keeps
  // for W (the spec's split_held_bytes), probes I and W each with a whole backward's temporaries,
  // a bound on either half, and holds a stage's output and input gradients as long as the
  // schedule's order allows, whatever the timing: the prediction errs high, most at M = 1 where a
  // tensor or two of these tiny models decide the peak (the mlp's ZB-V on device 1: 57,856 B
  // predicted against 45,568 B measured alone, +27%, and 41,472 B under a fresh clone's parallel
  // test run, +39.5%).
  const std::pair<sched::ScheduleKind, int> kinds[] = {
      {sched::ScheduleKind::kZbH1, 2}, {sched::ScheduleKind::kZbH2, 2}, {sched::ScheduleKind::kZbV, 4}};
  for (const ModelConfig& model : small_models()) {
    for (const auto& [kind, k] : kinds) {
      for (const int m : {1, 4}) {
        const Peaks peaks = predicted_and_measured_peaks(one_step(model, kind, k, m, false));
        const std::vector<sched::Bytes>& predicted = peaks.predicted;
        const std::vector<sched::Bytes>& measured = peaks.measured;
        REQUIRE(measured.size() == 2);
        for (std::size_t d = 0; d < 2; ++d) {
          INFO(model_kind_name(model.kind) << " " << sched::schedule_kind_name(kind) << " M " << m << " device " << d
                                           << ": predicted " << predicted[d] << ", measured " << measured[d]);
          // What a device holds at its peak depends on when its neighbour's tensors arrive; the
          // walk takes the latest the order allows, a run on a loaded machine holds less or more.
          CHECK(static_cast<double>(predicted[d]) <= 1.45 * static_cast<double>(measured[d]));
          CHECK(static_cast<double>(predicted[d]) >= 0.75 * static_cast<double>(measured[d]));
        }
      }
    }
  }
}

}  // namespace
}  // namespace pipeworks::hw
