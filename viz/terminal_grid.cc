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

// The compute spans the grid draws (devices below kMaxRows, non-empty), its rows and time range.
struct GridSpans {
  std::vector<const Span*> spans;
  int rows = 0;
  Nanoseconds origin = 0;
  Nanoseconds range = 0;
  bool stages_shown = false;  // some device runs more than one stage: cells name the stage too
};

// "F3", or "2F3" when devices hold several stages (as `pipeworks schedule` draws them).
std::string cell_label(const sched::Action& a, bool with_stage) {
  return with_stage ? fmt::format("{}{}{}", a.stage, sched::kind_name(a.kind), a.microbatch)
                    : fmt::format("{}{}", sched::kind_name(a.kind), a.microbatch);
}

// Whether some device's spans belong to more than one stage.
bool devices_share_stages(const std::vector<const Span*>& spans, int rows) {
  std::vector<int> stage_of(static_cast<std::size_t>(rows), -1);
  for (const Span* s : spans) {
    int& seen = stage_of[static_cast<std::size_t>(s->device)];
    if (seen >= 0 && seen != s->action.stage) return true;
    seen = s->action.stage;
  }
  return false;
}

GridSpans grid_spans(const sched::Timeline& timeline) {
  GridSpans g;
  g.rows = std::clamp(timeline.num_devices, 0, kMaxRows);
  for (const Span& s : timeline.spans) {
    if (s.lane != sched::Lane::kCompute || !sched::is_compute(s.action.kind) || s.end_ns <= s.start_ns) continue;
    if (s.device < 0 || s.device >= kMaxRows) continue;
    g.spans.push_back(&s);
    g.rows = std::max(g.rows, s.device + 1);
  }
  if (g.spans.empty()) return g;
  Nanoseconds last = g.spans[0]->end_ns;
  g.origin = g.spans[0]->start_ns;
  for (const Span* s : g.spans) {
    g.origin = std::min(g.origin, s->start_ns);
    last = std::max(last, s->end_ns);
  }
  g.range = last - g.origin;
  g.stages_shown = devices_share_stages(g.spans, g.rows);
  return g;
}

// How time maps to cells and cells to lines.
struct GridLayout {
  Nanoseconds slot = 0;        // the time one cell stands for
  Nanoseconds exact_slot = 0;  // the gcd of the boundaries, before any coarsening
  std::int64_t slots = 0;      // cells per row
  std::int64_t factor = 1;     // how many coarsened slots were merged into one
  std::size_t label_w = 1;     // widest "F12"
  std::size_t prefix = 2;      // "d7:" column
  std::size_t cell = 2;        // label_w + the space before it
  std::int64_t per_line = 1;   // cells per line of output
};

// Slot: gcd of boundaries; too fine -> the shortest action; still too many -> merged slots.
GridLayout grid_layout(const GridSpans& g, int max_width) {
  GridLayout l;
  Nanoseconds slot = 0, shortest = g.range;
  for (const Span* s : g.spans) {
    slot = std::gcd(slot, std::gcd(s->start_ns - g.origin, s->end_ns - g.origin));
    shortest = std::min(shortest, s->end_ns - s->start_ns);
  }
  for (const Span* s : g.spans) l.label_w = std::max(l.label_w, cell_label(s->action, g.stages_shown).size());
  l.prefix = std::max<std::size_t>(2, fmt::format("d{}:", g.rows - 1).size());
  l.cell = l.label_w + 1;
  l.per_line = std::max<std::int64_t>(1, (static_cast<std::int64_t>(max_width) - static_cast<std::int64_t>(l.prefix)) /
                                             static_cast<std::int64_t>(l.cell));
  l.exact_slot = slot;
  if (g.range / slot > std::min(kMaxSlots, l.per_line * kMaxBlocks)) slot = std::max(slot, shortest);
  l.slots = (g.range + slot - 1) / slot;
  if (l.slots > l.per_line * kMaxBlocks) {
    l.factor = (l.slots + l.per_line * kMaxBlocks - 1) / (l.per_line * kMaxBlocks);
    slot *= l.factor;
    l.slots = (g.range + slot - 1) / slot;
  }
  l.slot = slot;
  return l;
}

// Each cell holds the action covering most of its slot (ties: the earlier action) and how busy
// the slot is in all.
std::vector<std::vector<Cell>> fill_grid(const GridSpans& g, const GridLayout& l) {
  const Nanoseconds slot = l.slot;
  std::vector<std::vector<Cell>> grid(static_cast<std::size_t>(g.rows),
                                      std::vector<Cell>(static_cast<std::size_t>(l.slots)));
  for (std::size_t i = 0; i < g.spans.size(); ++i) {
    const Span& s = *g.spans[i];
    const Nanoseconds a = s.start_ns - g.origin, b = s.end_ns - g.origin;
    for (std::int64_t k = a / slot; k < l.slots && k * slot < b; ++k) {
      const Nanoseconds covered = std::min(b, (k + 1) * slot) - std::max(a, k * slot);
      Cell& c = grid[static_cast<std::size_t>(s.device)][static_cast<std::size_t>(k)];
      const bool better = c.span < 0 || covered > c.covered_ns ||
                          (covered == c.covered_ns && s.start_ns < g.spans[static_cast<std::size_t>(c.span)]->start_ns);
      c.busy_ns += covered;
      if (covered > 0 && better) c = Cell{static_cast<int>(i), covered, c.busy_ns};
    }
  }
  return grid;
}

// The rows, folded into blocks of per_line cells. A cell shows its action unless idle time covers
// more of the slot than that action; `continued` says whether a "--" was drawn.
std::string grid_blocks(const GridSpans& g, const GridLayout& l, const std::vector<std::vector<Cell>>& grid,
                        bool& continued) {
  const Nanoseconds slot = l.slot;
  auto shown = [slot](const Cell& c) { return c.covered_ns >= slot - std::min(slot, c.busy_ns) ? c.span : -1; };
  std::string out;
  const std::int64_t blocks = (l.slots + l.per_line - 1) / l.per_line;
  for (std::int64_t block = 0; block < blocks; ++block) {
    const std::int64_t first = block * l.per_line, count = std::min(l.per_line, l.slots - first);
    if (block > 0) out += '\n';
    out += header_line(first, count, l.prefix, l.cell) + '\n';
    for (int d = 0; d < g.rows; ++d) {
      std::string line = fmt::format("{:<{}}", fmt::format("d{}:", d), l.prefix);
      const auto& row = grid[static_cast<std::size_t>(d)];
      for (std::int64_t k = first; k < first + count; ++k) {
        const int span = shown(row[static_cast<std::size_t>(k)]);
        std::string text = ".";
        if (span >= 0 && k > first && shown(row[static_cast<std::size_t>(k - 1)]) == span) {
          text = std::string(l.label_w, '-');
          continued = true;
        } else if (span >= 0) {
          text = cell_label(g.spans[static_cast<std::size_t>(span)]->action, g.stages_shown);
        }
        line += ' ' + rjust(text, l.label_w);
      }
      out += line + '\n';
    }
  }
  return out;
}

}  // namespace

std::string terminal_grid(const sched::Timeline& timeline, int max_width) {
  const GridSpans g = grid_spans(timeline);
  if (g.spans.empty()) return "(no compute spans)\n";
  const GridLayout l = grid_layout(g, max_width);
  bool continued = false;
  std::string out = grid_blocks(g, l, fill_grid(g, l), continued);
  const sched::TimelineStats stats = sched::compute_stats(timeline);
  out += fmt::format("1 slot = {}; . = idle{}; makespan {}, bubble {:.1f}%\n", format_duration(l.slot),
                     continued ? "; -- = action continues" : "", format_duration(stats.makespan_ns),
                     100 * stats.bubble_fraction);
  if (l.factor > 1) out += fmt::format("compressed {}x to fit {} blocks\n", l.factor, kMaxBlocks);
  if (l.slot != l.exact_slot) out += "each cell shows the action covering most of its slot\n";
  const std::int64_t blocks = (l.slots + l.per_line - 1) / l.per_line;
  if (blocks > 1) {
    out += fmt::format("folded into {} blocks of up to {} slots to fit {} columns\n", blocks, l.per_line, max_width);
  }
  return out;
}

}  // namespace pipeworks::viz
