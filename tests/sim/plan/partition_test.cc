// Partitions: explicit validation, uniform remainders, and the balanced DP against brute force
// over every partition on many random small problems (with and without memory caps).
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <random>

#include "sim/plan/partition.h"
#include "sim/plan/partition_memo.h"
#include "sim/spec/model_presets.h"

namespace pipeworks::sim {
namespace {

TEST_CASE("explicit boundaries are validated") {
  CHECK(explicit_partition({0, 3, 5, 8}, 8)->num_stages() == 3);
  CHECK(to_string(*explicit_partition({0, 3, 5, 8}, 8)) == "[0,3) [3,5) [5,8)");
  CHECK(explicit_partition({0, 3, 3, 8}, 8).error().message ==
        "boundary 2 (=3) is not greater than boundary 1 (=3): stage 1 would be empty");
  CHECK(explicit_partition({1, 8}, 8).error().message == "boundary 0 must be 0, got 1");
  CHECK(explicit_partition({0, 7}, 8).error().message == "the last boundary must be the number of layers (8), got 7");
  CHECK_THAT(explicit_partition({0}, 8).error().message, Catch::Contains("at least 2 boundaries"));
  CHECK_THAT(explicit_partition({0, 5, 4, 8}, 8).error().message, Catch::Contains("stage 1 would be empty"));
  CHECK_FALSE(explicit_partition({0, 0}, 0).ok());
}

TEST_CASE("uniform spreads the remainder over the first stages") {
  CHECK(uniform_partition(10, 3).value().boundaries == std::vector<int>{0, 4, 7, 10});
  CHECK(uniform_partition(8, 4).value().boundaries == std::vector<int>{0, 2, 4, 6, 8});
  CHECK(uniform_partition(5, 5).value().boundaries == std::vector<int>{0, 1, 2, 3, 4, 5});
  CHECK(uniform_partition(1, 1).value().boundaries == std::vector<int>{0, 1});
  CHECK_THAT(uniform_partition(3, 4).error().message, Catch::Contains("cannot split 3 layers into 4"));
  CHECK_FALSE(uniform_partition(3, 0).ok());
}

// Calls f(partition) for every split of num_layers layers into num_stages non-empty stages.
template <class F>
void for_each_partition(int num_layers, int num_stages, F f) {
  std::vector<int> b(static_cast<std::size_t>(num_stages) + 1, 0);
  b[static_cast<std::size_t>(num_stages)] = num_layers;
  auto rec = [&](auto& self, int s) -> void {
    if (s == num_stages) {
      f(Partition{b});
      return;
    }
    for (int cut = b[static_cast<std::size_t>(s) - 1] + 1; cut <= num_layers - (num_stages - s); ++cut) {
      b[static_cast<std::size_t>(s)] = cut;
      self(self, s + 1);
    }
  };
  if (num_stages == 1) {
    f(Partition{b});
  } else {
    rec(rec, 1);
  }
}

// A random problem of L layers over K stages: memory terms and caps on odd trials (re-computing on
// every fourth), stage speeds on every third.
PartitionProblem random_problem(std::mt19937& rng, int trial, int L, int K) {
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  PartitionProblem p;
  const bool with_memory = trial % 2 == 1;
  for (int l = 0; l < L; ++l) {
    p.layer_time_ns.push_back(uniform(0, 100));
    if (with_memory) {
      p.static_bytes.push_back(uniform(0, 50));
      p.stash_bytes.push_back(uniform(0, 30));
      p.input_bytes.push_back(uniform(0, 30));
    }
  }
  if (trial % 3 == 0) {
    for (int s = 0; s < K; ++s) p.stage_speed.push_back(std::array<double, 4>{0.5, 1, 1.5, 2}[uniform(0, 3)]);
  }
  if (with_memory) {
    p.recompute = trial % 4 == 3;
    for (int s = 0; s < K; ++s) {
      p.capacity_bytes.push_back(uniform(0, 4) == 0 ? 0 : uniform(40, 250));
      p.in_flight.push_back(uniform(0, 4));
    }
  }
  return p;
}

// Over every partition: the least bottleneck of those within the caps (infinity where none is),
// and the least worst overflow of a stage over its cap.
struct BruteForce {
  double best = std::numeric_limits<double>::infinity();
  double least_overflow = std::numeric_limits<double>::infinity();
};
BruteForce brute_force(const PartitionProblem& p, int L, int K) {
  BruteForce out;
  for_each_partition(L, K, [&](const Partition& part) {
    const auto memory = stage_memory_bytes(p, part);
    double worst_overflow = -std::numeric_limits<double>::infinity();
    for (int s = 0; s < K; ++s) {
      const Bytes cap = p.capacity_bytes.empty() ? 0 : p.capacity_bytes[static_cast<std::size_t>(s)];
      if (cap > 0) worst_overflow = std::max(worst_overflow, static_cast<double>(memory[static_cast<std::size_t>(s)] - cap));
    }
    out.least_overflow = std::min(out.least_overflow, worst_overflow);
    if (worst_overflow <= 0) out.best = std::min(out.best, bottleneck_time(p, part));
  });
  return out;
}

TEST_CASE("balanced equals brute force on random small problems") {
  std::mt19937 rng(20240611);
  int infeasible = 0;
  int capped = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const int L = std::uniform_int_distribution<int>(1, 9)(rng);
    const int K = std::uniform_int_distribution<int>(1, L)(rng);
    const PartitionProblem p = random_problem(rng, trial, L, K);
    if (!p.capacity_bytes.empty()) ++capped;
    INFO("trial " << trial << " L=" << L << " K=" << K);
    const BruteForce truth = brute_force(p, L, K);
    auto result = balanced_partition(p, K);
    if (truth.best == std::numeric_limits<double>::infinity()) {
      ++infeasible;
      REQUIRE_FALSE(result.ok());
      CHECK_THAT(result.error().message,
                 Catch::Contains("over by " + format_bytes(static_cast<Bytes>(truth.least_overflow)) + ")"));
    } else {
      REQUIRE(result.ok());
      REQUIRE(result->num_stages() == K);
      CHECK(explicit_partition(result->boundaries, L).ok());
      CHECK(bottleneck_time(p, *result) == truth.best);
      for (int s = 0; s < K && !p.capacity_bytes.empty(); ++s) {
        const Bytes cap = p.capacity_bytes[static_cast<std::size_t>(s)];
        if (cap > 0) CHECK(stage_memory_bytes(p, *result)[static_cast<std::size_t>(s)] <= cap);
      }
    }
  }
  CHECK(infeasible > 20);  // the generator exercises both outcomes
  CHECK(capped - infeasible > 20);
}

// The plain capped DP, without pruning, memo or the uncapped-first shortcut: every cell scans
// every first layer from j - 1 down and keeps the first strict improvement, as balanced_partition
// promises for its ties. The oracle for the cut-for-cut test below.
std::vector<int> plain_capped_dp(const PartitionProblem& p, int K) {
  const int L = static_cast<int>(p.layer_time_ns.size());
  const double inf = std::numeric_limits<double>::infinity();
  const auto at = [](const auto& v, int k) { return v[static_cast<std::size_t>(k)]; };
  const auto fits = [&](int s, int i, int j) {  // partition.h's memory without recompute
    Bytes fixed = 0, stash = 0;
    for (int l = i; l < j; ++l) fixed += at(p.static_bytes, l), stash += at(p.stash_bytes, l);
    return at(p.capacity_bytes, s) <= 0 || fixed + at(p.in_flight, s) * stash <= at(p.capacity_bytes, s);
  };
  const auto time = [&](int s, int i, int j) {
    Nanoseconds sum = 0;
    for (int l = i; l < j; ++l) sum += at(p.layer_time_ns, l);
    return static_cast<double>(sum) / (p.stage_speed.empty() ? 1.0 : at(p.stage_speed, s));
  };
  std::vector<std::vector<double>> best(static_cast<std::size_t>(K), std::vector<double>(static_cast<std::size_t>(L) + 1, inf));
  std::vector<std::vector<int>> choice(static_cast<std::size_t>(K), std::vector<int>(static_cast<std::size_t>(L) + 1, -1));
  for (int j = 1; j <= L; ++j) best[0][static_cast<std::size_t>(j)] = fits(0, 0, j) ? time(0, 0, j) : inf;
  for (int s = 1; s < K; ++s) {
    for (int j = s + 1; j <= L; ++j) {
      for (int i = j - 1; i >= s; --i) {
        const double prev = best[static_cast<std::size_t>(s) - 1][static_cast<std::size_t>(i)];
        if (prev == inf || !fits(s, i, j)) continue;
        const double v = std::max(prev, time(s, i, j));
        if (v < best[static_cast<std::size_t>(s)][static_cast<std::size_t>(j)]) {
          best[static_cast<std::size_t>(s)][static_cast<std::size_t>(j)] = v;
          choice[static_cast<std::size_t>(s)][static_cast<std::size_t>(j)] = i;
        }
      }
    }
  }
  std::vector<int> boundaries(static_cast<std::size_t>(K) + 1, 0);
  boundaries[static_cast<std::size_t>(K)] = L;
  for (int s = K - 1, j = L; s > 0; --s) boundaries[static_cast<std::size_t>(s)] = j = choice[static_cast<std::size_t>(s)][static_cast<std::size_t>(j)];
  return boundaries;
}

TEST_CASE("balanced partition is the plain capped DP cut for cut, with or without a shared memo") {
  std::mt19937 rng(20261203);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  PartitionMemo memo;
  int compared = 0;
  int uncapped_fit = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int L = uniform(1, 12);
    const int K = uniform(1, L);
    PartitionProblem p;
    // Few distinct times, so ties are common and the memo is shared by problems that differ only
    // in memory.
    for (int l = 0; l < L; ++l) p.layer_time_ns.push_back(uniform(0, 3));
    for (int l = 0; l < L; ++l) p.static_bytes.push_back(uniform(0, 20));
    for (int l = 0; l < L; ++l) p.stash_bytes.push_back(uniform(0, 10));
    if (trial % 3 == 0) {
      for (int s = 0; s < K; ++s) p.stage_speed.push_back(uniform(1, 2));
    }
    for (int s = 0; s < K; ++s) p.capacity_bytes.push_back(uniform(0, 3) == 0 ? 0 : uniform(20, 120));
    for (int s = 0; s < K; ++s) p.in_flight.push_back(uniform(0, 3));
    INFO("trial " << trial << " L=" << L << " K=" << K);
    auto alone = balanced_partition(p, K);
    auto shared = balanced_partition(p, K, &memo);
    REQUIRE(alone.ok() == shared.ok());
    if (!alone.ok()) continue;
    ++compared;
    CHECK(alone->boundaries == shared->boundaries);
    CHECK(alone->boundaries == plain_capped_dp(p, K));
    PartitionProblem uncapped = p;
    uncapped.capacity_bytes.clear();
    uncapped_fit += balanced_partition(uncapped, K)->boundaries == alone->boundaries;
  }
  CHECK(compared > 150);
  CHECK(compared - uncapped_fit > 20);  // the caps decide some of them
}

TEST_CASE("balanced partition of a known case") {
  PartitionProblem p;
  p.layer_time_ns = {1, 1, 1, 1, 4, 4};
  CHECK(balanced_partition(p, 3)->boundaries == std::vector<int>{0, 4, 5, 6});
  CHECK(bottleneck_time(p, *balanced_partition(p, 2)) == 8);
  p.stage_speed = {1, 4};  // a fast second device takes the heavy layers and more
  CHECK(bottleneck_time(p, *balanced_partition(p, 2)) == 2.5);
}

TEST_CASE("memory caps move layers and report the overflow") {
  PartitionProblem p;
  p.layer_time_ns = {10, 10, 10, 10};
  p.static_bytes = {100, 100, 100, 100};
  p.capacity_bytes = {100, 300};
  CHECK(balanced_partition(p, 2)->boundaries == std::vector<int>{0, 1, 4});
  p.capacity_bytes = {100, 250};
  CHECK(balanced_partition(p, 2).error().message ==
        "no partition into 2 stages fits in memory; the least overflowing one ([0,1) [1,4)) has "
        "stage 1 (layers [1,4)) needing 300 B of 250 B (over by 50 B)");
}

TEST_CASE("balanced input errors") {
  PartitionProblem p;
  CHECK_THAT(balanced_partition(p, 1).error().message, Catch::Contains("no layers"));
  p.layer_time_ns = {1, 2};
  CHECK_THAT(balanced_partition(p, 3).error().message, Catch::Contains("cannot split 2 layers into 3"));
  p.stage_speed = {1};
  CHECK_THAT(balanced_partition(p, 2).error().message, Catch::Contains("stage_speed has 1 entries, expected 2"));
  p.stage_speed = {1, 0};
  CHECK_THAT(balanced_partition(p, 2).error().message, Catch::Contains("speed must be positive"));
}

TEST_CASE("balanced partitions a model spec with training state and in-flight stashes") {
  PresetOptions options;
  options.layers = 4;
  options.param_bytes = 1000;
  options.stash_bytes = 10;
  const ModelSpec spec = *model_preset("uniform", options);  // fp32
  BalanceOptions balance;
  balance.optimizer = OptimizerKind::kAdam;  // 4x params in all
  balance.in_flight = {4, 3};
  auto problem = partition_problem(spec, balance);
  REQUIRE(problem.ok());
  CHECK(problem->static_bytes[0] == 4000);
  CHECK(stage_memory_bytes(*problem, *uniform_partition(4, 2)) == std::vector<Bytes>{8080, 8060});
  balance.capacity_bytes = {4040, 20000};
  CHECK(balanced_partition(spec, 2, balance)->boundaries == std::vector<int>{0, 1, 4});
}

}  // namespace
}  // namespace pipeworks::sim
