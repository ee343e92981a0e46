#pragma once
// Threads of the test process right now, from /proc/self/status (-1 when unreadable).

#include <fstream>
#include <string>

namespace firstwork::testing {

inline int processThreads() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

}  // namespace firstwork::testing
