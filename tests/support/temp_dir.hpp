#pragma once
// A temporary directory for end-to-end tests, removed with everything in it at scope exit.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace firstwork::testing {

struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& prefix = "firstwork-it") {
    std::string tmpl = "/tmp/" + prefix + "-XXXXXX";
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// Writes `text` to `name` inside the directory; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    auto p = path / name;
    std::ofstream(p) << text;
    return p.string();
  }
};

}  // namespace firstwork::testing
