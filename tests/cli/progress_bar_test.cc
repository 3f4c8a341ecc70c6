// The progress bar's text, and that a disabled bar (stderr not a terminal) writes nothing.
#include <cstdio>
#include <string>

#include <catch2/catch.hpp>

#include "cli/progress_bar.h"

using pipeworks::cli::ProgressBar;

namespace {
std::string contents(std::FILE* file) {
  std::rewind(file);
  std::string text;
  for (int c = std::fgetc(file); c != EOF; c = std::fgetc(file)) text += static_cast<char>(c);
  return text;
}
}  // namespace

TEST_CASE("the progress bar renders done of total with a percentage", "[cli][progress]") {
  CHECK(ProgressBar::render("sweep", 0, 1024) == "sweep [....................]    0/1024   0%");
  CHECK(ProgressBar::render("sweep", 512, 1024) == "sweep [##########..........]  512/1024  50%");
  CHECK(ProgressBar::render("sweep", 1024, 1024) == "sweep [####################] 1024/1024 100%");
  CHECK(ProgressBar::render("plan", 7, 4, 4) == "plan [####] 4/4 100%");
  CHECK(ProgressBar::render("plan", 0, 0, 4) == "plan [####] 0/0 100%");
}

TEST_CASE("a disabled progress bar writes nothing, an enabled one redraws and clears", "[cli][progress]") {
  std::FILE* quiet_file = std::tmpfile();
  REQUIRE(quiet_file != nullptr);
  ProgressBar quiet("sweep", 10, quiet_file, false);
  for (std::size_t i = 1; i <= 10; ++i) quiet.update(i);
  quiet.finish();
  CHECK(contents(quiet_file).empty());
  std::fclose(quiet_file);

  std::FILE* shown_file = std::tmpfile();
  REQUIRE(shown_file != nullptr);
  ProgressBar shown("sweep", 2, shown_file, true);
  shown.update(1);
  shown.update(2);  // completion always draws, however soon after the last draw
  shown.finish();
  const std::string line = ProgressBar::render("sweep", 1, 2);
  const std::string done = ProgressBar::render("sweep", 2, 2);
  CHECK(contents(shown_file) == "\r" + line + "\r" + done + "\r" + std::string(done.size(), ' ') + "\r");
  std::fclose(shown_file);
}
