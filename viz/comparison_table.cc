// Text table and JSON records of a predicted-vs-measured Comparison (see comparison_table.h).
#include "viz/comparison_table.h"

#include <cmath>

#include <fmt/format.h>

#include "sched/units_text.h"
#include "viz/time_units.h"

namespace pipeworks::viz {

std::string format_relative(double relative) {
  if (std::isnan(relative)) return "n/a";
  if (std::isinf(relative)) return relative > 0 ? "+inf%" : "-inf%";
  std::string text = fmt::format("{:+.1f}%", 100.0 * relative);
  return text == "-0.0%" || text == "+0.0%" ? "0.0%" : text;  // zero has no sign
}

namespace {

std::string time_text(sched::Nanoseconds ns) { return format_duration(ns); }

std::string spread_text(const Spread& s, bool bytes) {
  if (bytes) return fmt::format("[{} .. {}]", sched::format_bytes(s.min), sched::format_bytes(s.max));
  return fmt::format("[{} .. {}]", time_text(s.min), time_text(s.max));
}

void row(std::string& out, const std::string& name, const std::string& predicted, const std::string& measured,
         const std::string& error, const std::string& note = {}) {
  out += fmt::format("{:<22}{:>13}{:>13}{:>11}", name, predicted, measured, error);
  if (!note.empty()) out += "   " + note;
  out += "\n";
}

nlohmann::json finite_or_null(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); }

nlohmann::json spread_json(const std::optional<Spread>& s) {
  if (!s) return nullptr;
  return {{"min", s->min}, {"median", s->median}, {"max", s->max}};
}

}  // namespace

std::string comparison_table(const Comparison& c, const MeasuredSpreads& spreads, std::size_t top_actions) {
  std::string out;
  const std::string basis = spreads.steps > 0 ? fmt::format("(measured: median of {} steps)", spreads.steps) : "";
  row(out, "", "predicted", "measured", "error", basis);
  row(out, "step time", time_text(c.predicted_step_ns), time_text(c.measured_step_ns), format_relative(c.step_error()),
      spreads.step_ns ? spread_text(*spreads.step_ns, false) : "");
  row(out, "bubble", fmt::format("{:.1f}%", 100 * c.predicted_bubble), fmt::format("{:.1f}%", 100 * c.measured_bubble),
      fmt::format("{:+.1f} pp", 100 * (c.predicted_bubble - c.measured_bubble)));
  for (const DeviceComparison& d : c.devices) {
    const auto name = [&](const char* what) { return fmt::format("device {} {}", d.device, what); };
    row(out, name("busy"), time_text(d.predicted_busy_ns), time_text(d.measured_busy_ns),
        format_relative(relative_error(static_cast<double>(d.predicted_busy_ns), static_cast<double>(d.measured_busy_ns))));
    row(out, name("bubble"), fmt::format("{:.1f}%", 100 * d.predicted_bubble),
        fmt::format("{:.1f}%", 100 * d.measured_bubble),
        fmt::format("{:+.1f} pp", 100 * (d.predicted_bubble - d.measured_bubble)));
    row(out, name("peak act."), sched::format_bytes(d.predicted_peak_bytes), sched::format_bytes(d.measured_peak_bytes),
        format_relative(relative_error(static_cast<double>(d.predicted_peak_bytes),
                                       static_cast<double>(d.measured_peak_bytes))));
  }
  if (spreads.peak_bytes) out += fmt::format("{:<22}{}\n", "peak act. spread", spread_text(*spreads.peak_bytes, true));
  out += fmt::format("median |action error| {:.1f}% over {} actions\n", 100 * median_abs_action_error(c),
                     c.actions.size());
  if (!c.same_actions()) {
    out += fmt::format("action sets differ: {} only predicted, {} only measured\n", c.only_predicted.size(),
                       c.only_measured.size());
  }
  const std::vector<ActionDeviation> top = largest_deviations(c, top_actions, true);
  if (top.empty()) return out;
  out += fmt::format("\ncompute actions deviating most (top {} by |predicted - measured|)\n", top.size());
  out += fmt::format("{:<10}{:>7}  {:<8}{:>12}{:>12}{:>12}{:>9}\n", "action", "device", "lane", "predicted", "measured",
                     "error", "rel.");
  for (const ActionDeviation& a : top) {
    out += fmt::format("{:<10}{:>7}  {:<8}{:>12}{:>12}{:>12}{:>9}\n", to_string(a.action), a.device,
                       sched::lane_name(a.lane), time_text(a.predicted_ns), time_text(a.measured_ns),
                       fmt::format("{}{}", a.error_ns() >= 0 ? '+' : '-',
                                   time_text(a.error_ns() >= 0 ? a.error_ns() : -a.error_ns())),
                       format_relative(a.relative()));
  }
  return out;
}

nlohmann::json timeline_records(const sched::Timeline& timeline) {
  nlohmann::json records = nlohmann::json::array();
  for (const sched::Span& s : timeline.spans) {
    records.push_back({{"device", s.device},
                       {"lane", sched::lane_name(s.lane)},
                       {"stage", s.action.stage},
                       {"microbatch", s.action.microbatch},
                       {"kind", sched::kind_name(s.action.kind)},
                       {"start_ns", s.start_ns},
                       {"end_ns", s.end_ns}});
  }
  return records;
}

nlohmann::json comparison_json(const Comparison& c, const MeasuredSpreads& spreads) {
  nlohmann::json devices = nlohmann::json::array();
  for (const DeviceComparison& d : c.devices) {
    devices.push_back(
        {{"device", d.device},
         {"predicted_busy_ns", d.predicted_busy_ns},
         {"measured_busy_ns", d.measured_busy_ns},
         {"busy_error", finite_or_null(relative_error(static_cast<double>(d.predicted_busy_ns),
                                                      static_cast<double>(d.measured_busy_ns)))},
         {"predicted_bubble_fraction", d.predicted_bubble},
         {"measured_bubble_fraction", d.measured_bubble},
         {"predicted_peak_activation_bytes", d.predicted_peak_bytes},
         {"measured_peak_activation_bytes", d.measured_peak_bytes},
         {"peak_error", finite_or_null(relative_error(static_cast<double>(d.predicted_peak_bytes),
                                                      static_cast<double>(d.measured_peak_bytes)))}});
  }
  nlohmann::json actions = nlohmann::json::array();
  for (const ActionDeviation& a : c.actions) {
    actions.push_back({{"action", to_string(a.action)},
                       {"device", a.device},
                       {"lane", sched::lane_name(a.lane)},
                       {"predicted_ns", a.predicted_ns},
                       {"measured_ns", a.measured_ns},
                       {"error_ns", a.error_ns()},
                       {"relative_error", finite_or_null(a.relative())}});
  }
  nlohmann::json only_predicted = nlohmann::json::array();
  for (const sched::Action& a : c.only_predicted) only_predicted.push_back(to_string(a));
  nlohmann::json only_measured = nlohmann::json::array();
  for (const sched::Action& a : c.only_measured) only_measured.push_back(to_string(a));
  sched::Bytes predicted_peak = 0, measured_peak = 0;
  for (const DeviceComparison& d : c.devices) {
    predicted_peak = std::max(predicted_peak, d.predicted_peak_bytes);
    measured_peak = std::max(measured_peak, d.measured_peak_bytes);
  }
  return {{"summary",
           {{"predicted_step_ns", c.predicted_step_ns},
            {"measured_step_ns", c.measured_step_ns},
            {"measured_step_spread_ns", spread_json(spreads.step_ns)},
            {"measured_steps", spreads.steps},
            {"predicted_bubble_fraction", c.predicted_bubble},
            {"measured_bubble_fraction", c.measured_bubble},
            {"predicted_peak_activation_bytes", predicted_peak},
            {"measured_peak_activation_bytes", measured_peak},
            {"measured_peak_spread_bytes", spread_json(spreads.peak_bytes)},
            {"devices", devices}}},
          {"errors",
           {{"step_time", finite_or_null(c.step_error())},
            {"peak_activation",
             finite_or_null(relative_error(static_cast<double>(predicted_peak), static_cast<double>(measured_peak)))},
            {"median_abs_action", finite_or_null(median_abs_action_error(c))},
            {"same_actions", c.same_actions()},
            {"only_predicted", only_predicted},
            {"only_measured", only_measured}}},
          {"actions", actions}};
}

}  // namespace pipeworks::viz
