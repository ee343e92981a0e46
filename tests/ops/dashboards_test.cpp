// Grafana dashboards: schema, variables, data sources, layout.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "ops_support.hpp"

using namespace firstwork::ops;
using nlohmann::json;

namespace {

const std::string kSource = FIRSTWORK_SOURCE_DIR;

void forEachPanel(const json& panels, const std::function<void(const json&)>& f) {
  for (const auto& p : panels) {
    f(p);
    if (p.contains("panels")) forEachPanel(p["panels"], f);
  }
}

}  // namespace

TEST_CASE("dashboards have the current schema and data source and cluster variables that every panel uses",
          "[ops][dashboards]") {
  const auto files = dashboardFiles(kSource);
  REQUIRE(files.size() >= 4);
  std::set<std::string> uids;
  static const std::regex varRef(R"(\$\{?(\w+))");
  for (const auto& file : files) {
    INFO(file);
    const json d = json::parse(readFile(file));
    CHECK(d["schemaVersion"].get<int>() >= 39);
    CHECK(uids.insert(d["uid"].get<std::string>()).second);
    CHECK(d["uid"].get<std::string>().size() <= 40);
    CHECK_FALSE(d["title"].get<std::string>().empty());
    CHECK(d["id"].is_null());  // importable into any Grafana
    std::map<std::string, json> vars;
    for (const auto& v : d["templating"]["list"]) vars[v["name"].get<std::string>()] = v;
    REQUIRE(vars.count("datasource"));
    CHECK(vars["datasource"]["type"] == "datasource");
    CHECK(vars["datasource"]["query"] == "prometheus");
    REQUIRE(vars.count("cluster"));
    for (auto& [name, v] : vars) {
      if (name == "datasource") continue;
      INFO("variable " << name);
      CHECK(v["type"] == "query");
      CHECK(v["datasource"]["uid"] == "${datasource}");
      CHECK(std::regex_match(v["definition"].get<std::string>(),
                             std::regex(R"(label_values\(firstwork_\w+(\{[^}]*\})?, )" + name +
                                        R"(\))")));
      CHECK(v["query"]["query"] == v["definition"]);
      CHECK(v["includeAll"] == true);
      CHECK(v["allValue"] == ".*");  // a regex matcher: "All" also matches series without it
    }
    std::set<int> ids;
    std::set<std::string> used;
    int withTargets = 0;
    forEachPanel(d["panels"], [&](const json& p) {
      INFO("panel " << p.value("title", "?"));
      CHECK(ids.insert(p["id"].get<int>()).second);
      REQUIRE(p.contains("gridPos"));
      CHECK(p["gridPos"]["x"].get<int>() + p["gridPos"]["w"].get<int>() <= 24);
      if (p["type"] == "row") return;
      CHECK_FALSE(p.value("title", "").empty());
      CHECK_FALSE(p.value("description", "").empty());
      CHECK(p["datasource"]["uid"] == "${datasource}");
      REQUIRE(p.contains("targets"));
      ++withTargets;
      std::set<std::string> refIds;
      for (const auto& t : p["targets"]) {
        CHECK(t["datasource"]["uid"] == "${datasource}");
        CHECK(refIds.insert(t["refId"].get<std::string>()).second);
        const std::string expr = t["expr"].get<std::string>();
        for (auto it = std::sregex_iterator(expr.begin(), expr.end(), varRef);
             it != std::sregex_iterator(); ++it)
          used.insert((*it)[1].str());
      }
    });
    CHECK(withTargets >= 8);
    for (const auto& u : used) {
      INFO("expression uses $" << u);
      CHECK((u.starts_with("__") || vars.count(u)));
    }
    for (auto& [name, v] : vars) {
      INFO("variable " << name << " is used by a panel");
      CHECK((name == "datasource" || used.count(name)));
    }
    // Panels do not overlap: each grid cell belongs to at most one panel.
    std::set<std::pair<int, int>> cells;
    forEachPanel(d["panels"], [&](const json& p) {
      const auto& g = p["gridPos"];
      for (int y = g["y"].get<int>(); y < g["y"].get<int>() + g["h"].get<int>(); ++y)
        for (int x = g["x"].get<int>(); x < g["x"].get<int>() + g["w"].get<int>(); ++x) {
          INFO("panel " << p.value("title", "?") << " at " << x << "," << y);
          CHECK(cells.insert({x, y}).second);
        }
    });
  }
}
