// Builds the terminal grid: slot choice (gcd, shortest action, merged), per-cell winner, folding.
#include "viz/terminal_grid.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "viz/time_units.h"

namespace pipeworks::viz {

namespace {

using sched::Nanoseconds;
using sched::Span;

constexpr int kMaxRows = 1024;
constexpr std::int64_t kMaxBlocks = 4;
constexpr std::int64_t kMaxSlots = 1 << 20;

struct Cell {
  int span = -1;               // index into the compute spans, -1 idle
  Nanoseconds covered_ns = 0;  // how much of the slot it covers
  Nanoseconds busy_ns = 0;     // how much of the slot all actions cover
};

std::string rjust(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

void trim_right(std::string& s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
}

// Slot indices right-aligned in their cells, skipping any that would touch the previous one.
std::string header_line(std::int64_t first, std::int64_t count, std::size_t prefix, std::size_t cell) {
  std::string line = rjust("", prefix);
  line.replace(0, 2, "t:");
  line.append(static_cast<std::size_t>(count) * cell, ' ');
  std::size_t written_end = 0;
  for (std::int64_t i = 0; i < count; ++i) {
    const std::string text = std::to_string(first + i);
    const std::size_t end = prefix + static_cast<std::size_t>(i + 1) * cell;
    const std::size_t start = end - std::min(text.size(), end);
    if (start <= written_end || start < prefix) continue;
    line.replace(start, text.size(), text);
    written_end = end;
  }
  trim_right(line);
  return line;
}

}  // namespace

std::string terminal_grid(const sched::Timeline& timeline, int max_width) {
  std::vector<const Span*> spans;
  int rows = std::clamp(timeline.num_devices, 0, kMaxRows);
  for (const Span& s : timeline.spans) {
    if (s.lane != sched::Lane::kCompute || !sched::is_compute(s.action.kind) || s.end_ns <= s.start_ns) continue;
    if (s.device < 0 || s.device >= kMaxRows) continue;
    spans.push_back(&s);
    rows = std::max(rows, s.device + 1);
  }
  if (spans.empty()) return "(no compute spans)\n";
  Nanoseconds origin = spans[0]->start_ns, last = spans[0]->end_ns;
  for (const Span* s : spans) {
    origin = std::min(origin, s->start_ns);
    last = std::max(last, s->end_ns);
  }
  const Nanoseconds range = last - origin;

  // Slot: gcd of boundaries; too fine -> the shortest action; still too many -> merged slots.
  Nanoseconds slot = 0, shortest = range;
  for (const Span* s : spans) {
    slot = std::gcd(slot, std::gcd(s->start_ns - origin, s->end_ns - origin));
    shortest = std::min(shortest, s->end_ns - s->start_ns);
  }
  std::size_t label_w = 1;
  for (const Span* s : spans) {
    label_w = std::max(label_w, sched::kind_name(s->action.kind).size() + std::to_string(s->action.microbatch).size());
  }
  const std::size_t prefix = std::max<std::size_t>(2, fmt::format("d{}:", rows - 1).size());
  const std::size_t cell = label_w + 1;
  const std::int64_t per_line =
      std::max<std::int64_t>(1, (static_cast<std::int64_t>(max_width) - static_cast<std::int64_t>(prefix)) /
                                    static_cast<std::int64_t>(cell));
  const Nanoseconds exact_slot = slot;
  if (range / slot > std::min(kMaxSlots, per_line * kMaxBlocks)) slot = std::max(slot, shortest);
  std::int64_t slots = (range + slot - 1) / slot;
  std::int64_t factor = 1;
  if (slots > per_line * kMaxBlocks) {
    factor = (slots + per_line * kMaxBlocks - 1) / (per_line * kMaxBlocks);
    slot *= factor;
    slots = (range + slot - 1) / slot;
  }

  // Each cell shows the action covering most of its slot (ties: the earlier action), unless
  // idle time covers more of the slot than that action.
  std::vector<std::vector<Cell>> grid(static_cast<std::size_t>(rows), std::vector<Cell>(static_cast<std::size_t>(slots)));
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const Span& s = *spans[i];
    const Nanoseconds a = s.start_ns - origin, b = s.end_ns - origin;
    for (std::int64_t k = a / slot; k < slots && k * slot < b; ++k) {
      const Nanoseconds covered = std::min(b, (k + 1) * slot) - std::max(a, k * slot);
      Cell& c = grid[static_cast<std::size_t>(s.device)][static_cast<std::size_t>(k)];
      const bool better = c.span < 0 || covered > c.covered_ns ||
                          (covered == c.covered_ns && s.start_ns < spans[static_cast<std::size_t>(c.span)]->start_ns);
      c.busy_ns += covered;
      if (covered > 0 && better) c = Cell{static_cast<int>(i), covered, c.busy_ns};
    }
  }

  auto shown = [slot](const Cell& c) { return c.covered_ns >= slot - std::min(slot, c.busy_ns) ? c.span : -1; };
  std::string out;
  bool continued = false;
  const std::int64_t blocks = (slots + per_line - 1) / per_line;
  for (std::int64_t block = 0; block < blocks; ++block) {
    const std::int64_t first = block * per_line, count = std::min(per_line, slots - first);
    if (block > 0) out += '\n';
    out += header_line(first, count, prefix, cell) + '\n';
    for (int d = 0; d < rows; ++d) {
      std::string line = fmt::format("{:<{}}", fmt::format("d{}:", d), prefix);
      for (std::int64_t k = first; k < first + count; ++k) {
        const auto& row = grid[static_cast<std::size_t>(d)];
        const int span = shown(row[static_cast<std::size_t>(k)]);
        std::string text = ".";
        if (span >= 0 && k > first && shown(row[static_cast<std::size_t>(k - 1)]) == span) {
          text = std::string(label_w, '-');
          continued = true;
        } else if (span >= 0) {
          const sched::Action& act = spans[static_cast<std::size_t>(span)]->action;
          text = fmt::format("{}{}", sched::kind_name(act.kind), act.microbatch);
        }
        line += ' ' + rjust(text, label_w);
      }
      out += line + '\n';
    }
  }
  const sched::TimelineStats stats = sched::compute_stats(timeline);
  out += fmt::format("1 slot = {}; . = idle{}; makespan {}, bubble {:.1f}%\n", format_duration(slot),
                     continued ? "; -- = action continues" : "", format_duration(stats.makespan_ns),
                     100 * stats.bubble_fraction);
  if (factor > 1) out += fmt::format("compressed {}x to fit {} blocks\n", factor, kMaxBlocks);
  if (slot != exact_slot) out += "each cell shows the action covering most of its slot\n";
  if (blocks > 1) {
    out += fmt::format("folded into {} blocks of up to {} slots to fit {} columns\n", blocks, per_line, max_width);
  }
  return out;
}

}  // namespace pipeworks::viz
