// Writers for sweep rows: CSV and JSON for files and notebooks, aligned text for the terminal.
#include "sim/plan/sweep_table.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/plan/partition_text.h"
#include "sim/spec/units.h"

namespace pipeworks::sim {
namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string fits_text(const SweepRow& row) {
  if (!row.simulated) return "";
  return row.fits ? "yes" : "no";
}

// A table whose column widths follow its widest cell; numbers right-aligned, text left-aligned.
class TextTable {
 public:
  explicit TextTable(std::vector<std::pair<std::string, bool>> columns) : columns_(std::move(columns)) {
    std::vector<std::string> header;
    for (const auto& column : columns_) header.push_back(column.first);
    cells_.push_back(std::move(header));
  }
  void add(std::vector<std::string> row) { cells_.push_back(std::move(row)); }
  std::string str() const {
    std::vector<std::size_t> width(columns_.size(), 0);
    for (const auto& row : cells_) {
      for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    }
    std::string out;
    for (const auto& row : cells_) {
      std::string line;
      for (std::size_t c = 0; c < row.size(); ++c) {
        if (c > 0) line += "  ";
        line += columns_[c].second ? fmt::format("{:>{}}", row[c], width[c]) : fmt::format("{:<{}}", row[c], width[c]);
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<std::pair<std::string, bool>> columns_;  // name, right-aligned
  std::vector<std::vector<std::string>> cells_;
};

}  // namespace

std::string_view recompute_name(bool recompute) { return recompute ? "on" : "off"; }

std::string format_samples_per_s(double samples_per_s) {
  const int decimals = samples_per_s < 10 ? 3 : samples_per_s < 100 ? 2 : 1;
  return fmt::format("{:.{}f}", samples_per_s, decimals);
}

std::string sweep_csv(const std::vector<SweepRow>& rows) {
  std::string out =
      "batch,stages,virtual_stages,microbatches,microbatch_size,schedule,recompute,partition,makespan_ns,samples_per_s,"
      "bubble_fraction,peak_bytes,peak_device,capacity_bytes,fits,overflow_bytes,stage_compute_ns,note,partition_note\n";
  for (const SweepRow& r : rows) {
    const SweepConfig& c = r.config;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{:.6g},{:.6f},{},{},{},{},{},{},{},{}\n", c.batch_size, c.num_stages,
                       c.virtual_stages, c.num_microbatches, c.microbatch_size(), sched::schedule_kind_name(c.schedule),
                       recompute_name(c.recompute), csv_field(layer_counts_text(r.partition, false)), r.makespan_ns,
                       r.samples_per_s, r.bubble_fraction, r.peak_bytes, r.peak_device, r.capacity_bytes,
                       fits_text(r), r.overflow_bytes, r.stage_compute_ns, csv_field(r.note),
                       csv_field(r.partition_note));
  }
  return out;
}

std::string sweep_json(const SweepResult& result) {
  nlohmann::json rows = nlohmann::json::array();
  for (const SweepRow& r : result.rows) {
    const SweepConfig& c = r.config;
    rows.push_back({{"batch", c.batch_size},
                    {"stages", c.num_stages},
                    {"virtual_stages", c.virtual_stages},
                    {"microbatches", c.num_microbatches},
                    {"microbatch_size", c.microbatch_size()},
                    {"schedule", sched::schedule_kind_name(c.schedule)},
                    {"recompute", c.recompute},
                    {"partition", r.partition.boundaries},
                    {"simulated", r.simulated},
                    {"makespan_ns", r.makespan_ns},
                    {"samples_per_s", r.samples_per_s},
                    {"bubble_fraction", r.bubble_fraction},
                    {"peak_bytes", r.peak_bytes},
                    {"peak_device", r.peak_device},
                    {"capacity_bytes", r.capacity_bytes},
                    {"fits", r.fits},
                    {"overflow_bytes", r.overflow_bytes},
                    {"stage_compute_ns", r.stage_compute_ns},
                    {"note", r.note},
                    {"partition_note", r.partition_note}});
  }
  const SkipCounts& s = result.skipped;
  const nlohmann::json skipped = {{"total", s.total()},
                                  {"more_stages_than_devices", s.more_stages_than_devices},
                                  {"more_stages_than_layers", s.more_stages_than_layers},
                                  {"microbatches_not_dividing_batch", s.microbatches_not_dividing_batch}};
  return nlohmann::json{{"rows", rows}, {"skipped", skipped}}.dump(2) + "\n";
}

std::string rows_table(const std::vector<SweepRow>& rows, const std::vector<std::size_t>& indices, bool show_batch) {
  std::vector<std::pair<std::string, bool>> columns;
  if (show_batch) columns.emplace_back("batch", true);
  for (const auto& column : std::vector<std::pair<std::string, bool>>{
           {"stages", true}, {"M", true}, {"mb", true}, {"schedule", false}, {"recompute", false},
           {"partition", false}, {"step", true}, {"samples/s", true}, {"bubble", true}, {"peak", true},
           {"fits", false}}) {
    columns.push_back(column);
  }
  TextTable table(columns);
  for (const std::size_t i : indices) {
    const SweepRow& r = rows.at(i);
    const SweepConfig& c = r.config;
    std::vector<std::string> cells;
    if (show_batch) cells.push_back(fmt::to_string(c.batch_size));
    for (auto& cell : std::vector<std::string>{
             fmt::to_string(c.num_stages), fmt::to_string(c.num_microbatches), fmt::to_string(c.microbatch_size()),
             schedule_text(c), std::string(recompute_name(c.recompute)),
             layer_counts_text(r.partition, true), format_duration(r.makespan_ns),
             format_samples_per_s(r.samples_per_s), fmt::format("{:.1f}%", 100 * r.bubble_fraction),
             format_bytes(r.peak_bytes), fits_text(r)}) {
      cells.push_back(std::move(cell));
    }
    table.add(std::move(cells));
  }
  return table.str();
}

}  // namespace pipeworks::sim
