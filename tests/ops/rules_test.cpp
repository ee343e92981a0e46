// Alert rules and their PrometheusRule: structure, runbook links, promtool test coverage.
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>
#include <set>
#include <string>

#include "ops_support.hpp"

namespace fs = std::filesystem;
using namespace firstwork::ops;

namespace {

const std::string kSource = FIRSTWORK_SOURCE_DIR;
const std::string kRules = kSource + "/deploy/rules/firstwork-alerts.yaml";

// Structural equality of two YAML trees; the first difference is described in `diff`.
bool sameNode(const YAML::Node& a, const YAML::Node& b, const std::string& path, std::string& diff) {
  if (a.Type() != b.Type()) {
    diff = path + ": node types differ";
    return false;
  }
  switch (a.Type()) {
    case YAML::NodeType::Scalar:
      if (a.Scalar() != b.Scalar()) {
        diff = path + ": \"" + a.Scalar() + "\" != \"" + b.Scalar() + "\"";
        return false;
      }
      return true;
    case YAML::NodeType::Sequence:
      if (a.size() != b.size()) {
        diff = path + ": " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " items";
        return false;
      }
      for (size_t i = 0; i < a.size(); ++i)
        if (!sameNode(a[i], b[i], path + "[" + std::to_string(i) + "]", diff)) return false;
      return true;
    case YAML::NodeType::Map:
      if (a.size() != b.size()) {
        diff = path + ": " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " keys";
        return false;
      }
      for (const auto& kv : a) {
        const std::string key = kv.first.as<std::string>();
        if (!b[key]) {
          diff = path + "." + key + ": missing";
          return false;
        }
        if (!sameNode(kv.second, b[key], path + "." + key, diff)) return false;
      }
      return true;
    default:
      return true;
  }
}

std::vector<YAML::Node> alerts() {
  std::vector<YAML::Node> out;
  for (const auto& group : YAML::LoadFile(kRules)["groups"])
    for (const auto& rule : group["rules"])
      if (rule["alert"]) out.push_back(rule);
  return out;
}

}  // namespace

TEST_CASE("sameNode tells equal YAML trees from different ones", "[ops][rules]") {
  std::string diff;
  CHECK(sameNode(YAML::Load("a: [1, {b: x}]"), YAML::Load("{a: [1, {b: x}]}"), "$", diff));
  CHECK_FALSE(sameNode(YAML::Load("a: [1, {b: x}]"), YAML::Load("a: [1, {b: y}]"), "$", diff));
  CHECK(diff == "$.a[1].b: \"x\" != \"y\"");
  CHECK_FALSE(sameNode(YAML::Load("a: 1"), YAML::Load("{a: 1, c: 2}"), "$", diff));
  CHECK_FALSE(sameNode(YAML::Load("[1, 2]"), YAML::Load("[1]"), "$", diff));
}

TEST_CASE("the PrometheusRule's spec.groups equal the rule file's groups", "[ops][rules]") {
  YAML::Node cr = YAML::LoadFile(kSource + "/deploy/base/prometheus-rule.yaml");
  CHECK(cr["apiVersion"].as<std::string>() == "monitoring.coreos.com/v1");
  CHECK(cr["kind"].as<std::string>() == "PrometheusRule");
  CHECK(cr["metadata"]["labels"]["app.kubernetes.io/name"].as<std::string>() == "firstwork");
  YAML::Node plain = YAML::LoadFile(kRules);
  std::string diff;
  INFO("re-render with: python3 scripts/render-prometheus-rule.py");
  CHECK(sameNode(plain["groups"], cr["spec"]["groups"], "groups", diff));
  INFO(diff);
  CHECK(diff.empty());
  CHECK(plain.size() == 1);  // nothing but groups
}

TEST_CASE("every alert has a severity and summary and description and an existing runbook section",
          "[ops][rules]") {
  const auto anchors = markdownAnchors(kSource + "/docs/runbook.md");
  const auto all = alerts();
  REQUIRE(all.size() >= 12);
  // Labels an annotation may name: bounded, never a workload, pod name or credential.
  const std::set<std::string> printable{"cluster", "cluster_queue", "device_class", "unit", "phase",
                                        "reason",  "driver",        "state",        "resource",
                                        "source",  "operation",     "instance"};
  static const std::regex labelRef(R"(\$labels\.(\w+))");
  std::set<std::string> names;
  for (const auto& a : all) {
    const std::string name = a["alert"].as<std::string>();
    INFO(name);
    CHECK(names.insert(name).second);
    CHECK(std::regex_match(name, std::regex("Firstwork[A-Z][A-Za-z]+")));
    REQUIRE(a["labels"]);
    const std::string severity = a["labels"]["severity"].as<std::string>("");
    CHECK((severity == "critical" || severity == "warning" || severity == "info"));
    REQUIRE(a["annotations"]);
    for (const char* key : {"summary", "description", "runbook_url"}) {
      INFO(key);
      REQUIRE(a["annotations"][key]);
      CHECK_FALSE(a["annotations"][key].as<std::string>().empty());
    }
    for (const char* key : {"summary", "description"}) {
      const std::string text = a["annotations"][key].as<std::string>();
      for (auto it = std::sregex_iterator(text.begin(), text.end(), labelRef);
           it != std::sregex_iterator(); ++it) {
        INFO("annotation " << key << " names label " << (*it)[1].str());
        CHECK(printable.count((*it)[1].str()));
      }
    }
    const std::string url = a["annotations"]["runbook_url"].as<std::string>();
    const std::string marker = "/docs/runbook.md#";
    const size_t at = url.find(marker);
    REQUIRE(at != std::string::npos);
    const std::string anchor = url.substr(at + marker.size());
    CHECK(anchor == markdownAnchor(name));
    CHECK(anchors.count(anchor));
  }
}

TEST_CASE("every alert has a promtool test where it fires and one where it stays silent",
          "[ops][rules]") {
  std::map<std::string, std::pair<int, int>> cases;  // alert -> (firing, silent)
  for (const auto& a : alerts()) cases[a["alert"].as<std::string>()] = {0, 0};
  int files = 0;
  for (const auto& e : fs::directory_iterator(kSource + "/tests/rules")) {
    if (e.path().extension() != ".yaml") continue;
    ++files;
    YAML::Node doc = YAML::LoadFile(e.path().string());
    INFO(e.path().string());
    REQUIRE(doc["rule_files"]);
    bool usesRules = false;
    for (const auto& f : doc["rule_files"])
      usesRules |= fs::equivalent(e.path().parent_path() / f.as<std::string>(), kRules);
    CHECK(usesRules);
    for (const auto& test : doc["tests"])
      for (const auto& t : test["alert_rule_test"]) {
        const std::string name = t["alertname"].as<std::string>();
        INFO(name);
        REQUIRE(cases.count(name));
        if (t["exp_alerts"] && t["exp_alerts"].size() > 0)
          ++cases[name].first;
        else
          ++cases[name].second;
      }
  }
  CHECK(files >= 2);
  for (const auto& [name, count] : cases) {
    INFO(name);
    CHECK(count.first > 0);
    CHECK(count.second > 0);
  }
}
