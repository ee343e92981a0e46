#pragma once
// Threads of the test process right now: how many (/proc/self/status, -1 when unreadable), and
// their names (/proc/self/task/<tid>/comm).

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace firstwork::testing {

inline int processThreads() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

inline std::vector<std::string> threadNames() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "comm");
    std::string name;
    if (std::getline(in, name)) names.push_back(name);
  }
  return names;
}

}  // namespace firstwork::testing
