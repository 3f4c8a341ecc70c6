// The tsan preset's check on itself: a deliberate data race in a pipeworks namespace, which
// ThreadSanitizer must report under the preset's TSAN_OPTIONS and suppressions. A build without
// -fsanitize=thread, or a suppression wide enough to hide pipeworks' own code, fails its test.
#include <thread>

namespace pipeworks::hw {
namespace {

int shared_count = 0;

// Called on two threads at once with no lock between them: the race the test expects reported.
void unsynchronized_increment() { ++shared_count; }

}  // namespace
}  // namespace pipeworks::hw

int main() {
  std::thread other(pipeworks::hw::unsynchronized_increment);
  pipeworks::hw::unsynchronized_increment();
  other.join();
  return 0;
}
