// Runs a libFuzzer harness without libFuzzer, so that its corpus is an ordinary test under any
// compiler: each argument is a file or a folder of files, each file one input to
// LLVMFuzzerTestOneInput, in sorted order. An input that breaks a property (abort), crashes, or
// runs longer than kSecondsPerInput (a hang) fails the run, naming the input.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

constexpr unsigned kSecondsPerInput = 30;

// The input being run, for the signal handler (which may only call async-signal-safe functions).
char g_current[4096] = "";

void write_stderr(const char* text) {
  const ssize_t ignored = write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

extern "C" void on_fatal_signal(int sig) {
  write_stderr(sig == SIGALRM ? "replay: timed out (a hang?) on input " : "replay: failed on input ");
  write_stderr(g_current);
  write_stderr("\n");
  if (sig == SIGALRM) _exit(124);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

std::vector<std::filesystem::path> inputs_of(const std::vector<std::string>& args) {
  std::vector<std::filesystem::path> files;
  for (const std::string& arg : args) {
    const std::filesystem::path path(arg);
    if (std::filesystem::is_directory(path)) {
      std::vector<std::filesystem::path> here;
      for (const auto& entry : std::filesystem::directory_iterator(path)) {
        if (entry.is_regular_file()) here.push_back(entry.path());
      }
      std::sort(here.begin(), here.end());
      files.insert(files.end(), here.begin(), here.end());
    } else {
      files.push_back(path);
    }
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  for (const int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGALRM}) std::signal(sig, on_fatal_signal);
  const std::vector<std::filesystem::path> files = inputs_of(std::vector<std::string>(argv + 1, argv + argc));
  for (const std::filesystem::path& file : files) {
    std::snprintf(g_current, sizeof g_current, "%s", file.c_str());
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
      return 1;
    }
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    alarm(kSecondsPerInput);
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    alarm(0);
  }
  std::printf("replay: %zu inputs, every property held\n", files.size());
  return files.empty() ? 1 : 0;  // an empty corpus tests nothing: treat it as a mistake
}
