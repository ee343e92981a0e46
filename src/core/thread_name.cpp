#include "firstwork/core/thread_name.hpp"

#include <pthread.h>

namespace firstwork {

namespace {
constexpr size_t kMaxNameBytes = 15;  // TASK_COMM_LEN (16) less the terminating NUL
}

void nameThisThread(const std::string& name) {
  // Not a failure worth reporting: a name only helps a person reading the process list.
  (void)pthread_setname_np(pthread_self(), name.substr(0, kMaxNameBytes).c_str());
}

std::string thisThreadName() {
  char buf[kMaxNameBytes + 1] = {};
  if (pthread_getname_np(pthread_self(), buf, sizeof buf) != 0) return {};
  return buf;
}

}  // namespace firstwork
