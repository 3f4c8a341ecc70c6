// Partitioning layers into stages. The balanced partitioner is an exact min-max dynamic
// program over prefix sums: best[s][j] = min_i max(best[s-1][i], cost(s, i, j)).
//
//   layers  0 ........ i ........ j            best[s][j]: stages 0..s cover layers [0, j)
//           |<- stages 0..s-1 ->|<- stage s ->|
#include "sim/plan/partition.h"
#include "sim/plan/partition_memo.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace pipeworks::sim {
namespace {

__extension__ typedef __int128 I128;

constexpr double kInf = std::numeric_limits<double>::infinity();

sched::Error error(std::string message) { return sched::Error{std::move(message), std::nullopt}; }

// Prefix sums and per-stage parameters resolved once per call.
struct Prepared {
  int num_layers = 0;
  int num_stages = 0;
  std::vector<I128> time, fixed, stash;  // prefix sums, size L + 1
  std::vector<Bytes> input;              // size L
  bool recompute = false;
  std::vector<double> speed;             // size K
  std::vector<Bytes> capacity;           // size K (0 = no cap)
  std::vector<I128> in_flight;           // size K

  double time_of(int s, int i, int j) const {
    return static_cast<double>(time[static_cast<std::size_t>(j)] - time[static_cast<std::size_t>(i)]) /
           speed[static_cast<std::size_t>(s)];
  }
  I128 memory_of(int s, int i, int j) const {
    const auto si = static_cast<std::size_t>(i);
    const auto sj = static_cast<std::size_t>(j);
    const I128 flight = in_flight[static_cast<std::size_t>(s)];
    const I128 stashed = stash[sj] - stash[si];
    const I128 activations = recompute ? flight * input[si] + stashed : flight * stashed;
    return fixed[sj] - fixed[si] + activations;
  }
  // A lower bound on memory_of(s, i, j) that only grows as i decreases: memory without the
  // recompute term's in-flight inputs (input[i] is not monotone in i); exact without recompute.
  I128 memory_floor_of(int s, int i, int j) const {
    if (!recompute) return memory_of(s, i, j);
    const auto si = static_cast<std::size_t>(i);
    const auto sj = static_cast<std::size_t>(j);
    return fixed[sj] - fixed[si] + stash[sj] - stash[si];
  }
  // True when no stage starting at i or before (ending at j) fits stage s's capacity.
  bool overflows_from(int s, int i, int j) const {
    const Bytes cap = capacity[static_cast<std::size_t>(s)];
    return cap > 0 && memory_floor_of(s, i, j) > cap;
  }
  // memory - capacity; -inf when the stage has no cap.
  double overflow_of(int s, int i, int j) const {
    const Bytes cap = capacity[static_cast<std::size_t>(s)];
    if (cap <= 0) return -kInf;
    return static_cast<double>(memory_of(s, i, j) - cap);
  }
};

template <class T>
sched::Status check_size(const std::vector<T>& v, std::size_t want, std::string_view name) {
  if (!v.empty() && v.size() != want) {
    return error(fmt::format("{} has {} entries, expected {} (or none)", name, v.size(), want));
  }
  return sched::Ok{};
}

sched::Result<Prepared> prepare(const PartitionProblem& p, int num_stages) {
  const auto L = p.layer_time_ns.size();
  if (L == 0) return error("cannot partition a model with no layers");
  if (L > 1'000'000) return error("too many layers (at most 1000000)");
  if (num_stages < 1 || static_cast<std::size_t>(num_stages) > L) {
    return error(fmt::format("cannot split {} layers into {} non-empty stages", L, num_stages));
  }
  const auto K = static_cast<std::size_t>(num_stages);
  for (const auto& status : {check_size(p.static_bytes, L, "static_bytes"), check_size(p.stash_bytes, L, "stash_bytes"),
                             check_size(p.input_bytes, L, "input_bytes"), check_size(p.stage_speed, K, "stage_speed"),
                             check_size(p.capacity_bytes, K, "capacity_bytes"), check_size(p.in_flight, K, "in_flight")}) {
    if (!status) return status.error();
  }
  if (p.recompute && p.input_bytes.empty() && !p.capacity_bytes.empty()) {
    return error("recompute needs input_bytes (the input of every layer)");
  }
  Prepared out;
  out.num_layers = static_cast<int>(L);
  out.num_stages = num_stages;
  out.recompute = p.recompute;
  out.time.assign(L + 1, 0);
  out.fixed.assign(L + 1, 0);
  out.stash.assign(L + 1, 0);
  out.input.assign(L, 0);
  auto at = [](const std::vector<Bytes>& v, std::size_t l) { return v.empty() ? Bytes{0} : v[l]; };
  for (std::size_t l = 0; l < L; ++l) {
    if (p.layer_time_ns[l] < 0 || at(p.static_bytes, l) < 0 || at(p.stash_bytes, l) < 0 || at(p.input_bytes, l) < 0) {
      return error(fmt::format("layer {} has a negative time or size", l));
    }
    out.time[l + 1] = out.time[l] + p.layer_time_ns[l];
    out.fixed[l + 1] = out.fixed[l] + at(p.static_bytes, l);
    out.stash[l + 1] = out.stash[l] + at(p.stash_bytes, l);
    out.input[l] = at(p.input_bytes, l);
  }
  out.speed.assign(K, 1.0);
  out.capacity.assign(K, 0);
  out.in_flight.assign(K, 1);
  for (std::size_t s = 0; s < K; ++s) {
    if (!p.stage_speed.empty()) out.speed[s] = p.stage_speed[s];
    if (!(std::isfinite(out.speed[s]) && out.speed[s] > 0)) {
      return error(fmt::format("stage {} speed must be positive", s));
    }
    // Else an infinite time would read as "nothing fits in memory" below.
    if (!std::isfinite(static_cast<double>(out.time[L]) / out.speed[s])) {
      return error(fmt::format("stage {} speed {} is too small: the layers' time divided by it overflows", s,
                               out.speed[s]));
    }
    if (!p.capacity_bytes.empty()) out.capacity[s] = p.capacity_bytes[s];
    if (!p.in_flight.empty()) {
      if (p.in_flight[s] < 0) return error(fmt::format("stage {} in-flight count is negative", s));
      out.in_flight[s] = p.in_flight[s];
    }
  }
  return out;
}

struct DpResult {
  double value = kInf;
  std::vector<int> boundaries;
};

// Min over partitions of max over stages of cost(s, i, j), restricted to feasible(s, i, j).
// The scan over i (the stage's first layer) goes from j - 1 down and stops at the first i where
// stop(s, i, j, value) holds: `stop` must be true only when no smaller i can be feasible and
// improve on `value` (a bound that only grows as i decreases), so stopping never changes the
// result. With it the work is the feasible, competitive window of each cell, not all of [s, j).
template <class Cost, class Feasible, class Stop>
DpResult minmax(const Prepared& p, Cost cost, Feasible feasible, Stop stop) {
  const int L = p.num_layers;
  const int K = p.num_stages;
  const auto width = static_cast<std::size_t>(L + 1);
  std::vector<double> best(static_cast<std::size_t>(K) * width, kInf);
  std::vector<int> choice(static_cast<std::size_t>(K) * width, -1);
  auto cell = [&](int s, int j) { return static_cast<std::size_t>(s) * width + static_cast<std::size_t>(j); };
  for (int j = 1; j <= L - (K - 1); ++j) {
    if (feasible(0, 0, j)) best[cell(0, j)] = cost(0, 0, j);
    choice[cell(0, j)] = 0;
  }
  for (int s = 1; s < K; ++s) {
    for (int j = s + 1; j <= L - (K - 1 - s); ++j) {
      double value = kInf;
      int arg = -1;
      for (int i = j - 1; i >= s; --i) {
        if (stop(s, i, j, value)) break;
        const double prev = best[cell(s - 1, i)];
        if (prev == kInf || !feasible(s, i, j)) continue;
        const double v = std::max(prev, cost(s, i, j));
        if (v < value) {
          value = v;
          arg = i;
        }
      }
      best[cell(s, j)] = value;
      choice[cell(s, j)] = arg;
    }
  }
  DpResult result;
  result.value = best[cell(K - 1, L)];
  if (result.value == kInf) return result;
  result.boundaries.assign(static_cast<std::size_t>(K) + 1, 0);
  result.boundaries[static_cast<std::size_t>(K)] = L;
  for (int s = K - 1, j = L; s > 0; --s) {
    j = choice[cell(s, j)];
    result.boundaries[static_cast<std::size_t>(s)] = j;
  }
  return result;
}

// The min-max partition without memory caps.
Partition fastest_partition(const Prepared& p, const PartitionProblem& problem, PartitionMemo* memo) {
  if (memo) {
    if (auto known = memo->find(problem, p.num_stages)) return *std::move(known);
  }
  const auto time = [&](int s, int i, int j) { return p.time_of(s, i, j); };
  const auto stop = [&](int s, int i, int j, double value) { return p.time_of(s, i, j) >= value; };
  Partition partition{minmax(p, time, [](int, int, int) { return true; }, stop).boundaries};
  if (memo) memo->remember(problem, p.num_stages, partition);
  return partition;
}

bool fits_every_stage(const Prepared& p, const Partition& partition) {
  for (int s = 0; s < partition.num_stages(); ++s) {
    if (p.overflow_of(s, partition.begin(s), partition.end(s)) > 0) return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> stage_range_texts(const Partition& partition) {
  std::vector<std::string> out;
  for (int s = 0; s < partition.num_stages(); ++s) out.push_back(fmt::format("[{},{})", partition.begin(s), partition.end(s)));
  return out;
}

std::string to_string(const Partition& partition) { return fmt::format("{}", fmt::join(stage_range_texts(partition), " ")); }

sched::Result<Partition> explicit_partition(std::vector<int> boundaries, int num_layers) {
  if (num_layers < 1) return error(fmt::format("the model has {} layers; need at least 1", num_layers));
  if (boundaries.size() < 2) {
    return error(fmt::format("need at least 2 boundaries (0 and {}) for one stage, got {}", num_layers,
                             boundaries.size()));
  }
  if (boundaries.front() != 0) return error(fmt::format("boundary 0 must be 0, got {}", boundaries.front()));
  if (boundaries.back() != num_layers) {
    return error(fmt::format("the last boundary must be the number of layers ({}), got {}", num_layers,
                             boundaries.back()));
  }
  for (std::size_t i = 1; i < boundaries.size(); ++i) {
    if (boundaries[i] <= boundaries[i - 1]) {
      return error(fmt::format("boundary {} (={}) is not greater than boundary {} (={}): stage {} would be empty",
                               i, boundaries[i], i - 1, boundaries[i - 1], i - 1));
    }
  }
  return Partition{std::move(boundaries)};
}

sched::Result<Partition> uniform_partition(int num_layers, int num_stages) {
  if (num_stages < 1 || num_layers < num_stages) {
    return error(fmt::format("cannot split {} layers into {} non-empty stages", num_layers, num_stages));
  }
  Partition partition;
  partition.boundaries.push_back(0);
  for (int s = 0; s < num_stages; ++s) {
    const int size = num_layers / num_stages + (s < num_layers % num_stages ? 1 : 0);
    partition.boundaries.push_back(partition.boundaries.back() + size);
  }
  return partition;
}

sched::Result<Partition> balanced_partition(const PartitionProblem& problem, int num_stages, PartitionMemo* memo) {
  auto prepared = prepare(problem, num_stages);
  if (!prepared) return prepared.error();
  const Prepared& p = *prepared;
  Partition fastest = fastest_partition(p, problem, memo);
  if (fits_every_stage(p, fastest)) return fastest;
  const auto time = [&](int s, int i, int j) { return p.time_of(s, i, j); };
  const auto fits = [&](int s, int i, int j) { return p.overflow_of(s, i, j) <= 0; };
  const auto time_stop = [&](int s, int i, int j, double value) {
    return p.time_of(s, i, j) >= value || p.overflows_from(s, i, j);
  };
  DpResult best = minmax(p, time, fits, time_stop);
  if (best.value != kInf) return Partition{std::move(best.boundaries)};

  // Nothing fits: find the partition whose worst overflow is smallest and report it.
  const auto overflow = [&](int s, int i, int j) { return p.overflow_of(s, i, j); };
  const auto overflow_stop = [&](int s, int i, int j, double value) {
    const Bytes cap = p.capacity[static_cast<std::size_t>(s)];
    return cap > 0 && static_cast<double>(p.memory_floor_of(s, i, j) - cap) >= value;
  };
  const DpResult least = minmax(p, overflow, [](int, int, int) { return true; }, overflow_stop);
  const Partition partition{least.boundaries};
  int worst = 0;
  for (int s = 1; s < num_stages; ++s) {
    if (p.overflow_of(s, partition.begin(s), partition.end(s)) >
        p.overflow_of(worst, partition.begin(worst), partition.end(worst))) {
      worst = s;
    }
  }
  const I128 need = p.memory_of(worst, partition.begin(worst), partition.end(worst));
  const Bytes cap = p.capacity[static_cast<std::size_t>(worst)];
  return error(fmt::format(
      "no partition into {} stages fits in memory; the least overflowing one ({}) has stage {} "
      "(layers [{},{})) needing {} of {} (over by {})",
      num_stages, to_string(partition), worst, partition.begin(worst), partition.end(worst),
      format_bytes(static_cast<Bytes>(std::min<I128>(need, std::numeric_limits<Bytes>::max()))),
      format_bytes(cap),
      format_bytes(static_cast<Bytes>(std::min<I128>(need - cap, std::numeric_limits<Bytes>::max())))));
}

double bottleneck_time(const PartitionProblem& problem, const Partition& partition) {
  auto p = prepare(problem, partition.num_stages());
  if (!p) return kInf;
  double worst = 0;
  for (int s = 0; s < partition.num_stages(); ++s) worst = std::max(worst, p->time_of(s, partition.begin(s), partition.end(s)));
  return worst;
}

std::vector<Bytes> stage_memory_bytes(const PartitionProblem& problem, const Partition& partition) {
  std::vector<Bytes> out;
  auto p = prepare(problem, partition.num_stages());
  if (!p) return out;
  for (int s = 0; s < partition.num_stages(); ++s) {
    const I128 m = p->memory_of(s, partition.begin(s), partition.end(s));
    out.push_back(static_cast<Bytes>(std::min<I128>(m, std::numeric_limits<Bytes>::max())));
  }
  return out;
}

sched::Result<PartitionProblem> partition_problem(const ModelSpec& spec, const BalanceOptions& options) {
  auto valid = check_model_spec(spec);
  if (!valid) return valid.error();
  return partition_problem_of_checked(spec, options);
}

sched::Result<PartitionProblem> partition_problem_of_checked(const ModelSpec& spec, const BalanceOptions& options) {
  PartitionProblem problem;
  problem.recompute = options.recompute;
  problem.stage_speed = options.stage_speed;
  problem.capacity_bytes = options.capacity_bytes;
  problem.in_flight = options.in_flight;
  auto input = spec.input_bytes.at(options.microbatch_size);
  if (!input) return input.error();
  Bytes previous_output = *input;
  for (const LayerSpec& layer : spec.layers) {
    auto forward = layer.forward.at(options.microbatch_size);
    if (!forward) return forward.error();
    auto backward = layer.backward().at(options.microbatch_size);
    if (!backward) return backward.error();
    auto stash = layer.stash_bytes.at(options.microbatch_size);
    if (!stash) return stash.error();
    auto output = layer.output_bytes.at(options.microbatch_size);
    if (!output) return output.error();
    Nanoseconds total = 0;
    if (__builtin_add_overflow(*forward, *backward, &total)) return error(fmt::format("layer '{}': time overflows", layer.name));
    problem.layer_time_ns.push_back(total);
    ShardedState state = sharded_state(layer.param_bytes, spec.param_dtype, options.optimizer, options.zero, options.dp);
    state.param_bytes = layer.param_bytes;  // whole while computing, also under ZeRO-3
    problem.static_bytes.push_back(state.total_bytes());
    problem.stash_bytes.push_back(*stash);
    problem.input_bytes.push_back(previous_output);
    previous_output = *output;
  }
  return problem;
}

sched::Result<Partition> balanced_partition(const ModelSpec& spec, int num_stages, const BalanceOptions& options,
                                            PartitionMemo* memo) {
  auto problem = partition_problem(spec, options);
  if (!problem) return problem.error();
  return balanced_partition(*problem, num_stages, memo);
}

}  // namespace pipeworks::sim
