// Draws Timelines as an SVG Gantt chart (see svg_gantt.h for the picture). Sizes are fixed
// pixel estimates (labels use a monospace font, 0.6 em per character), so output is exact and
// byte-for-byte reproducible, which the golden test relies on.
#include "viz/svg_gantt.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sched/text_file.h"
#include "viz/device_stages.h"
#include "viz/kind_colors.h"
#include "viz/time_units.h"
#include "viz/xml_text.h"

namespace pipeworks::viz {

namespace {

using sched::ActionKind;
using sched::Lane;
using sched::Span;
using sched::Timeline;

constexpr double kMinLeft = 78;   // device labels live left of the plot: at least this wide,
constexpr double kMaxLeft = 260;  // at most this
constexpr double kRight = 28;
constexpr double kTitleH = 34;
constexpr double kHeaderH = 22;  // timeline name, makespan, bubble
constexpr double kAxisH = 34;
constexpr double kPanelGap = 12;
constexpr double kLegendLineH = 20;
constexpr int kMaxRows = 4096;
constexpr int kCommMinRowPx = 20;
constexpr double kMonoEm = 0.6;  // monospace glyph width / font size
constexpr double kSansEm = 0.6;  // generous estimate for sans-serif text
constexpr double kLabelFont = 11;
constexpr double kMinCommWidth = 1.5;  // px: a transfer stays visible however short
constexpr int kRampCells = 12;         // cells of the micro-batch legend
constexpr const char* kIdleFill = "#f1f1f1";

struct Panel {
  const Timeline* tl = nullptr;
  sched::TimelineStats stats;
  int rows = 0;
  DeviceStages stages;
  const SpanPredictions* predictions = nullptr;  // one per span, or null
};

// A device's later stages are hatched over their kind's color: the 2nd rising, the 3rd falling,
// the 4th and later dotted. Defined once in <defs> when some device runs several stages.
constexpr int kStageMarks = 3;
constexpr const char* kStageMarkDefs =
    "<defs>\n"
    R"svg(<pattern id="stage-mark-1" patternUnits="userSpaceOnUse" width="5" height="5" patternTransform="rotate(45)">)svg"
    R"svg(<rect x="0" y="0" width="1.6" height="5" fill="#ffffff" fill-opacity="0.75"/></pattern>)svg" "\n"
    R"svg(<pattern id="stage-mark-2" patternUnits="userSpaceOnUse" width="5" height="5" patternTransform="rotate(-45)">)svg"
    R"svg(<rect x="0" y="0" width="1.6" height="5" fill="#ffffff" fill-opacity="0.75"/></pattern>)svg" "\n"
    R"svg(<pattern id="stage-mark-3" patternUnits="userSpaceOnUse" width="4" height="4">)svg"
    R"svg(<circle cx="2" cy="2" r="1" fill="#ffffff" fill-opacity="0.8"/></pattern>)svg" "\n"
    "</defs>\n";

int stage_mark(int local_index) { return std::min(local_index, kStageMarks); }

int device_rows(const Timeline& tl) {
  int rows = std::max(tl.num_devices, 0);
  for (const Span& s : tl.spans) rows = std::max(rows, s.device + 1);
  return std::min(rows, kMaxRows);
}

std::string kind_title(ActionKind k) {
  switch (k) {
    case ActionKind::kForward: return "F forward";
    case ActionKind::kBackward: return "B backward";
    case ActionKind::kBackwardInput: return "I backward-input";
    case ActionKind::kBackwardWeight: return "W backward-weight";
    case ActionKind::kRecompute: return "R recompute";
    default: return std::string(sched::kind_name(k));
  }
}

// A device row's label: "device 3" on a one-stage-per-device pipeline without layer names, else
// "d3 s3" / "d0 s0,7" with the stages' layers when known ("d3 s3 [6,8)").
std::string device_label(int device, const std::vector<int>& stages, const std::vector<std::string>& stage_layers) {
  const bool own_stage = stages.empty() || stages == std::vector<int>{device};
  if (own_stage && stage_layers.empty()) return fmt::format("device {}", device);
  std::string text = fmt::format("d{} {}", device, stages.empty() ? "" : stage_list_text(stages));
  for (const int s : stages) {
    if (s >= 0 && static_cast<std::size_t>(s) < stage_layers.size()) text += " " + stage_layers[static_cast<std::size_t>(s)];
  }
  return text;
}

class Chart {
 public:
  Chart(const std::vector<const Timeline*>& timelines, const SvgOptions& o) : o_(o) {
    width_ = std::max(o.width_px, 320);
    left_ = kMinLeft;
    for (const Timeline* tl : timelines) {
      if (tl == nullptr) continue;
      const int rows = device_rows(*tl);
      const DeviceStages stages = device_stages(*tl, rows);
      for (int d = 0; d < rows; ++d) {
        const std::string label = device_label(d, stages.stages_of_device[static_cast<std::size_t>(d)], o.stage_layers);
        left_ = std::max(left_, static_cast<double>(label.size()) * kLabelFont * kSansEm + 16);
      }
    }
    left_ = std::min(left_, std::min(kMaxLeft, width_ / 3.0));
    plot_w_ = width_ - left_ - kRight;
    int max_rows = 1;
    for (std::size_t i = 0; i < timelines.size(); ++i) {
      const Timeline* tl = timelines[i];
      if (tl == nullptr) continue;
      Panel p{tl, sched::compute_stats(*tl), device_rows(*tl), {}, nullptr};
      if (i < o.predictions.size() && o.predictions[i].size() == tl->spans.size()) {
        p.predictions = &o.predictions[i];
        error_scale_ = true;
      }
      p.stages = device_stages(*tl, p.rows);
      for (const std::vector<int>& stages : p.stages.stages_of_device) {
        max_stage_mark_ = std::max(max_stage_mark_, stage_mark(static_cast<int>(stages.size()) - 1));
      }
      range_ns_ = std::max(range_ns_, p.stats.makespan_ns);
      max_rows = std::max(max_rows, p.rows);
      for (const Span& s : tl->spans) {
        if (sched::is_compute(s.action.kind)) kinds_present_[sched::kind_index(s.action.kind)] = true;
        comm_present_ = comm_present_ || sched::is_comm(s.action.kind);
      }
      panels_.push_back(p);
    }
    range_ns_ = std::max<sched::Nanoseconds>(range_ns_, 1);
    row_h_ = o.row_height_px > 0 ? std::clamp(o.row_height_px, 4, 200) : std::clamp(560 / max_rows, 8, 28);
    show_comm_ = o.show_comm && comm_present_ && row_h_ >= kCommMinRowPx;
    bar_h_ = show_comm_ ? std::round(row_h_ * 0.7) : row_h_ - std::max(1.0, std::round(row_h_ * 0.15));
    strip_h_ = (row_h_ - bar_h_ - 2.5) / 2;
    scale_ = plot_w_ / static_cast<double>(range_ns_);
    unit_ = choose_time_unit(range_ns_);
    step_ns_ = nice_tick_step(range_ns_, std::max(2, static_cast<int>(plot_w_ / 90)));
  }

  std::string render() {
    double y = kTitleH;
    for (const Panel& p : panels_) y = draw_panel(p, y) + kPanelGap;
    if (panels_.empty()) {
      put(R"(<text x="{}" y="{:.2f}" font-size="12" fill="#555">no timelines</text>)" "\n", left_, y + 14);
      y += 24;
    }
    y = draw_legend(y);
    const std::string title = o_.title.empty() ? default_title() : o_.title;
    std::string head = fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1:.0f}" viewBox="0 0 {0} {1:.0f}" )"
        R"(font-family="DejaVu Sans, Helvetica, Arial, sans-serif">)" "\n"
        "<title>{2}</title>\n"
        R"(<rect x="0" y="0" width="{0}" height="{1:.0f}" fill="#ffffff"/>)" "\n"
        R"(<text x="{3}" y="22" font-size="16" font-weight="bold" fill="#1a1a1a">{2}</text>)" "\n",
        width_, std::ceil(y + 8), xml_text(title), left_);
    if (max_stage_mark_ > 0) head += kStageMarkDefs;
    return head + fmt::to_string(body_) + "</svg>\n";
  }

 private:
  template <class... Args>
  void put(fmt::format_string<Args...> f, Args&&... args) {
    fmt::format_to(std::back_inserter(body_), f, std::forward<Args>(args)...);
  }

  std::string default_title() const {
    std::string names;
    for (const Panel& p : panels_) names += (names.empty() ? "" : " vs ") + p.tl->name;
    return names.empty() ? "Pipeline schedule" : "Pipeline schedule: " + names;
  }

  double x_of(sched::Nanoseconds t, const Panel& p) const {
    return left_ + static_cast<double>(t - p.stats.start_ns) * scale_;
  }

  // Returns the y just below the panel's axis.
  double draw_panel(const Panel& p, double top) {
    const Timeline& tl = *p.tl;
    const int k = p.rows;
    put(R"(<g class="timeline">)" "\n");
    put(R"(<text x="{}" y="{:.2f}" font-size="12" fill="#1a1a1a">{} — makespan {} · bubble {:.1f}% · {} devices × {} micro-batches</text>)"
        "\n",
        left_, top + 15, xml_text(tl.name), format_duration(p.stats.makespan_ns, true), 100 * p.stats.bubble_fraction, k,
        tl.num_microbatches);
    const double rows_top = top + kHeaderH;
    const double rows_bottom = rows_top + k * row_h_;
    for (int d = 0; d < k; ++d) {
      put(R"(<rect x="{}" y="{:.2f}" width="{:.2f}" height="{:.2f}" fill="{}"/>)" "\n", left_, rows_top + d * row_h_,
          plot_w_, bar_h_, kIdleFill);
    }
    for (sched::Nanoseconds t = 0; t <= range_ns_; t += step_ns_) {
      const double x = left_ + static_cast<double>(t) * scale_;
      put(R"(<line x1="{0:.2f}" y1="{1:.2f}" x2="{0:.2f}" y2="{2:.2f}" stroke="#cfcfcf" stroke-width="0.5"/>)" "\n", x,
          rows_top, rows_bottom + 4);
    }
    draw_spans(p, rows_top);
    draw_device_labels(p, rows_top);
    draw_axis(rows_bottom);
    put("</g>\n");
    return rows_bottom + kAxisH;
  }

  // A span's fill, and its tooltip: "0F3", or beside a prediction
  // "0F3: measured 1.20 ms, predicted 1.00 ms (-16.7%)".
  std::pair<KindColor, std::string> look(const Panel& p, std::size_t span_index) const {
    const Span& s = p.tl->spans[span_index];
    const std::string name = sched::to_string(s.action);
    const bool compute = sched::is_compute(s.action.kind);
    if (p.predictions == nullptr || !compute || !(*p.predictions)[span_index]) {
      return {kind_color(s.action.kind, s.action.microbatch, p.tl->num_microbatches), name};
    }
    const SpanPrediction& e = *(*p.predictions)[span_index];
    return {error_color(e.error), fmt::format("{}: measured {}, predicted {} ({})", name,
                                              format_duration(s.duration_ns(), true),
                                              format_duration(e.predicted_ns, true), signed_percent(e.error))};
  }

  static std::string signed_percent(double error) {
    if (!std::isfinite(error)) return error < 0 ? "-inf%" : "+inf%";
    const double pct = std::round(1000 * error) / 10;
    return pct == 0 ? "0.0%" : fmt::format("{:+.1f}%", pct);
  }

  void draw_spans(const Panel& p, double rows_top) {
    const Timeline& tl = *p.tl;
    const double font = std::min(11.0, bar_h_ - 5);
    std::vector<double> label_right(static_cast<std::size_t>(p.rows), -1e300);
    for (std::size_t index = 0; index < tl.spans.size(); ++index) {
      const Span& s = tl.spans[index];
      // Stage-level actions (UNSHARD, RESHARD, REDUCE_GRAD) are neither compute nor transfers: not drawn.
      if (s.device < 0 || s.device >= p.rows || s.end_ns <= s.start_ns || sched::is_stage_level(s.action.kind)) continue;
      const bool compute = sched::is_compute(s.action.kind);
      if (!compute && !show_comm_) continue;
      const double x = x_of(s.start_ns, p);
      const double w = static_cast<double>(s.end_ns - s.start_ns) * scale_;
      const double row_y = rows_top + s.device * row_h_;
      const auto [color, tooltip] = look(p, index);
      if (!compute) {
        const double y = row_y + bar_h_ + 1 + (s.lane == Lane::kRecv ? strip_h_ + 0.5 : 0);
        put(R"(<rect x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" fill="{}"><title>{}</title></rect>)" "\n", x, y,
            std::max(w, kMinCommWidth), strip_h_, color.fill, tooltip);
        continue;
      }
      const double gap = w >= 4 ? 1 : 0;  // a hairline between neighbouring actions
      const double drawn_w = std::max(w - gap, 0.5);
      const std::string name = fmt::format("{}{}", sched::kind_name(s.action.kind), s.action.microbatch);
      put(R"(<rect x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" fill="{}"><title>{}</title></rect>)" "\n", x,
          row_y, drawn_w, bar_h_, color.fill, xml_text(tooltip));
      if (const int mark = stage_mark(p.stages.local_index(s.device, s.action.stage)); mark > 0) {
        put(R"svg(<rect x="{:.2f}" y="{:.2f}" width="{:.2f}" height="{:.2f}" fill="url(#stage-mark-{})"/>)svg" "\n", x, row_y,
            drawn_w, bar_h_, mark);
      }
      if (!o_.show_labels || font < 7) continue;
      std::string label = name;
      if (label.size() * font * kMonoEm + 3 > drawn_w) label = std::to_string(s.action.microbatch);
      const double text_w = static_cast<double>(label.size()) * font * kMonoEm;
      const double cx = x + drawn_w / 2;
      double& right = label_right[static_cast<std::size_t>(s.device)];
      if (text_w + 3 > drawn_w || cx - text_w / 2 < right + 2) continue;
      right = cx + text_w / 2;
      put(R"(<text x="{:.2f}" y="{:.2f}" font-size="{:.0f}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" )"
          R"(text-anchor="middle" dominant-baseline="central" fill="{}">{}</text>)" "\n",
          cx, row_y + bar_h_ / 2, font, color.text_color, label);
    }
  }

  // Every device when rows are tall enough, else every n-th so labels never touch. A device that
  // runs other stages than its own index names them: "d0 s0,7".
  void draw_device_labels(const Panel& p, double rows_top) {
    const int every = row_h_ >= 11 ? 1 : static_cast<int>(std::ceil(11.0 / row_h_));
    const double font = std::min(kLabelFont, row_h_ * every - 2.0);
    const auto fits = [&](const std::string& text) {
      return static_cast<double>(text.size()) * font * kSansEm <= left_ - 10;
    };
    for (int d = 0; d < p.rows; d += every) {
      const std::string text =
          device_label(d, p.stages.stages_of_device[static_cast<std::size_t>(d)], o_.stage_layers);
      put(R"(<text x="{}" y="{:.2f}" font-size="{:.0f}" text-anchor="end" dominant-baseline="central" fill="#333">{}</text>)"
          "\n",
          left_ - 8, rows_top + d * row_h_ + bar_h_ / 2, font, fits(text) ? text : fmt::format("d{}", d));
    }
  }

  void draw_axis(double y) {
    const int decimals = tick_decimals(step_ns_, unit_);
    put(R"(<line x1="{}" y1="{:.2f}" x2="{:.2f}" y2="{:.2f}" stroke="#555" stroke-width="1"/>)" "\n", left_, y + 4,
        left_ + plot_w_, y + 4);
    for (sched::Nanoseconds t = 0; t <= range_ns_; t += step_ns_) {
      const double x = left_ + static_cast<double>(t) * scale_;
      put(R"(<line x1="{0:.2f}" y1="{1:.2f}" x2="{0:.2f}" y2="{2:.2f}" stroke="#555" stroke-width="1"/>)" "\n", x, y + 4,
          y + 8);
      put(R"(<text x="{:.2f}" y="{:.2f}" font-size="11" text-anchor="middle" fill="#333">{}</text>)" "\n", x, y + 20,
          format_in_unit(t, unit_, decimals));
    }
    put(R"(<text x="{}" y="{:.2f}" font-size="11" text-anchor="end" fill="#333">time ({})</text>)" "\n", left_ - 8,
        y + 20, unit_.name);
  }

  // Kinds present (three shades each: first, middle, last micro-batch), transfers, idle.
  double draw_legend(double top) {
    double x = left_;
    legend_y_ = top + 4;
    double& y = legend_y_;  // place() moves it down a line when the legend wraps
    auto place = [&](double item_w) {
      if (x + item_w > width_ - kRight && x > left_) {
        x = left_;
        y += kLegendLineH;
      }
      const double at = x;
      x += item_w + 18;
      return at;
    };
    auto text_at = [&](double tx, const std::string& text) {
      put(R"(<text x="{:.2f}" y="{:.2f}" font-size="11" dominant-baseline="central" fill="#333">{}</text>)" "\n", tx,
          y + 6, text);
    };
    const int m = 9;  // shades shown for a 9-micro-batch ramp: 0, 4, 8
    for (const ActionKind k : sched::kAllActionKinds) {
      if (!sched::is_compute(k) || !kinds_present_[sched::kind_index(k)]) continue;
      const std::string title = kind_title(k);
      const double at = place(3 * 9 + 5 + static_cast<double>(title.size()) * 11 * kSansEm);
      for (int i = 0; i < 3; ++i) {
        put(R"(<rect x="{:.2f}" y="{:.2f}" width="9" height="12" fill="{}"/>)" "\n", at + 9 * i, y,
            kind_color(k, i * (m - 1) / 2, m).fill);
      }
      text_at(at + 3 * 9 + 5, title);
    }
    if (show_comm_) {
      for (const ActionKind k : {ActionKind::kSendF, ActionKind::kRecvF}) {
        const std::string title = sched::is_send(k) ? "send (thin)" : "recv (thin)";
        const double at = place(20 + 5 + static_cast<double>(title.size()) * 11 * kSansEm);
        put(R"(<rect x="{:.2f}" y="{:.2f}" width="20" height="3" fill="{}"/>)" "\n", at, y + 4.5, kind_color(k, 0, 1).fill);
        text_at(at + 25, title);
      }
    }
    // A device's stages: its 1st plain, each hatching in use, over a neutral grey.
    static const char* const kMarkTitles[] = {"device's 1st stage", "2nd stage", "3rd stage", "4th+ stage"};
    for (int mark = 0; max_stage_mark_ > 0 && mark <= max_stage_mark_; ++mark) {
      const std::string title = kMarkTitles[mark];
      const double at = place(20 + 5 + static_cast<double>(title.size()) * 11 * kSansEm);
      put(R"(<rect x="{:.2f}" y="{:.2f}" width="20" height="12" fill="#7a7a7a"/>)" "\n", at, y);
      if (mark > 0) {
        put(R"svg(<rect x="{:.2f}" y="{:.2f}" width="20" height="12" fill="url(#stage-mark-{})"/>)svg" "\n", at, y, mark);
      }
      text_at(at + 25, title);
    }
    const double idle_at = place(20 + 5 + 4 * 11 * kSansEm);
    put(R"(<rect x="{:.2f}" y="{:.2f}" width="20" height="12" fill="{}" stroke="#bbbbbb" stroke-width="0.5"/>)" "\n",
        idle_at, y, kIdleFill);
    text_at(idle_at + 25, "idle");
    draw_microbatch_ramp(place, text_at);
    if (error_scale_) draw_error_scale(place, text_at);
    return y + kLegendLineH;
  }

  // "micro-batch 0 [ramp] M-1": the shades of the first kind drawn, evenly from the first
  // micro-batch to the last, so a shade reads as a micro-batch number at any M.
  template <class Place, class TextAt>
  void draw_microbatch_ramp(Place& place, TextAt& text_at) {
    int m = 1;
    for (const Panel& p : panels_) m = std::max(m, p.tl->num_microbatches);
    ActionKind kind = ActionKind::kForward;
    for (const ActionKind k : sched::kAllActionKinds) {
      if (sched::is_compute(k) && kinds_present_[sched::kind_index(k)]) {
        kind = k;
        break;
      }
    }
    const int cells = std::min(m, kRampCells);
    const std::string first = "micro-batch 0";
    const std::string last = std::to_string(m - 1);
    const double first_w = static_cast<double>(first.size()) * 11 * kSansEm;
    const double at = place(first_w + 5 + cells * 7 + 5 + static_cast<double>(last.size()) * 11 * kSansEm);
    text_at(at, first);
    for (int i = 0; i < cells; ++i) {
      const int microbatch = cells == 1 ? 0 : i * (m - 1) / (cells - 1);
      put(R"(<rect x="{:.2f}" y="{:.2f}" width="7" height="12" fill="{}"><title>micro-batch {}</title></rect>)" "\n",
          at + first_w + 5 + 7 * i, legend_y_, kind_color(kind, microbatch, m).fill, microbatch);
    }
    text_at(at + first_w + 5 + cells * 7 + 5, last);
  }

  // "measured vs predicted: predicted low -50% [ramp] +50% predicted high".
  template <class Place, class TextAt>
  void draw_error_scale(Place& place, TextAt& text_at) {
    constexpr int kCells = 11;
    const std::string low = fmt::format("measured, predicted low {:.0f}%", -100 * kErrorColorSaturatesAt);
    const std::string high = fmt::format("+{:.0f}% predicted high", 100 * kErrorColorSaturatesAt);
    const double low_w = static_cast<double>(low.size()) * 11 * kSansEm;
    const double at = place(low_w + 5 + kCells * 7 + 5 + static_cast<double>(high.size()) * 11 * kSansEm);
    text_at(at, low);
    for (int i = 0; i < kCells; ++i) {
      const double error = kErrorColorSaturatesAt * (2.0 * i / (kCells - 1) - 1);
      put(R"(<rect x="{:.2f}" y="{:.2f}" width="7" height="12" fill="{}"><title>error {}</title></rect>)" "\n",
          at + low_w + 5 + 7 * i, legend_y_, error_color(error).fill, signed_percent(error));
    }
    text_at(at + low_w + 5 + kCells * 7 + 5, high);
  }

  const SvgOptions& o_;
  bool error_scale_ = false;  // some panel is coloured by its predictions' errors
  double left_ = kMinLeft;
  double legend_y_ = 0;  // the legend line being drawn
  std::vector<Panel> panels_;
  int max_stage_mark_ = 0;     // the highest stage mark any span gets (0: one stage per device)
  fmt::memory_buffer body_;
  int width_ = 0;
  double plot_w_ = 0;
  sched::Nanoseconds range_ns_ = 0;
  double row_h_ = 0, bar_h_ = 0, strip_h_ = 0, scale_ = 0;
  bool show_comm_ = false, comm_present_ = false;
  bool kinds_present_[sched::kNumActionKinds] = {};
  TimeUnit unit_;
  sched::Nanoseconds step_ns_ = 1;
};

}  // namespace

std::string svg_gantt(const std::vector<const sched::Timeline*>& timelines, const SvgOptions& options) {
  return Chart(timelines, options).render();
}

sched::Status write_svg(const std::string& path, const std::vector<const sched::Timeline*>& timelines,
                        const SvgOptions& options) {
  return sched::write_text_file(path, svg_gantt(timelines, options));
}

}  // namespace pipeworks::viz
