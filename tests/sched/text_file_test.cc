// Whole-file reads and writes: errors name the path and the reason, a size limit is kept, and a
// failed write leaves the file that was there.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "sched/text_file.h"
#include "temp_path.h"

namespace pipeworks::sched {
namespace {

namespace fs = std::filesystem;

fs::path scratch_dir() {
  const fs::path dir = test::temp_path("text_file_test");
  fs::create_directories(dir);
  return dir;
}

std::string contents(const fs::path& path) { return read_text_file(path.string(), 1 << 20).value(); }

TEST_CASE("read_text_file: the bytes, or why not") {
  const fs::path dir = scratch_dir();
  const std::string file = (dir / "a.txt").string();
  REQUIRE(write_text_file(file, "hello\n"));
  CHECK(*read_text_file(file, 100) == "hello\n");
  CHECK(read_text_file(file, 5).error().message == file + ": larger than the limit of 5 bytes");
  CHECK(read_text_file(dir.string(), 100).error().message == dir.string() + ": is a directory, not a file");
  CHECK(read_text_file(file + ".missing", 100).error().message ==
        file + ".missing: cannot open: No such file or directory");
  fs::remove_all(dir);
}

TEST_CASE("write_text_file: a full device, a missing directory, a directory") {
  CHECK(write_text_file("/dev/full", "x").error().message == "/dev/full: cannot write: No space left on device");
  CHECK(write_text_file("/nonexistent/dir/x.json", "x").error().message ==
        "/nonexistent/dir/x.json: cannot open for writing: No such file or directory");
  const fs::path dir = scratch_dir();
  CHECK(write_text_file(dir.string(), "x").error().message == dir.string() + ": is a directory, not a file");
  CHECK(check_output_path(dir.string()).error().message == dir.string() + ": is a directory, not a file");
  CHECK(check_output_path("/nonexistent/dir/x.json").error().message ==
        "/nonexistent/dir/x.json: cannot open for writing: No such file or directory");
  CHECK(check_output_path((dir / "new.json").string()));
  CHECK(check_output_path("/dev/full"));
  fs::remove_all(dir);
}

TEST_CASE("write_file_in_chunks: a failure leaves the old file whole and no temporary behind") {
  const fs::path dir = scratch_dir();
  const fs::path file = dir / "report.json";
  REQUIRE(write_text_file(file.string(), "old contents"));
  ::chmod(file.c_str(), 0640);
  const auto failed = write_file_in_chunks(file.string(), [](const ChunkSink& sink) {
    sink("half of the new");
    return false;  // the producer gave up
  });
  REQUIRE_FALSE(failed);
  CHECK(failed.error().message == file.string() + ": the output could not be produced");
  CHECK(contents(file) == "old contents");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);

  REQUIRE(write_file_in_chunks(file.string(), [](const ChunkSink& sink) { return sink("new ") && sink("contents"); }));
  CHECK(contents(file) == "new contents");
  CHECK((fs::status(file).permissions() & fs::perms::all) ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  fs::remove_all(dir);
}

TEST_CASE("write_file_in_chunks: SIGTERM or SIGINT during the write leaves no temporary behind") {
  // In a child: the producer signals its own process halfway through; the signal takes effect
  // once the write is over (the file renamed into place), so nothing half-written stays.
  const fs::path dir = scratch_dir() / "signal";
  fs::create_directories(dir);
  for (int sig : {SIGTERM, SIGINT}) {
    const std::string file = (dir / ("out" + std::to_string(sig) + ".txt")).string();
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::signal(sig, SIG_DFL);  // Catch2's handler would report it as a failure of the child
      (void)write_file_in_chunks(file, [sig](const ChunkSink& sink) {
        return sink("first half\n") && ::kill(::getpid(), sig) == 0 && sink("second half\n");
      });
      ::_exit(0);  // not reached: the held signal ends the child when the write is done
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == sig);
    CHECK(contents(file) == "first half\nsecond half\n");
  }
  for (const auto& entry : fs::directory_iterator(dir)) CHECK(entry.path().extension() != ".tmp");
  fs::remove_all(dir);
}

TEST_CASE("write_text_file: through a link the file it names is replaced, the link stays") {
  const fs::path dir = scratch_dir();
  REQUIRE(write_text_file((dir / "target.csv").string(), "old"));
  fs::create_symlink(dir / "target.csv", dir / "link.csv");
  REQUIRE(write_text_file((dir / "link.csv").string(), "new"));
  CHECK(fs::is_symlink(dir / "link.csv"));
  CHECK(contents(dir / "target.csv") == "new");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace pipeworks::sched
