#pragma once
// Helpers shared by the model tests: fixture loading and readable time/assertion helpers.
#include <catch2/catch.hpp>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "firstwork/core/rfc3339.hpp"
#include "firstwork/model/decode.hpp"

namespace firstwork::testing {

inline std::string fixturePath(const std::string& name) {
  return std::string(FIRSTWORK_TEST_FIXTURES_DIR) + "/k8s/" + name;
}

inline std::string readFixture(const std::string& name) {
  std::ifstream in(fixturePath(name), std::ios::binary);
  INFO("fixture " << fixturePath(name));
  REQUIRE(in.good());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> fixtureLines(const std::string& name) {
  std::istringstream in(readFixture(name));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

/// Decodes a single-object fixture as `T` (failing the test with the decoder's message if not).
template <typename T>
T decodeFixture(const std::string& name, model::Kind kind) {
  auto r = model::decodeObject(readFixture(name), kind);
  INFO("fixture " << name << ": " << (r ? std::string("ok") : r.error()));
  REQUIRE(r.ok());
  REQUIRE(std::holds_alternative<T>(*r));
  return std::get<T>(std::move(*r));
}

/// Decodes a JSON string as `T`.
template <typename T>
T decodeJson(const std::string& json, model::Kind kind) {
  auto r = model::decodeObject(json, kind);
  INFO(json << "\n=> " << (r ? std::string("ok") : r.error()));
  REQUIRE(r.ok());
  REQUIRE(std::holds_alternative<T>(*r));
  return std::get<T>(std::move(*r));
}

/// The decoder's error for `json`, failing the test if it decodes.
inline std::string decodeError(const std::string& json, model::Kind kind) {
  auto r = model::decodeObject(json, kind);
  INFO(json);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

inline std::string rfc(SystemTime t) { return formatRfc3339(t); }
inline std::string rfc(const std::optional<SystemTime>& t) {
  return t ? formatRfc3339(*t) : std::string("<none>");
}

/// Condition `type` of `conds` (a Condition or a Pod's or Node's BriefCondition), failing the
/// test when absent.
template <typename C>
const C& condition(const CompactVector<C>& conds, std::string_view type) {
  const C* c = model::findCondition(conds, type);
  INFO("condition " << type);
  REQUIRE(c != nullptr);
  return *c;
}

}  // namespace firstwork::testing
