// Random schedules, mutated generated schedules and random CSV bytes: validation and parsing
// always return (diagnostics or errors), never crash or hang; the sanitizer preset runs these.
#include <random>

#include <catch2/catch.hpp>

#include "sched/csv_io.h"
#include "sched/generators.h"
#include "sched/json_io.h"
#include "sched/passes.h"
#include "sched/validate.h"

using namespace pipeworks::sched;

TEST_CASE("random schedules validate without crashing", "[validate][fuzz]") {
  std::mt19937 rng(12345);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int round = 0; round < 3000; ++round) {
    Schedule s;
    s.num_stages = pick(-1, 5);
    s.num_microbatches = pick(-1, 4);
    const int devices = pick(0, 4);
    for (int i = pick(0, 6); i > 0; --i) s.placement.push_back(pick(-1, devices));
    s.programs.resize(static_cast<std::size_t>(devices));
    for (Program& p : s.programs) {
      for (int i = pick(0, 12); i > 0; --i) {
        p.push_back(Action{pick(-1, 5), kAllActionKinds[static_cast<std::size_t>(pick(0, kNumActionKinds - 1))], pick(-1, 4)});
      }
    }
    const auto diagnostics = validate(s, ValidateOptions{round % 2 == 0});
    for (const Diagnostic& d : diagnostics) {
      CHECK_FALSE(d.message.empty());
      CHECK_FALSE(render(s, d).empty());
    }
  }
}

TEST_CASE("mutated generated schedules are either valid or diagnosed", "[validate][fuzz]") {
  std::mt19937 rng(777);
  for (int round = 0; round < 400; ++round) {
    const auto kind = round % 2 == 0 ? ScheduleKind::kGPipe : ScheduleKind::kOneFOneB;
    auto s = *lower_comm(*generate(kind, ScheduleShape{4, 4, {}}));
    Program& p = s.programs[static_cast<std::size_t>(round % 4)];
    std::uniform_int_distribution<std::size_t> at(0, p.size() - 1);
    const std::size_t i = at(rng);
    const std::size_t j = at(rng);
    std::swap(p[i], p[j]);
    const auto diagnostics = validate(s);
    // A swap either keeps the schedule valid or breaks an order, a comm order or rendezvous.
    for (const Diagnostic& d : diagnostics) {
      CHECK((d.kind == DiagnosticKind::kBackwardBeforeForward || d.kind == DiagnosticKind::kCommOrder ||
             d.kind == DiagnosticKind::kDeadlock));
    }
  }
}

TEST_CASE("random bytes never crash the CSV and JSON readers", "[io][fuzz]") {
  std::mt19937 rng(99);
  const std::string alphabet = "0123456789FBIWRSEND_CVF,\"\r\n -{}[]:";
  for (int round = 0; round < 3000; ++round) {
    std::string text;
    for (int i = std::uniform_int_distribution<int>(0, 60)(rng); i > 0; --i) {
      text += alphabet[std::uniform_int_distribution<std::size_t>(0, alphabet.size() - 1)(rng)];
    }
    auto csv = parse_csv(text, "f.csv");
    if (csv) (void)validate(csv->schedule, ValidateOptions{true});
    auto json = parse_json(text, "f.json");
    if (json) (void)validate(json->schedule);
  }
}
