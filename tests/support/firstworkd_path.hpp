#pragma once
// Force-included (-include) into every end-to-end test binary by tests/integration/CMakeLists.txt,
// so FIRSTWORKD_PATH names the daemon the tests start.
#include <cstdlib>
#include <string>

namespace firstwork::testing {

/// The firstworkd an end-to-end test starts: $FIRSTWORK_TEST_FIRSTWORKD when set (scripts/test.sh
/// runs the ASan-built end-to-end tests against its TSan-built daemon), else the one built beside
/// the tests.
inline std::string firstworkdPath() {
  const char* env = std::getenv("FIRSTWORK_TEST_FIRSTWORKD");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(FIRSTWORKD_BUILT_PATH);
}

}  // namespace firstwork::testing

#define FIRSTWORKD_PATH (::firstwork::testing::firstworkdPath())
