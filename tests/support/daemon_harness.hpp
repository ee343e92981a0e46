#pragma once
// End-to-end test support: firstworkd as a child process against simulated clusters, and the
// normalised outcome of a drill, so that two runs of one scenario (fault-free and faulted,
// uninterrupted and killed) can be compared field by field. Header-only; needs cpp-httplib,
// nlohmann_json, SQLite3, firstwork::sim and firstwork::scenario.
#include <sqlite3.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "firstwork/http/httplib.hpp"
#include "firstwork/scenario/scenario.hpp"
#include "firstwork/scenario/scenario_player.hpp"
#include "firstwork/sim/api_server.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"
#include "support/test_logs.hpp"

namespace firstwork::testing {

/// GET base+path; the body ("" when there was no answer). `status` gets the HTTP status (0: none).
/// For an https base, `caPath` names the PEM file the server certificate must verify against.
inline std::string httpGet(const std::string& base, const std::string& path, int* status = nullptr,
                           const std::string& bearer = {}, const std::string& caPath = {}) {
  httplib::Client c(base);
  if (!caPath.empty()) {
    c.set_ca_cert_path(caPath.c_str());
    c.enable_server_certificate_verification(true);
  }
  c.set_connection_timeout(2);
  c.set_read_timeout(10);
  httplib::Headers h;
  if (!bearer.empty()) h.emplace("Authorization", "Bearer " + bearer);
  auto r = c.Get(path.c_str(), h);
  if (status) *status = r ? r->status : 0;
  return r ? r->body : std::string();
}

/// The URL firstworkd logs when it serves (`"listen":"http://127.0.0.1:PORT"`); "" when the
/// process exits first or `timeout` passes.
inline std::string waitForListenUrl(Subprocess& p,
                                    std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  std::string url;
  eventually(
      [&] {
        std::smatch m;
        auto out = p.output();
        static const std::regex re("\"listen\":\"(https?://127\\.0\\.0\\.1:[0-9]+)\"");
        if (std::regex_search(out, m, re)) url = m[1];
        return !url.empty() || !p.running();
      },
      timeout);
  return url;
}

/// Resident set size of `pid` in KiB (VmRSS), nullopt when it is gone.
inline std::optional<long> residentKiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return std::nullopt;
}

/// `firstworkd run --config <config>` as a child process; each life writes its own log file in
/// testLogDir(). Not thread-safe: one owner thread.
class DaemonProcess {
 public:
  DaemonProcess(std::string config, std::string logName, std::vector<std::string> extraArgs = {})
      : config_(std::move(config)), logName_(std::move(logName)), extra_(std::move(extraArgs)) {}

  /// Starts a life and waits for its listen URL. False when it exited or never served.
  bool start() {
    std::vector<std::string> argv{FIRSTWORKD_PATH, "run", "--config", config_};
    argv.insert(argv.end(), extra_.begin(), extra_.end());
    proc_ = std::make_unique<Subprocess>(argv, testLogPath(logName_));
    ++lives_;
    base_ = waitForListenUrl(*proc_);
    return !base_.empty();
  }
  /// SIGKILL and reap; true when it died of it.
  bool kill() {
    if (!proc_) return false;
    proc_->signal(SIGKILL);
    return proc_->wait(std::chrono::seconds(10)) == std::optional<int>(128 + SIGKILL);
  }
  /// SIGTERM; the exit code (nullopt when it did not exit within 30 s).
  std::optional<int> stop() {
    if (!proc_) return std::nullopt;
    proc_->signal(SIGTERM);
    return proc_->wait(std::chrono::seconds(30));
  }
  bool ready() const {
    int status = 0;
    httpGet(base_, "/readyz", &status);
    return status == 200;
  }
  const std::string& baseUrl() const { return base_; }
  pid_t pid() const { return proc_ ? proc_->pid() : -1; }
  int lives() const { return lives_; }
  /// This life's log.
  std::string log() const { return proc_ ? proc_->output() : std::string(); }
  /// The last `bytes` of this life's log, for failure messages.
  std::string logTail(size_t bytes = 6000) const {
    auto l = log();
    return l.substr(l.size() > bytes ? l.size() - bytes : 0);
  }

 private:
  std::string config_;
  std::string logName_;
  std::vector<std::string> extra_;
  std::unique_ptr<Subprocess> proc_;
  std::string base_;
  int lives_ = 0;
};

/// One simulated API server per cluster of a scenario, with kubeconfigs and a firstworkd config
/// in `dir`. With token files, each kubeconfig names a `tokenFile` (re-read by the daemon on a
/// 401), so a test can rotate tokens with writeToken() + ApiServer::rotateToken().
class SimEstate {
 public:
  struct Options {
    bool tls = true;
    bool tokenFiles = true;
    const Clock* clusterClock = nullptr;  // the servers' clock (Date headers)
    std::string tokenPrefix = "fwcanary-estate-";  // + cluster name; contains kSecretCanary
    std::string extraConfig;  // YAML appended to the generated config (top-level sections)
  };

  SimEstate(const scenario::Scenario& sc, const std::filesystem::path& dir, Options o)
      : dir_(dir), options_(std::move(o)) {
    std::string config = "clusters:\n";
    for (const auto& c : sc.clusters) {
      sim::ApiServerOptions so;
      so.name = c.name;
      so.tls = options_.tls;
      so.token = testSecret(options_.tokenPrefix + c.name);
      so.clock = options_.clusterClock;
      auto s = std::make_unique<sim::ApiServer>(so);
      s->start();
      std::string kc = s->kubeconfig(c.name);
      if (options_.tokenFiles) {
        writeToken(c.name, so.token);
        // tokenFile instead of the inline token (the sim writes `    token: "<value>"`).
        static const std::regex tokenLine("\n    token: [^\n]*\n");
        kc = std::regex_replace(kc, tokenLine, "\n    tokenFile: " + tokenPath(c.name) + "\n");
      }
      auto kcPath = (dir_ / (c.name + ".kubeconfig")).string();
      std::ofstream(kcPath) << kc;
      config += "  - name: " + c.name + "\n    role: " +
                (c.role == scenario::ClusterRole::Manager  ? "management"
                 : c.role == scenario::ClusterRole::Worker ? "worker"
                                                           : "standalone") +
                "\n    kubeconfig: " + kcPath + "\n";
      servers_.emplace(c.name, std::move(s));
    }
    config += "store:\n  path: " + storePath() + "\n";
    if (options_.extraConfig.find("server:") == std::string::npos)
      config += "server:\n  listen: 127.0.0.1:0\n";
    config += options_.extraConfig;
    std::ofstream(configPath()) << config;
  }

  std::string configPath() const { return (dir_ / "firstwork.yaml").string(); }
  std::string storePath() const { return (dir_ / "firstwork.db").string(); }
  std::string tokenPath(const std::string& cluster) const {
    return (dir_ / (cluster + ".token")).string();
  }
  /// Replaces a cluster's token file atomically (write + rename), as a kubelet-projected token.
  void writeToken(const std::string& cluster, const std::string& token) const {
    auto tmp = tokenPath(cluster) + ".tmp";
    std::ofstream(tmp) << token << "\n";
    std::filesystem::rename(tmp, tokenPath(cluster));
  }
  sim::ApiServer& server(const std::string& cluster) { return *servers_.at(cluster); }
  scenario::ServerMap serverMap() {
    scenario::ServerMap m;
    for (auto& [name, s] : servers_) m.emplace(name, std::ref(*s));
    return m;
  }
  std::vector<std::string> clusterNames() const {
    std::vector<std::string> v;
    for (const auto& [name, s] : servers_) v.push_back(name);
    return v;
  }

 private:
  std::filesystem::path dir_;
  Options options_;
  std::map<std::string, std::unique_ptr<sim::ApiServer>> servers_;
};

/// Rows of `SELECT body FROM records WHERE kind=?` (JSON bodies), read-only while the daemon
/// writes (WAL). Empty on any error.
inline std::vector<nlohmann::json> storedRecords(const std::string& db, const std::string& kind) {
  std::vector<nlohmann::json> out;
  sqlite3* h = nullptr;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(h);
    return out;
  }
  sqlite3_busy_timeout(h, 5000);
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(h, "SELECT body FROM records WHERE kind=?1", -1, &st, nullptr) == SQLITE_OK) {
    sqlite3_bind_text(st, 1, kind.c_str(), -1, SQLITE_TRANSIENT);
    while (sqlite3_step(st) == SQLITE_ROW) {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
      auto j = nlohmann::json::parse(text ? text : "", nullptr, false);
      if (!j.is_discarded()) out.push_back(std::move(j));
    }
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
  return out;
}

/// What two runs of one drill must agree on. Times are seconds from the drill start (each run
/// has its own start and cluster clock) and uids are left out (the servers assign new ones).
/// Probe incidents — the daemon's own connection, which the faults are meant to disturb — are
/// kept apart from the figures that must match.
struct DrillOutcome {
  nlohmann::json incidents = nlohmann::json::object();     // cluster/source/disconnected → figures
  nlohmann::json reclaims = nlohmann::json::object();      // preemptor → figures and victims
  nlohmann::json duplicates = nlohmann::json::object();    // workload/kind/cluster → times
  nlohmann::json timelines = nlohmann::json::object();     // workload + cycle → milestone → time
  nlohmann::json observations = nlohmann::json::object();  // histogram sample → times observed
  nlohmann::json probeIncidents = nlohmann::json::array();

  /// The figures (everything but probe incidents) as one JSON document.
  nlohmann::json figures() const {
    return {{"incidents", incidents},
            {"reclaims", reclaims},
            {"duplicates", duplicates},
            {"timelines", timelines},
            {"observations", observations}};
  }
  bool operator==(const DrillOutcome& o) const { return figures() == o.figures(); }

  /// Keys whose values differ (or exist on one side only), one line each, at most `max`.
  std::string diff(const DrillOutcome& other, size_t max = 20) const {
    std::string out;
    size_t n = 0;
    auto a = figures(), b = other.figures();
    for (auto& [section, values] : a.items()) {
      const auto& theirs = b[section];
      std::set<std::string> keys;
      for (auto& [k, v] : values.items()) keys.insert(k);
      for (auto& [k, v] : theirs.items()) keys.insert(k);
      for (const auto& k : keys) {
        auto mine = values.contains(k) ? values[k].dump() : std::string("(absent)");
        auto other2 = theirs.contains(k) ? theirs[k].dump() : std::string("(absent)");
        if (mine == other2) continue;
        if (n++ < max) out += section + " " + k + ":\n  expected " + mine + "\n  got      " + other2 + "\n";
      }
    }
    if (n > max) out += "... " + std::to_string(n - max) + " more\n";
    return out;
  }
};

namespace detail {
/// Seconds from `start` to the RFC 3339 time `t` (null stays null).
inline nlohmann::json offset(const nlohmann::json& t, SystemTime start) {
  if (!t.is_string()) return nullptr;
  auto parsed = parseRfc3339(t.get<std::string>());
  if (!parsed) return "unparsable: " + t.get<std::string>();
  return std::chrono::duration<double>(*parsed - start).count();
}
inline std::string ref(const nlohmann::json& w) {
  return w.value("cluster", "") + " " + w.value("namespace", "") + "/" + w.value("name", "");
}
}  // namespace detail

/// Reads a drill's outcome from a running daemon (`base`) and its store (`db`).
inline DrillOutcome collectOutcome(const std::string& base, const std::string& db,
                                   SystemTime drillStart, const std::string& bearer = {}) {
  using nlohmann::json;
  using detail::offset;
  DrillOutcome out;
  auto incidents = json::parse(httpGet(base, "/api/v1/incidents?limit=100000", nullptr, bearer),
                               nullptr, false);
  if (incidents.is_object())
    for (auto& i : incidents["items"]) {
      if (i.value("source", "") == "probe") {
        out.probeIncidents.push_back(i);
        continue;
      }
      std::string key = i.value("cluster", "") + "/" + i.value("source", "") + "/" +
                        offset(i["disconnected_at"], drillStart).dump();
      json v = {{"outcome", i["outcome"]},
                {"failure_reason", i["failure_reason"]},
                {"stranded_gpu_seconds", i["stranded_gpu_seconds"]},
                {"recovery_seconds", i["recovery_seconds"]},
                {"disconnected_seconds", i["disconnected_seconds"]},
                {"usable_gpus", i["usable_gpus"]},
                {"demand_gpus", i["demand_gpus"]},
                {"excluded_workloads", i["excluded_workloads"]}};
      for (const char* t : {"reconnected_at", "first_dispatched_at", "first_running_at",
                            "first_work_at", "last_productive_at", "recovered_at", "closed_at"})
        v[t] = offset(i[t], drillStart);
      out.incidents[key] = v;
    }
  auto reclaims = json::parse(httpGet(base, "/api/v1/reclaims?limit=100000", nullptr, bearer),
                              nullptr, false);
  if (reclaims.is_object())
    for (auto& r : reclaims["items"]) {
      json victims = json::object();
      for (auto& v : r["victims"])
        victims[detail::ref(v["workload"])] = {{"reason", v["reason"]},
                                               {"gpus", v["gpus"]},
                                               {"evicted_at", offset(v["evicted_at"], drillStart)},
                                               {"work_since", offset(v["work_since"], drillStart)},
                                               {"interrupted_gpu_seconds", v["interrupted_gpu_seconds"]}};
      out.reclaims[detail::ref(r["preemptor"])] = {
          {"outcome", r["outcome"]},
          {"reason", r["reason"]},
          {"cluster_queue", r["cluster_queue"]},
          {"queued_at", offset(r["queued_at"], drillStart)},
          {"first_work_at", offset(r["first_work_at"], drillStart)},
          {"reclaim_to_first_work_seconds", r["reclaim_to_first_work_seconds"]},
          {"interrupted_gpu_seconds", r["interrupted_gpu_seconds"]},
          {"victims", victims}};
    }
  auto duplicates = json::parse(httpGet(base, "/api/v1/duplicates?limit=100000", nullptr, bearer),
                                nullptr, false);
  if (duplicates.is_object())
    for (auto& d : duplicates["items"])
      out.duplicates[detail::ref(d["workload"]) + " " + d.value("kind", "") + " " +
                     d.value("cluster", "")] = {{"clusters", d["clusters"]},
                                                {"event_time", offset(d["event_time"], drillStart)}};
  const auto startMs =
      std::chrono::duration_cast<std::chrono::milliseconds>(drillStart.time_since_epoch()).count();
  for (auto& m : storedRecords(db, "milestone")) {
    // cycle_id is the cycle's queued time in Unix milliseconds: made relative like the rest.
    std::string cycle = m.value("cycle_id", "");
    double cycleOffset = cycle.empty() ? 0 : static_cast<double>(std::stoll(cycle) - startMs) / 1000.0;
    std::string key = detail::ref(m["workload"]) + " cycle@" + json(cycleOffset).dump();
    json v = {{"at", offset(m["event_time"], drillStart)}, {"signal", m["signal"]},
              {"reason", m["reason"]}, {"execution_cluster", m["execution_cluster"]},
              {"without_capacity", m["without_capacity"]}};
    out.timelines[key][m.value("milestone", "")] = v;
  }
  for (auto& o : storedRecords(db, "observation")) {
    if (o.value("source", "") == "probe") continue;
    std::string key = o.value("histogram", "") + "{" + o.value("cluster", "") + "," +
                      o.value("cluster_queue", "") + "," + o.value("stage", "") + "," +
                      o.value("reason", "") + "," + o.value("outcome", "") + "," +
                      o.value("source", "") + "} " + json(o["seconds"]).dump();
    out.observations[key] = out.observations.value(key, 0) + 1;
  }
  return out;
}

/// True when /metrics shows firstwork_watch_up 1 for every (cluster, resource) it lists, and
/// lists at least one: every watch is streaming again (after a relist where one was needed).
inline bool allWatchesUp(const std::string& metrics) {
  std::istringstream in(metrics);
  std::string line;
  int up = 0;
  while (std::getline(in, line)) {
    if (line.rfind("firstwork_watch_up{", 0) != 0) continue;
    if (line.substr(line.rfind(' ') + 1) != "1") return false;
    ++up;
  }
  return up > 0;
}

/// Polls the outcome until every watch is up and the outcome has not changed for `quiet` (the
/// daemon has caught up after the drill and its faults), at most `timeout`. Returns the last
/// outcome read.
inline DrillOutcome settledOutcome(const std::string& base, const std::string& db,
                                   SystemTime drillStart, std::chrono::milliseconds quiet,
                                   std::chrono::milliseconds timeout, bool* settled = nullptr,
                                   const std::string& bearer = {}) {
  DrillOutcome last = collectOutcome(base, db, drillStart, bearer);
  auto lastChange = std::chrono::steady_clock::now();
  const auto deadline = lastChange + timeout;
  bool ok = false;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto now = collectOutcome(base, db, drillStart, bearer);
    const bool up = allWatchesUp(httpGet(base, "/metrics"));
    if (!up || !(now == last) || now.probeIncidents != last.probeIncidents) {
      last = std::move(now);
      lastChange = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - lastChange >= quiet) {
      ok = true;
      break;
    }
  }
  if (settled) *settled = ok;
  return last;
}

}  // namespace firstwork::testing
