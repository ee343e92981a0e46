// A restart, even SIGKILL in the middle of a drill, loses nothing committed and never observes a
// histogram sample twice (design §7). The estate (API servers + scenario player) lives in this
// test process; firstworkd runs as a separate process that is killed and restarted on the same
// store. Its final incidents, reclaims and histogram counts must equal an uninterrupted run's.
#include <httplib.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "firstwork/core/scaled_clock.hpp"
#include "firstwork/scenario/scenario.hpp"
#include "firstwork/scenario/scenario_player.hpp"
#include "firstwork/sim/api_server.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace firstwork;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using nlohmann::json;
using firstwork::testing::eventually;
using firstwork::testing::Subprocess;
using firstwork::testing::TempDir;

namespace {

std::string get(const std::string& base, const std::string& path) {
  httplib::Client c(base);
  c.set_connection_timeout(2);
  c.set_read_timeout(10);
  auto r = c.Get(path.c_str());
  return r && r->status == 200 ? r->body : std::string();
}

/// Sum of a histogram's _count series over all label sets.
double histogramCount(const std::string& metrics, const std::string& name) {
  double sum = 0;
  std::istringstream in(metrics);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + "_count", 0) == 0) sum += std::stod(line.substr(line.rfind(' ') + 1));
  return sum;
}

int64_t storedObservations(const std::string& db) {
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return -1;
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(h, "SELECT count(*) FROM records WHERE kind='observation'", -1, &st, nullptr);
  int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
  sqlite3_finalize(st);
  sqlite3_close(h);
  return n;
}

const char* const kHistograms[] = {
    "firstwork_reservation_to_first_work_seconds", "firstwork_reclaim_to_first_work_seconds",
    "firstwork_reconnect_to_first_work_seconds",   "firstwork_stage_seconds",
    "firstwork_recovery_seconds",                  "firstwork_worker_disconnected_seconds"};

/// Records keyed by what two runs of a drill share (uids and the drill start differ per run).
struct Outcome {
  std::map<std::string, json> incidents;  // cluster/source → {outcome, stranded, recovery}
  std::map<std::string, json> reclaims;   // preemptor namespace/name → {outcome, figures}
  std::map<std::string, double> counts;   // histogram → samples observed (over all lives)
};

/// Plays `scenario` against simulated clusters watched by a firstworkd subprocess. With `kill`,
/// the daemon is SIGKILLed once an incident or reclaim is in flight and started again on the
/// same store.
Outcome play(const std::string& scenarioName, bool kill) {
  auto sc = scenario::loadScenario(std::string(FIRSTWORK_SOURCE_DIR) + "/config/scenarios/" +
                                   scenarioName + ".yaml");
  REQUIRE(sc.ok());
  TempDir dir{"firstwork-restart"};
  std::map<std::string, std::unique_ptr<sim::ApiServer>> servers;
  scenario::ServerMap map;
  std::string config = "clusters:\n";
  for (const auto& c : sc->clusters) {
    sim::ApiServerOptions o;
    o.name = c.name;
    o.token = "restart-test-" + c.name;
    auto s = std::make_unique<sim::ApiServer>(o);
    s->start();
    auto kc = (dir.path / (c.name + ".kubeconfig")).string();
    std::ofstream(kc) << s->kubeconfig(c.name);
    config += "  - name: " + c.name + "\n    role: " +
              (c.role == scenario::ClusterRole::Manager ? "management"
               : c.role == scenario::ClusterRole::Worker ? "worker"
                                                          : "standalone") +
              "\n    kubeconfig: " + kc + "\n";
    map.emplace(c.name, std::ref(*s));
    servers.emplace(c.name, std::move(s));
  }
  auto db = (dir.path / "firstwork.db").string();
  config += "store:\n  path: " + db + "\nserver:\n  listen: 127.0.0.1:0\n";
  std::ofstream(dir.path / "firstwork.yaml") << config;

  // The drill is played 120x fast with its clock set back by the drill's length, so every object
  // timestamp is in the past of the daemon's real clock (as after a telemetry gap); the figures
  // come from event times and must not depend on when they were observed.
  auto speed = 120.0;
  ScaledClock clock(speed, std::chrono::system_clock::now() - sc->duration,
                    std::chrono::steady_clock::now());
  int life = 0;
  auto start = [&] {
    auto p = std::make_unique<Subprocess>(
        std::vector<std::string>{FIRSTWORKD_PATH, "run", "--config",
                                 (dir.path / "firstwork.yaml").string()},
        (dir.path / ("daemon-" + std::to_string(life++) + ".log")).string());
    std::string base;
    eventually(
        [&] {
          std::smatch m;
          auto out = p->output();
          static const std::regex re("\"listen\":\"(http://127\\.0\\.0\\.1:[0-9]+)\"");
          if (std::regex_search(out, m, re)) base = m[1];
          return !base.empty() || !p->running();
        },
        30s);
    return std::make_pair(std::move(p), base);
  };
  auto [daemon, base] = start();
  INFO(daemon->output());
  REQUIRE(!base.empty());
  REQUIRE(eventually([&] { return !get(base, "/readyz").empty(); }, 30s));  // 200 once synced

  scenario::ScenarioPlayer player(*sc, map, clock);
  REQUIRE(player.start().ok());
  Outcome out;
  int64_t storedBeforeRestart = 0;
  if (kill) {
    // Kill once something is in flight: an incident recovering or a reclaim pending.
    bool inFlight = eventually(
        [&] {
          auto body = get(base, "/api/v1/incidents") + get(base, "/api/v1/reclaims");
          return body.find("\"recovering\"") != std::string::npos ||
                 body.find("\"pending\"") != std::string::npos;
        },
        60s);
    REQUIRE(inFlight);
    daemon->signal(SIGKILL);
    REQUIRE(daemon->wait(10s) == std::optional<int>(128 + SIGKILL));
    storedBeforeRestart = storedObservations(db);
    REQUIRE(storedBeforeRestart >= 0);
    auto restarted = start();
    daemon = std::move(restarted.first);
    base = restarted.second;
    REQUIRE(!base.empty());
  }
  REQUIRE(player.waitUntilDone(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   clock.toReal(sc->duration)) + 60s));
  // Until the figures stop changing: a few quiet polls in a row.
  std::string last, now;
  int stable = 0;
  eventually(
      [&] {
        now = get(base, "/api/v1/incidents") + get(base, "/api/v1/reclaims") +
              std::to_string(storedObservations(db));
        stable = now == last ? stable + 1 : 0;
        last = now;
        return stable >= 10;
      },
      60s);
  auto incidents = json::parse(get(base, "/api/v1/incidents?limit=100000"));
  auto reclaims = json::parse(get(base, "/api/v1/reclaims?limit=100000"));
  for (auto& i : incidents["items"])
    out.incidents[i.value("cluster", "") + "/" + i.value("source", "")] =
        json{{"outcome", i["outcome"]},
             {"stranded_gpu_seconds", i["stranded_gpu_seconds"]},
             {"recovery_seconds", i["recovery_seconds"]},
             {"disconnected_seconds", i["disconnected_seconds"]}};
  for (auto& r : reclaims["items"])
    out.reclaims[r["preemptor"].value("namespace", "") + "/" + r["preemptor"].value("name", "")] =
        json{{"outcome", r["outcome"]},
                                 {"reclaim_to_first_work_seconds", r["reclaim_to_first_work_seconds"]},
                                 {"interrupted_gpu_seconds", r["interrupted_gpu_seconds"]}};
  {
    auto log = daemon->output();
    INFO("daemon log (tail):\n" << log.substr(log.size() > 6000 ? log.size() - 6000 : 0));
    INFO("player errors: " << player.errors().size());
    CHECK((!out.incidents.empty() || !out.reclaims.empty()));
  }
  auto metrics = get(base, "/metrics");
  double total = 0;
  for (const char* h : kHistograms) {
    out.counts[h] = histogramCount(metrics, h);
    total += out.counts[h];
  }
  // What this life exported plus what the killed life had committed is every sample, once.
  out.counts["all"] = total + static_cast<double>(storedBeforeRestart);
  CHECK(static_cast<double>(storedObservations(db)) == out.counts["all"]);
  daemon->signal(SIGTERM);
  CHECK(daemon->wait(30s) == std::optional<int>(0));
  player.stop();
  return out;
}

}  // namespace

TEST_CASE("SIGKILL in the middle of the reconnection drill loses nothing and counts nothing twice",
          "[integration][restart]") {
  auto clean = play("reconnection-baseline", false);
  auto killed = play("reconnection-baseline", true);
  REQUIRE(clean.incidents.size() == 1);
  CHECK(clean.incidents.begin()->second["stranded_gpu_seconds"].get<double>() == Approx(19200));
  CHECK(killed.incidents == clean.incidents);
  CHECK(killed.reclaims == clean.reclaims);
  CHECK(killed.counts["all"] == clean.counts["all"]);
}

TEST_CASE("SIGKILL in the middle of the reclaim drill loses nothing and counts nothing twice",
          "[integration][restart]") {
  auto clean = play("reclaim", false);
  auto killed = play("reclaim", true);
  REQUIRE(clean.reclaims.size() == 4);
  for (const auto& [id, r] : clean.reclaims)
    CHECK(r["reclaim_to_first_work_seconds"].get<double>() == Approx(720));
  CHECK(killed.reclaims == clean.reclaims);
  CHECK(killed.incidents == clean.incidents);
  CHECK(killed.counts["all"] == clean.counts["all"]);
}
