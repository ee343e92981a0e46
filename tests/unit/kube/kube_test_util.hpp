#pragma once
#include <algorithm>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace firstwork::testing {

/// Runs the loop until `pred` holds or `timeout` passes (bounded polling, no fixed sleeps).
/// The loop runs at least as long as the last look at `pred` took: a costly predicate cannot
/// starve it (one that took a third of a second left the loop 2 ms of each, the client's stall
/// timeout fired, and under ASan a watch never converged).
template <typename Pred>
bool runUntil(boost::asio::io_context& io, Pred pred,
              std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) {
  auto guard = boost::asio::make_work_guard(io);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto looked = std::chrono::steady_clock::now();
    if (pred()) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now > deadline) return false;
    io.restart();
    io.run_for(
        std::max<std::chrono::steady_clock::duration>(std::chrono::milliseconds(2), now - looked));
  }
}

/// Runs whatever is ready now, without waiting.
inline void drain(boost::asio::io_context& io) {
  io.restart();
  io.poll();
}

/// A scratch directory removed at the end of the test.
struct TempDir {
  TempDir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() /
           ("fw-kube-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::string write(const std::string& name, const std::string& content) const {
    auto p = path / name;
    std::filesystem::create_directories(p.parent_path());
    // Write then rename, so a reader never sees a half-written file.
    auto tmp = p;
    tmp += ".tmp";
    { std::ofstream(tmp, std::ios::binary) << content; }
    std::filesystem::rename(tmp, p);
    return p.string();
  }
  std::string read(const std::string& name) const {
    std::ifstream in(path / name, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::filesystem::path path;
};

}  // namespace firstwork::testing
