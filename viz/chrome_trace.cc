// Streams Timelines as Chrome trace JSON; see chrome_trace.h for the layout and repair rules.
// Hand-formatted with fmt for speed (a million spans in well under a second); every string that
// comes from the outside (timeline names) is escaped by nlohmann-json.
#include "viz/chrome_trace.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string_view>

#include "sched/text_file.h"

namespace pipeworks::viz {

namespace {

using sched::Lane;
using sched::Nanoseconds;
using sched::Span;
using sched::Timeline;

constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
constexpr int kMaxFlaggedDevices = 1 << 20;

// JSON string literal (quotes included); invalid UTF-8 becomes U+FFFD instead of throwing.
std::string json_string(std::string_view text) {
  return nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A time after rebasing, in nanoseconds plus an optional half nanosecond (flow points sit in the
// middle of slices, which may be one nanosecond long).
struct Point {
  std::uint64_t ns = 0;
  bool half = false;
  friend bool operator<(const Point& a, const Point& b) { return a.ns != b.ns ? a.ns < b.ns : (!a.half && b.half); }
  friend bool operator<=(const Point& a, const Point& b) { return !(b < a); }
};

// Buffers formatted events and hands full chunks to a sink.
class EventWriter {
 public:
  explicit EventWriter(std::function<bool(std::string_view)> sink) : sink_(std::move(sink)) {}

  fmt::memory_buffer& buf() { return buf_; }
  void begin_event() {
    if (events_++ > 0) buf_.append(std::string_view(",\n"));
  }
  void end_event() {
    if (buf_.size() >= kFlushBytes) flush();
  }
  void flush() {
    if (ok_ && buf_.size() > 0) ok_ = sink_(std::string_view(buf_.data(), buf_.size()));
    buf_.clear();
  }
  bool ok() const { return ok_; }
  std::size_t events() const { return events_; }

  // Microseconds with nanosecond precision, as a JSON number: 0, 1.5, 2.25, 3.001, 3.0005.
  void append_us(Point p) {
    const std::uint64_t whole = p.ns / 1000, frac = p.ns % 1000;
    auto out = std::back_inserter(buf_);
    if (p.half) {
      fmt::format_to(out, FMT_COMPILE("{}.{:04}"), whole, frac * 10 + 5);
    } else if (frac == 0) {
      fmt::format_to(out, FMT_COMPILE("{}"), whole);
    } else if (frac % 100 == 0) {
      fmt::format_to(out, FMT_COMPILE("{}.{}"), whole, frac / 100);
    } else if (frac % 10 == 0) {
      fmt::format_to(out, FMT_COMPILE("{}.{:02}"), whole, frac / 10);
    } else {
      fmt::format_to(out, FMT_COMPILE("{}.{:03}"), whole, frac);
    }
  }

 private:
  std::function<bool(std::string_view)> sink_;
  fmt::memory_buffer buf_;
  std::size_t events_ = 0;
  bool ok_ = true;
};

std::uint64_t rebase(Nanoseconds t, Nanoseconds origin) {
  return static_cast<std::uint64_t>(t) - static_cast<std::uint64_t>(origin);  // t >= origin
}

std::string_view flow_name(const Span& send) {
  if (send.action.kind == sched::ActionKind::kSendF) return "activation";
  if (send.action.kind == sched::ActionKind::kSendB) return "gradient";
  return "transfer";
}

// Devices that have spans or memory samples, in ascending order, each with its pid.
class DeviceMap {
 public:
  DeviceMap(const Timeline& tl, int first_pid) {
    const int flagged = std::clamp(tl.num_devices, 0, kMaxFlaggedDevices);
    std::vector<char> seen(static_cast<std::size_t>(flagged), 0);
    std::vector<int> others;
    auto note = [&](int d) {
      if (d >= 0 && d < flagged) {
        seen[static_cast<std::size_t>(d)] = 1;
      } else {
        others.push_back(d);
      }
    };
    for (const Span& s : tl.spans) {
      if (s.end_ns > s.start_ns) note(s.device);
    }
    for (const sched::MemorySample& m : tl.memory) note(m.device);
    std::sort(others.begin(), others.end());
    others.erase(std::unique(others.begin(), others.end()), others.end());
    for (int d = 0; d < flagged; ++d) {
      if (seen[static_cast<std::size_t>(d)] != 0) devices_.push_back(d);
    }
    devices_.insert(devices_.end(), others.begin(), others.end());
    std::sort(devices_.begin(), devices_.end());  // negatives first, then ascending
    pid_of_flagged_.assign(static_cast<std::size_t>(flagged), 0);
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      const int pid = first_pid + static_cast<int>(i);
      const int d = devices_[i];
      if (d >= 0 && d < flagged) {
        pid_of_flagged_[static_cast<std::size_t>(d)] = pid;
      } else {
        pid_of_other_[d] = pid;
      }
    }
  }
  const std::vector<int>& devices() const { return devices_; }
  int pid(int device) const {
    if (device >= 0 && static_cast<std::size_t>(device) < pid_of_flagged_.size()) {
      return pid_of_flagged_[static_cast<std::size_t>(device)];
    }
    return pid_of_other_.at(device);
  }

 private:
  std::vector<int> devices_;
  std::vector<int> pid_of_flagged_;
  std::map<int, int> pid_of_other_;
};

long long tid_of(int pid, Lane lane) { return static_cast<long long>(pid) * sched::kNumLanes + static_cast<int>(lane); }

class TimelineWriter {
 public:
  struct Drawn {
    std::uint64_t start = 0, end = 0;
    int pid = 0;
    long long tid = 0;
    bool drawn = false;
  };

  TimelineWriter(EventWriter& w, const Timeline& tl, int first_pid, std::uint64_t& next_flow_id, ChromeTraceCounts& counts,
                 const SpanPredictions* predictions)
      : w_(w), tl_(tl), devices_(tl, first_pid), next_flow_id_(next_flow_id), counts_(counts) {
    if (predictions != nullptr && predictions->size() == tl.spans.size()) predictions_ = predictions;
    origin_ = find_origin();
  }

  int num_processes() const { return static_cast<int>(devices_.devices().size()); }

  void write() {
    write_metadata();
    write_spans();
    write_flows();
    write_memory();
  }

 private:
  Nanoseconds find_origin() const {
    Nanoseconds origin = std::numeric_limits<Nanoseconds>::max();
    bool any = false;
    for (const Span& s : tl_.spans) {
      if (s.end_ns > s.start_ns) {
        origin = std::min(origin, s.start_ns);
        any = true;
      }
    }
    if (any) return origin;
    for (const sched::MemorySample& m : tl_.memory) origin = std::min(origin, m.time_ns);
    return tl_.memory.empty() ? 0 : origin;
  }

  void metadata(int pid, long long tid, std::string_view name, std::string_view arg_key, std::string_view arg_json) {
    w_.begin_event();
    fmt::format_to(std::back_inserter(w_.buf()), R"({{"ph":"M","name":"{}","pid":{},"tid":{},"args":{{"{}":{}}}}})",
                   name, pid, tid, arg_key, arg_json);
    w_.end_event();
  }

  void write_metadata() {
    // The collective lane is named only where a timeline has collectives (data parallelism).
    const bool collectives = std::any_of(tl_.spans.begin(), tl_.spans.end(),
                                         [](const Span& s) { return s.lane == Lane::kCollective; });
    for (const int d : devices_.devices()) {
      const int pid = devices_.pid(d);
      metadata(pid, 0, "process_name", "name", json_string(fmt::format("{} / device {}", tl_.name, d)));
      metadata(pid, 0, "process_sort_index", "sort_index", std::to_string(pid));
      for (int lane = 0; lane < sched::kNumLanes; ++lane) {
        const auto l = static_cast<Lane>(lane);
        if (l == Lane::kCollective && !collectives) continue;
        metadata(pid, tid_of(pid, l), "thread_name", "name", fmt::format("\"{}\"", sched::lane_name(l)));
        metadata(pid, tid_of(pid, l), "thread_sort_index", "sort_index", std::to_string(lane));
      }
    }
  }

  struct Key {
    int device;
    int lane;
    Nanoseconds start, end;
    std::uint32_t index;
    friend bool operator<(const Key& a, const Key& b) {
      if (a.device != b.device) return a.device < b.device;
      if (a.lane != b.lane) return a.lane < b.lane;
      if (a.start != b.start) return a.start < b.start;
      if (a.end != b.end) return a.end < b.end;
      return a.index < b.index;
    }
  };

  //   given:  [---a---]                 a drawn as given
  //                [---b---]            b clipped to start where a ends
  //                 [-c-]               c wholly covered: dropped
  void write_spans() {
    const auto& spans = tl_.spans;
    drawn_.assign(spans.size(), Drawn{});
    std::vector<Key> keys;
    keys.reserve(spans.size());
    for (std::size_t i = 0; i < spans.size() && i <= std::numeric_limits<std::uint32_t>::max(); ++i) {
      const Span& s = spans[i];
      if (s.end_ns > s.start_ns) {
        keys.push_back(Key{s.device, static_cast<int>(s.lane), s.start_ns, s.end_ns, static_cast<std::uint32_t>(i)});
      } else {
        ++counts_.dropped_spans;
      }
    }
    std::sort(keys.begin(), keys.end());
    for (std::size_t k = 0; k < keys.size(); ++k) {
      const Key& key = keys[k];
      const bool same_lane = k > 0 && keys[k - 1].device == key.device && keys[k - 1].lane == key.lane;
      if (!same_lane) cursor_ = std::numeric_limits<Nanoseconds>::min();
      const Nanoseconds start = std::max(key.start, cursor_);
      if (key.end <= start) {
        ++counts_.dropped_spans;
        continue;
      }
      cursor_ = key.end;
      const bool clipped = start != key.start;
      counts_.clipped_spans += clipped ? 1 : 0;
      Drawn& d = drawn_[key.index];
      d.start = rebase(start, origin_);
      d.end = rebase(key.end, origin_);
      d.pid = devices_.pid(key.device);
      d.tid = tid_of(d.pid, static_cast<Lane>(key.lane));
      d.drawn = true;
      write_span(spans[key.index], d, clipped, prediction_of(key.index));
    }
  }

  const SpanPrediction* prediction_of(std::size_t span) const {
    if (predictions_ == nullptr || !(*predictions_)[span]) return nullptr;
    return &*(*predictions_)[span];
  }

  void write_span(const Span& s, const Drawn& d, bool clipped, const SpanPrediction* prediction) {
    const std::string_view kind = sched::kind_name(s.action.kind);
    auto out = std::back_inserter(w_.buf());
    w_.begin_event();
    fmt::format_to(out, FMT_COMPILE(R"({{"ph":"X","name":"{}{}{}","cat":"{}","pid":{},"tid":{},"ts":)"), s.action.stage, kind,
                   s.action.microbatch, sched::lane_name(s.lane), d.pid, d.tid);
    w_.append_us(Point{d.start, false});
    w_.buf().append(std::string_view(",\"dur\":"));
    w_.append_us(Point{d.end - d.start, false});
    fmt::format_to(out, FMT_COMPILE(R"(,"args":{{"stage":{},"microbatch":{},"kind":"{}"{})"), s.action.stage,
                   s.action.microbatch, kind, clipped ? R"(,"clipped":true)" : "");
    if (prediction != nullptr) {
      w_.buf().append(std::string_view(",\"predicted_us\":"));
      w_.append_us(Point{static_cast<std::uint64_t>(std::max<Nanoseconds>(prediction->predicted_ns, 0)), false});
      if (std::isfinite(prediction->error)) fmt::format_to(out, R"(,"error_pct":{:.1f})", 100 * prediction->error);
    }
    w_.buf().append(std::string_view("}}"));
    w_.end_event();
  }

  // Flow ends sit in the middle of their slices; if that would put the arrow's head before its
  // tail (a receive posted long before the send), they move to the slices' inner edges instead.
  void write_flows() {
    for (const sched::Flow& f : tl_.flows) {
      if (f.send_span >= drawn_.size() || f.recv_span >= drawn_.size() || !drawn_[f.send_span].drawn ||
          !drawn_[f.recv_span].drawn) {
        ++counts_.dropped_flows;
        continue;
      }
      const Drawn& s = drawn_[f.send_span];
      const Drawn& r = drawn_[f.recv_span];
      Point from = middle(s), to = middle(r);
      if (to < from) {
        from = Point{s.start, true};
        to = Point{r.end - 1, true};
      }
      if (to < from) {
        ++counts_.dropped_flows;
        continue;
      }
      const std::uint64_t id = next_flow_id_++;
      const std::string_view name = flow_name(tl_.spans[f.send_span]);
      flow_event("s", s, from, id, name, "");
      flow_event("f", r, to, id, name, R"(,"bp":"e")");
    }
  }

  static Point middle(const Drawn& d) {
    const std::uint64_t len = d.end - d.start;
    return Point{d.start + len / 2, len % 2 == 1};
  }

  void flow_event(std::string_view ph, const Drawn& d, Point at, std::uint64_t id, std::string_view name,
                  std::string_view extra) {
    w_.begin_event();
    fmt::format_to(std::back_inserter(w_.buf()), FMT_COMPILE(R"({{"ph":"{}","name":"{}","cat":"transfer","id":{},"pid":{},"tid":{},"ts":)"),
                   ph, name, id, d.pid, d.tid);
    w_.append_us(at);
    fmt::format_to(std::back_inserter(w_.buf()), "{}}}", extra);
    w_.end_event();
  }

  // Per device in time order; samples before the origin collapse into one at ts 0 (the last of
  // them), unless a sample sits exactly at the origin.
  void write_memory() {
    std::vector<std::size_t> order(tl_.memory.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    const auto& mem = tl_.memory;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return mem[a].device != mem[b].device ? mem[a].device < mem[b].device : mem[a].time_ns < mem[b].time_ns;
    });
    for (std::size_t k = 0; k < order.size(); ++k) {
      const sched::MemorySample& m = mem[order[k]];
      const bool next_same = k + 1 < order.size() && mem[order[k + 1]].device == m.device;
      if (m.time_ns < origin_ && next_same && mem[order[k + 1]].time_ns <= origin_) continue;
      const int pid = devices_.pid(m.device);
      const std::uint64_t t = m.time_ns < origin_ ? 0 : rebase(m.time_ns, origin_);
      w_.begin_event();
      fmt::format_to(std::back_inserter(w_.buf()), R"({{"ph":"C","name":"memory","pid":{},"tid":{},"ts":)", pid,
                     tid_of(pid, Lane::kCompute));
      w_.append_us(Point{t, false});
      fmt::format_to(std::back_inserter(w_.buf()), R"(,"args":{{"bytes":{}}}}})", m.bytes);
      w_.end_event();
    }
  }

  EventWriter& w_;
  const Timeline& tl_;
  DeviceMap devices_;
  std::uint64_t& next_flow_id_;
  ChromeTraceCounts& counts_;
  Nanoseconds origin_ = 0;
  Nanoseconds cursor_ = 0;
  std::vector<Drawn> drawn_;
  const SpanPredictions* predictions_ = nullptr;
};

bool write_trace(const std::vector<const Timeline*>& timelines, std::function<bool(std::string_view)> sink,
                 ChromeTraceCounts* counts_out, const std::vector<SpanPredictions>& predictions) {
  ChromeTraceCounts counts;
  EventWriter w(std::move(sink));
  w.buf().append(std::string_view("{\"traceEvents\":[\n"));
  int next_pid = 1;
  std::uint64_t next_flow_id = 1;
  for (std::size_t i = 0; i < timelines.size(); ++i) {
    const Timeline* tl = timelines[i];
    if (tl == nullptr) continue;
    TimelineWriter tw(w, *tl, next_pid, next_flow_id, counts, i < predictions.size() ? &predictions[i] : nullptr);
    tw.write();
    next_pid += tw.num_processes();
  }
  counts.events = w.events();
  fmt::format_to(std::back_inserter(w.buf()),
                 "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{{\"generator\":\"pipeworks\",\"clipped_spans\":\"{}\","
                 "\"dropped_spans\":\"{}\",\"dropped_flows\":\"{}\"}}}}\n",
                 counts.clipped_spans, counts.dropped_spans, counts.dropped_flows);
  w.flush();
  if (counts_out != nullptr) *counts_out = counts;
  return w.ok();
}

}  // namespace

std::string chrome_trace_json(const std::vector<const sched::Timeline*>& timelines, ChromeTraceCounts* counts,
                              const std::vector<SpanPredictions>& predictions) {
  std::string out;
  std::size_t hint = 0;
  for (const sched::Timeline* tl : timelines) hint += tl == nullptr ? 0 : 256 * (tl->spans.size() + tl->memory.size());
  out.reserve(hint);
  write_trace(timelines, [&out](std::string_view chunk) {
    out.append(chunk);
    return true;
  }, counts, predictions);
  return out;
}

sched::Status write_chrome_trace(const std::string& path, const std::vector<const sched::Timeline*>& timelines,
                                 ChromeTraceCounts* counts, const std::vector<SpanPredictions>& predictions) {
  return sched::write_file_in_chunks(
      path, [&](const sched::ChunkSink& sink) { return write_trace(timelines, sink, counts, predictions); });
}

}  // namespace pipeworks::viz
