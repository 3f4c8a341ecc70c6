// Reading a measured table at any micro-batch size (see size_table.h).
#include "sim/spec/size_table.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

namespace pipeworks::sim {
namespace {

sched::Error error(std::string message) { return sched::Error{std::move(message), std::nullopt}; }

// a + b * n, overflow-checked.
sched::Result<std::int64_t> line_at(std::int64_t a, std::int64_t b, std::int64_t n) {
  std::int64_t scaled = 0;
  std::int64_t total = 0;
  if (__builtin_mul_overflow(b, n, &scaled) || __builtin_add_overflow(a, scaled, &total)) {
    return error(fmt::format("cost {} + {} x {} overflows 64 bits", a, b, n));
  }
  return total;
}

// The straight line through p and q (p.size < size < q.size), rounded to nearest.
std::int64_t between(const SizePoint& p, const SizePoint& q, int size) {
  const long double t = static_cast<long double>(size - p.size) / static_cast<long double>(q.size - p.size);
  const long double v = static_cast<long double>(p.value) + t * (static_cast<long double>(q.value) - p.value);
  return static_cast<std::int64_t>(std::llround(static_cast<double>(v)));
}

// The first measured point at `size` or above (the table's sizes increase).
std::vector<SizePoint>::const_iterator at_or_above(const std::vector<SizePoint>& measured, int size) {
  return std::lower_bound(measured.begin(), measured.end(), size, [](const SizePoint& p, int s) { return p.size < s; });
}

// The measured value at exactly `size`, if the table holds it.
std::optional<std::int64_t> measured_at(const std::vector<SizePoint>& measured, int size) {
  const auto hit = at_or_above(measured, size);
  if (hit == measured.end() || hit->size != size) return std::nullopt;
  return hit->value;
}

// The block-1 rule over a non-empty table.
sched::Result<std::int64_t> table_value(std::int64_t per_sample, const std::vector<SizePoint>& measured, int size) {
  const auto above = at_or_above(measured, size);
  if (above != measured.end() && above->size == size) return above->value;
  if (above != measured.begin() && above != measured.end()) return between(*(above - 1), *above, size);
  // Outside the table: the nearest measured value, moved along the fitted slope.
  const SizePoint& edge = above == measured.end() ? measured.back() : measured.front();
  auto value = line_at(edge.value, per_sample, static_cast<std::int64_t>(size) - edge.size);
  if (!value) return value;
  return std::max<std::int64_t>(0, *value);
}

// The block-b rule; nullopt where it does not apply (no multiple of b measured, or no measured
// size with `size`'s remainder beyond the first multiple).
std::optional<sched::Result<std::int64_t>> block_value(std::int64_t per_sample, const std::vector<SizePoint>& measured,
                                                       int size, int block) {
  std::vector<SizePoint> multiples;
  for (const SizePoint& p : measured) {
    if (p.size % block == 0) multiples.push_back(p);
  }
  if (multiples.empty()) return std::nullopt;
  auto smooth = table_value(per_sample, multiples, size);
  if (!smooth || size % block == 0) return smooth;
  long double remainder_sum = 0;
  int count = 0;
  for (const SizePoint& p : measured) {
    if (p.size % block != size % block || p.size < multiples.front().size) continue;
    auto curve = table_value(per_sample, multiples, p.size);
    if (!curve) return curve;
    remainder_sum += static_cast<long double>(p.value) - static_cast<long double>(*curve);
    ++count;
  }
  if (count == 0) return std::nullopt;
  const long double value = static_cast<long double>(*smooth) + remainder_sum / count;
  if (value >= 9.2e18L) return sched::Result<std::int64_t>{error(fmt::format("cost at size {} overflows 64 bits", size))};
  return sched::Result<std::int64_t>{std::max<std::int64_t>(0, std::llround(static_cast<double>(value)))};
}

}  // namespace

sched::Result<std::int64_t> scaled_value(std::int64_t fixed, std::int64_t per_sample,
                                         const std::vector<SizePoint>& measured, int microbatch_size, int size_block) {
  if (microbatch_size < 1) return error(fmt::format("micro-batch size must be at least 1, got {}", microbatch_size));
  if (size_block < 1 || size_block > kMaxSizeBlock) {
    return error(fmt::format("size block must be from 1 to {}, got {}", kMaxSizeBlock, size_block));
  }
  if (measured.empty()) return line_at(fixed, per_sample, microbatch_size);
  if (auto hit = measured_at(measured, microbatch_size)) return *hit;
  if (size_block > 1) {
    if (auto blocked = block_value(per_sample, measured, microbatch_size, size_block)) return *blocked;
  }
  return table_value(per_sample, measured, microbatch_size);
}

sched::Status check_size_points(const std::vector<SizePoint>& measured) {
  for (std::size_t i = 0; i < measured.size(); ++i) {
    if (measured[i].size < 1) return error(fmt::format("measured size {} must be at least 1", measured[i].size));
    if (measured[i].value < 0) return error(fmt::format("measured value at size {} is negative", measured[i].size));
    if (i > 0 && measured[i].size <= measured[i - 1].size) {
      return error(fmt::format("measured sizes must increase ({} after {})", measured[i].size, measured[i - 1].size));
    }
  }
  return sched::Ok{};
}

sched::Result<double> leave_one_out_error(const std::vector<SizePoint>& measured, std::int64_t per_sample,
                                          int size_block) {
  if (measured.size() < 3) return 0.0;
  double sum = 0;
  for (std::size_t i = 1; i + 1 < measured.size(); ++i) {
    std::vector<SizePoint> others = measured;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
    auto predicted = scaled_value(0, per_sample, others, measured[i].size, size_block);
    if (!predicted) return predicted.error();
    const double truth = static_cast<double>(std::max<std::int64_t>(1, measured[i].value));
    sum += std::abs(static_cast<double>(*predicted) - static_cast<double>(measured[i].value)) / truth;
  }
  return sum / static_cast<double>(measured.size() - 2);
}

namespace {

// Whether the table holds every remainder mod `block` at two sizes or more beyond its first
// multiple of `block` (remainder costs are means; one size alone is noise).
bool remainders_measured_twice(const std::vector<SizePoint>& measured, int block) {
  const auto first = std::find_if(measured.begin(), measured.end(), [&](const SizePoint& p) { return p.size % block == 0; });
  if (first == measured.end()) return false;
  std::vector<int> count(static_cast<std::size_t>(block), 0);
  for (auto p = first; p != measured.end(); ++p) ++count[static_cast<std::size_t>(p->size % block)];
  return std::all_of(count.begin() + 1, count.end(), [](int n) { return n >= 2; });
}

}  // namespace

int pick_size_block(const std::vector<SizePoint>& measured, std::int64_t per_sample, const std::vector<int>& candidates) {
  const auto plain = leave_one_out_error(measured, per_sample, 1);
  if (!plain) return 1;
  int best = 1;
  double best_error = *plain / 2;
  for (int block : candidates) {
    if (block < 2 || block > kMaxSizeBlock || !remainders_measured_twice(measured, block)) continue;
    const auto error = leave_one_out_error(measured, per_sample, block);
    if (error && *error < best_error) {
      best = block;
      best_error = *error;
    }
  }
  return best;
}

int combined_size_block(int a, int b) {
  if (a >= b && b > 0 && a % b == 0) return a;
  if (b > a && a > 0 && b % a == 0) return b;
  return 1;
}

}  // namespace pipeworks::sim
