#pragma once
// Where end-to-end tests keep the logs of the processes they run, and the secrets they use.
//
// Every firstworkd a test starts writes its log into testLogDir() and the file stays there after
// the test, so the suite's last test ("security: no test secret in any log", tests/security)
// can read every line the suite produced and look for the secrets. Secrets made with
// testSecret() carry kSecretCanary, so that scan finds any of them, whatever test made it.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>

namespace firstwork::testing {

/// Marker inside every test secret (tokens, keys, exec-plugin output).
inline constexpr std::string_view kSecretCanary = "fwcanary";

/// $FIRSTWORK_TEST_LOG_DIR, else the build tree's test-logs/ (compile definition), created.
inline std::filesystem::path testLogDir() {
  const char* env = std::getenv("FIRSTWORK_TEST_LOG_DIR");
#ifdef FIRSTWORK_TEST_LOG_DIR
  std::filesystem::path dir = env != nullptr && *env != '\0' ? env : FIRSTWORK_TEST_LOG_DIR;
#else
  std::filesystem::path dir =
      env != nullptr && *env != '\0' ? env : std::filesystem::temp_directory_path() / "firstwork-test-logs";
#endif
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return dir;
}

/// A fresh log file path in testLogDir(): `<name>-<pid>-<n>.log`.
inline std::string testLogPath(std::string_view name) {
  static std::atomic<int> counter{0};
  std::string file(name);
  file += "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter) + ".log";
  return (testLogDir() / file).string();
}

/// A secret for a test: `fwcanary-<what>-<16 random hex>`.
inline std::string testSecret(std::string_view what) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(rng()));
  return std::string(kSecretCanary) + "-" + std::string(what) + "-" + hex;
}

}  // namespace firstwork::testing
