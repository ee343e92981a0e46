#include <catch2/catch.hpp>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

#include "firstwork/core/thread_name.hpp"

using namespace firstwork;

namespace {
/// What the kernel shows for the calling thread (/proc/self/task/<tid>/comm, without the newline).
std::string kernelName() {
  std::ifstream in("/proc/self/task/" + std::to_string(::syscall(SYS_gettid)) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}
}  // namespace

TEST_CASE("A named thread shows its name to the process list, cut at 15 bytes", "[core][thread_name]") {
  std::string shown, kept, longShown, inherited;
  std::thread t([&] {
    nameThisThread("fw-test");
    shown = kernelName();
    kept = thisThreadName();
    std::thread child([&] { inherited = kernelName(); });
    child.join();
    nameThisThread("fw-a-name-longer-than-fifteen");
    longShown = kernelName();
  });
  t.join();
  CHECK(shown == "fw-test");
  CHECK(kept == "fw-test");
  CHECK(inherited == "fw-test");  // a thread started from a named one takes its name
  CHECK(longShown == "fw-a-name-longe");
}
