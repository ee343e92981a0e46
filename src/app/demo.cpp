// `firstworkd demo`: the embedded default. A manager and two worker clusters run in-process as
// real Kubernetes API test servers over HTTPS on loopback; the daemon watches them through its
// real code path (curl streams, decoders, engine, store, exporter) while the scenario player acts
// out the drills of design §5. With --once the stated figures of every drill are checked.
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <tuple>
#include <thread>

#include "firstwork/app/commands.hpp"
#include "firstwork/app/daemon.hpp"
#include "firstwork/config/cli.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "firstwork/core/scaled_clock.hpp"
#include "firstwork/http/httplib.hpp"
#include "firstwork/kube/kubeconfig.hpp"
#include "firstwork/log/log.hpp"
#include "firstwork/scenario/scenario.hpp"
#include "firstwork/scenario/scenario_player.hpp"
#include "firstwork/sim/api_server.hpp"
#include "detail/demo_support.hpp"

namespace firstwork::app {

std::vector<std::pair<std::string, std::string>> embeddedScenarios();  // generated

namespace {

using nlohmann::json;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

/// Polls SIGINT/SIGTERM (blocked in every thread by main) without blocking for long.
bool signalled(std::chrono::milliseconds wait) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  timespec ts{static_cast<time_t>(wait.count() / 1000),
              static_cast<long>((wait.count() % 1000) * 1000000)};
  return sigtimedwait(&set, nullptr, &ts) > 0;
}

config::ClusterRole roleOf(scenario::ClusterRole r) {
  switch (r) {
    case scenario::ClusterRole::Manager:
      return config::ClusterRole::Management;
    case scenario::ClusterRole::Worker:
      return config::ClusterRole::Worker;
    case scenario::ClusterRole::Standalone:
      break;
  }
  return config::ClusterRole::Standalone;
}

/// Reads the daemon's API like an operator would, over HTTP.
class ApiReader {
 public:
  explicit ApiReader(const std::string& baseUrl) : client_(baseUrl) {
    client_.set_connection_timeout(5);
    client_.set_read_timeout(10);
  }
  json items(const std::string& path) {
    auto res = client_.Get(("/api/v1/" + path).c_str());
    if (!res || res->status != 200) return json::array();
    auto j = json::parse(res->body, nullptr, false);
    if (j.is_discarded() || !j.contains("items")) return json::array();
    return j["items"];
  }
  std::string metrics() {
    auto res = client_.Get("/metrics");
    return res && res->status == 200 ? res->body : std::string();
  }

 private:
  httplib::Client client_;
};

/// Sum of the samples of `name` whose labels include every `label="value"` in `labels`.
double metricSum(const std::string& text, const std::string& name,
                 const std::vector<std::string>& labels) {
  double sum = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    if (line.empty() || line[0] == '#') continue;
    if (line.substr(0, name.size()) != name) continue;
    if (line.size() > name.size() && line[name.size()] != '{' && line[name.size()] != ' ') continue;
    bool all = true;
    for (const auto& l : labels) all = all && line.find(l) != std::string_view::npos;
    if (!all) continue;
    auto sp = line.rfind(' ');
    if (sp == std::string_view::npos) continue;
    sum += std::strtod(std::string(line.substr(sp + 1)).c_str(), nullptr);
  }
  return sum;
}

using detail::minutes;
using detail::near;
using detail::nearObserved;
using detail::withinProbeRounding;
using detail::nestedText;
using detail::numberOf;
using detail::timeOf;

struct CheckResult {
  std::vector<std::string> lines;
  int failures = 0;
  void add(bool ok, const std::string& what) {
    lines.push_back(std::string(ok ? "  ok        " : "  MISMATCH  ") + what);
    if (!ok) ++failures;
  }
};

/// The per-class figures of an incident, each in its own unit (docs/metrics.md).
void checkIncidentClasses(const scenario::ExpectedIncident& e, const json& incident,
                          const std::string& label, CheckResult& r) {
  const json empty = json::array();
  const json& classes = incident.contains("classes") ? incident["classes"] : empty;
  for (const auto& c : e.classes) {
    const json* found = nullptr;
    for (const auto& x : classes)
      if (x.value("device_class", "") == c.deviceClass && x.value("unit", "") == c.unit) found = &x;
    auto what = fmt::format("{}: {} ({})", label, c.deviceClass, c.unit);
    if (!found) {
      r.add(false, what + ": not reported");
      continue;
    }
    auto figure = [&](const char* key, std::optional<double> expected, const char* unitWord) {
      if (!expected) return;
      double v = found->value(key, -1.0);
      r.add(near(v, *expected), fmt::format("{}: {} {:.0f} {} (expected {:.0f})", what, key, v,
                                            unitWord, *expected));
    };
    figure("stranded_seconds", c.strandedSeconds, (c.unit + "-seconds").c_str());
    figure("usable", c.usable, c.unit.c_str());
    figure("demand", c.demand, c.unit.c_str());
    figure("unusable_for_backlog_seconds", c.unusableForBacklogSeconds, (c.unit + "-seconds").c_str());
    if (!c.physicalUnit.empty()) {
      r.add(found->value("physical_unit", "") == c.physicalUnit,
            fmt::format("{}: devices behind the shares in unit {} (expected {})", what,
                        found->value("physical_unit", ""), c.physicalUnit));
      figure("physical_stranded_seconds", c.physicalStrandedSeconds, (c.physicalUnit + "-seconds").c_str());
      figure("physical_usable", c.physicalUsable, c.physicalUnit.c_str());
    }
  }
}

/// Compares the daemon's view of one play-through with the figures the scenario file states.
CheckResult checkScenario(const scenario::Scenario& sc, SystemTime start, ApiReader& api,
                          const std::string& metricsBefore, double speed) {
  CheckResult r;
  const auto& ex = sc.expected;
  auto at = [&](scenario::Offset o) { return start + o; };
  auto incidents = api.items("incidents?limit=100000");
  for (const auto& e : ex.incidents) {
    const json* found = nullptr;
    for (const auto& i : incidents) {
      auto rec = timeOf(i, "reconnected_at");
      if (i.value("cluster", "") == e.cluster && i.value("source", "") == e.source && rec &&
          std::chrono::abs(*rec - at(e.reconnectedAt)) <= 1s)
        found = &i;
    }
    auto label = fmt::format("incident {} ({}) reconnected at +{}", e.cluster, e.source,
                             scenario::formatOffset(e.reconnectedAt));
    if (!found) {
      r.add(false, label + ": not reported");
      continue;
    }
    double s = (*found).value("stranded_gpu_seconds", -1.0);
    r.add(near(s, e.strandedGpuSeconds),
          fmt::format("{}: {:.1f} GPU-minutes stranded (expected {:.1f})", label, s / 60,
                      e.strandedGpuSeconds / 60));
    if (!e.outcome.empty())
      r.add((*found).value("outcome", "") == e.outcome,
            fmt::format("{}: outcome {} (expected {})", label, (*found).value("outcome", ""),
                        e.outcome));
    checkIncidentClasses(e, *found, label, r);
  }
  if (ex.states("incidents") && ex.incidents.empty()) {
    int n = 0;
    for (const auto& i : incidents) {
      auto d = timeOf(i, "disconnected_at");
      if (i.value("source", "") == "multikueue" && d && *d >= start && *d < at(sc.duration)) ++n;
    }
    r.add(n == 0, fmt::format("no reconnection incident (found {})", n));
  }
  auto reclaims = api.items("reclaims?limit=100000");
  for (const auto& e : ex.reclaims) {
    auto slash = e.preemptor.find('/');
    std::string ns = e.preemptor.substr(0, slash), name = e.preemptor.substr(slash + 1);
    const json* found = nullptr;
    for (const auto& c : reclaims) {
      auto q = timeOf(c, "queued_at");
      if (nestedText(c, "preemptor", "namespace") == ns && nestedText(c, "preemptor", "name") == name &&
          q && std::chrono::abs(*q - at(e.queuedAt)) <= 1s)
        found = &c;
    }
    auto label = fmt::format("reclaim by {}", e.preemptor);
    if (!found) {
      r.add(false, label + ": not reported");
      continue;
    }
    double secs = numberOf(*found, "reclaim_to_first_work_seconds").value_or(-1);
    r.add(near(secs, e.reclaimToFirstWorkSeconds),
          fmt::format("{}: first work {:.1f} min after submission (expected {:.1f})", label,
                      secs / 60, e.reclaimToFirstWorkSeconds / 60));
    double lost = (*found).value("interrupted_gpu_seconds", -1.0);
    r.add(near(lost, e.interruptedGpuSeconds),
          fmt::format("{}: {:.1f} interrupted GPU-minutes (expected {:.1f})", label, lost / 60,
                      e.interruptedGpuSeconds / 60));
  }
  auto duplicates = api.items("duplicates?limit=100000");
  for (const auto& e : ex.duplicates) {
    bool found = false;
    for (const auto& d : duplicates) {
      auto w = d["workload"];
      found = found || (w.value("namespace", "") + "/" + w.value("name", "")) == e.workload;
    }
    r.add(found, fmt::format("duplicate execution of {}", e.workload));
  }
  auto now = api.metrics();
  // The estate as it stands when the drill ends, per device class and unit.
  for (const auto& e : ex.gpusAtEnd) {
    std::vector<std::string> labels{"cluster=\"" + e.cluster + "\"", "device_class=\"" + e.deviceClass + "\"",
                                    "unit=\"" + e.unit + "\"", "state=\"" + e.state + "\""};
    double n = metricSum(now, "firstwork_gpus", labels);
    r.add(n == e.value, fmt::format("firstwork_gpus{{{}}} = {:.0f} at the end (expected {:.0f})",
                                    fmt::join(labels, ","), n, e.value));
  }
  for (const auto& e : ex.stuck) {
    if (e.until) continue;  // only still-stuck workloads are visible at the end of the drill
    double n = metricSum(now, "firstwork_stuck_workloads",
                         {"reason=\"" + e.reason + "\"", "cluster_queue=\"" + e.clusterQueue + "\""});
    r.add(n >= 1, fmt::format("stuck workload {} reason {} (gauge {})", e.workload, e.reason, n));
  }
  // Work lost to evictions: the counter's increase over this play-through, per queue and reason.
  std::map<std::tuple<std::string, std::string, std::string>, double> lost;
  for (const auto& e : ex.interruptions) lost[{e.cluster, e.clusterQueue, e.reason}] += e.gpuSeconds;
  for (const auto& [key, secs] : lost) {
    auto [cluster, cq, reason] = key;
    std::vector<std::string> labels{"cluster_queue=\"" + cq + "\"", "reason=\"" + reason + "\""};
    double n = metricSum(now, "firstwork_interrupted_gpu_seconds_total", labels) -
               metricSum(metricsBefore, "firstwork_interrupted_gpu_seconds_total", labels);
    r.add(near(n, secs), fmt::format("interrupted work in {} ({}): {:.1f} GPU-minutes (expected "
                                     "{:.1f})", cq, reason, n / 60, secs / 60));
  }
  // Latency histograms: count and sum increases per label set (a file may state several
  // groups of samples with the same labels).
  std::map<std::pair<std::string, std::vector<std::string>>, std::pair<int, double>> latencies;
  for (const auto& e : ex.latencies) {
    std::vector<std::string> labels;
    if (!e.cluster.empty()) labels.push_back("cluster=\"" + e.cluster + "\"");
    if (!e.clusterQueue.empty()) labels.push_back("cluster_queue=\"" + e.clusterQueue + "\"");
    if (!e.stage.empty()) labels.push_back("stage=\"" + e.stage + "\"");
    if (!e.reason.empty()) labels.push_back("reason=\"" + e.reason + "\"");
    if (!e.outcome.empty()) labels.push_back("outcome=\"" + e.outcome + "\"");
    if (!e.source.empty()) labels.push_back("source=\"" + e.source + "\"");
    auto& [count, sum] = latencies[{"firstwork_" + e.metric, labels}];
    count += e.count;
    sum += e.count * e.seconds;
  }
  for (const auto& [key, expected] : latencies) {
    const auto& [name, labels] = key;
    double count = metricSum(now, name + "_count", labels) -
                   metricSum(metricsBefore, name + "_count", labels);
    double sum = metricSum(now, name + "_sum", labels) - metricSum(metricsBefore, name + "_sum", labels);
    bool probe = std::find(labels.begin(), labels.end(), "source=\"probe\"") != labels.end();
    bool sumOk = probe ? withinProbeRounding(sum, expected.second, speed * expected.first)
                       : near(sum, expected.second);
    r.add(count == expected.first && sumOk,
          fmt::format("{}{{{}}}: {} samples summing to {:.0f} s (expected {} summing to {:.0f} s)",
                      name, fmt::join(labels, ","), count, sum, expected.first, expected.second));
  }
  // DRA pool-seconds incomplete or stale, per (cluster, driver) as the counter is labelled.
  std::map<std::pair<std::string, std::string>, double> poolSeconds;
  for (const auto& e : ex.pools) poolSeconds[{e.cluster, e.driver}] += e.incompleteSeconds;
  for (const auto& [key, secs] : poolSeconds) {
    std::vector<std::string> labels{"cluster=\"" + key.first + "\"", "driver=\"" + key.second + "\""};
    double n = metricSum(now, "firstwork_dra_pool_incomplete_seconds_total", labels) -
               metricSum(metricsBefore, "firstwork_dra_pool_incomplete_seconds_total", labels);
    // Integrated over the daemon's observation times, not object timestamps (nearObserved).
    r.add(nearObserved(n, secs, speed),
          fmt::format("DRA pools of {} on {} incomplete or stale {:.0f} pool-seconds "
                      "(expected {:.0f})",
                      key.second, key.first, n, secs));
  }
  // Outages by source (a probe outage is a telemetry gap, reported as a probe incident).
  for (const auto& e : ex.outages) {
    bool found = false;
    for (const auto& i : incidents) {
      auto d = timeOf(i, "disconnected_at");
      auto secs = numberOf(i, "disconnected_seconds");  // null while open or of unknown start
      if (i.value("cluster", "") == e.cluster && i.value("source", "") == e.source && d && secs &&
          *d >= start - 1s && *d <= at(sc.duration))
        found = found || withinProbeRounding(*secs, e.seconds, speed);
    }
    r.add(found, fmt::format("{} outage of {} lasting {:.0f} s", e.source, e.cluster, e.seconds));
  }
  std::map<std::pair<std::string, std::string>, int> noCapacity;
  for (const auto& e : ex.reservationsWithoutCapacity) ++noCapacity[{e.cluster, e.deviceClass}];
  for (const auto& [key, count] : noCapacity) {
    std::vector<std::string> labels{"device_class=\"" + key.second + "\""};
    double n = metricSum(now, "firstwork_reservations_without_capacity_total", labels) -
               metricSum(metricsBefore, "firstwork_reservations_without_capacity_total", labels);
    r.add(n >= count, fmt::format("{} reservation(s) without capacity on {} {} (counted {})",
                                  count, key.first, key.second, n));
  }
  return r;
}

/// Deletes every object of every resource, so the next drill starts from an empty estate.
void clearServer(sim::ApiServer& server) {
  for (const char* resource : {"pods", "workloads", "resourceclaims", "resourceslices", "nodes",
                               "multikueueclusters", "clusterqueues", "admissionchecks",
                               "multikueueconfigs"}) {
    for (const auto& text : server.objects(resource)) {
      auto j = json::parse(text, nullptr, false);
      if (j.is_discarded()) continue;
      server.remove(resource, j["metadata"].value("namespace", ""),
                    j["metadata"].value("name", ""));
    }
  }
}

/// Prints a line for each incident and reclaim that closes, while drills play.
class LiveSummary {
 public:
  LiveSummary(const std::string& baseUrl, std::ostream& out) : api_(baseUrl), out_(out) {}
  void poll() {
    for (const auto& i : api_.items("incidents?limit=100000")) {
      auto outcome = i.value("outcome", "");
      if (outcome != "recovered" && outcome != "failed") continue;
      if (!seen_.insert("i/" + i.value("id", "")).second) continue;
      if (i.value("source", "") == "probe") {
        out_ << fmt::format("[telemetry gap] {}: firstwork's own connection was down {}\n",
                            i.value("cluster", ""), minutes(numberOf(i, "disconnected_seconds")));
        continue;
      }
      auto rec = timeOf(i, "reconnected_at");
      auto fw = timeOf(i, "first_work_at");
      std::string first = minutes(rec && fw ? std::optional(toSeconds(*fw - *rec)) : std::nullopt);
      // Stranded minutes per device class, each in its own unit (never added up).
      std::vector<std::string> units;
      if (i.contains("classes") && i["classes"].is_array()) {
        for (const auto& c : i["classes"]) {
          double secs = c.value("stranded_seconds", 0.0);
          double physical = c.value("physical_stranded_seconds", 0.0);
          if (secs <= 0 && physical <= 0) continue;
          std::string part = fmt::format("{} {:.1f} {}-min", c.value("device_class", ""), secs / 60,
                                         c.value("unit", ""));
          if (c.contains("physical_unit"))
            part += fmt::format(" ({:.1f} {}-min behind them)", physical / 60, c.value("physical_unit", ""));
          units.push_back(std::move(part));
        }
      }
      out_ << fmt::format(
          "[incident] {} {}: {:.1f} GPU-minutes stranded after reconnection{}, first useful work "
          "after {}, recovered in {}\n",
          i.value("cluster", ""), outcome, i.value("stranded_gpu_seconds", 0.0) / 60,
          units.empty() ? std::string() : fmt::format(" [{}]", fmt::join(units, "; ")), first,
          minutes(numberOf(i, "recovery_seconds")));
    }
    for (const auto& c : api_.items("reclaims?limit=100000")) {
      auto outcome = c.value("outcome", "");
      if (outcome == "pending" || !seen_.insert("r/" + c.value("id", "")).second) continue;
      out_ << fmt::format("[reclaim] {} by {}/{}: first useful work {} after submission, {:.1f} "
                          "GPU-minutes of victims' work interrupted\n",
                          outcome, nestedText(c, "preemptor", "namespace"),
                          nestedText(c, "preemptor", "name"),
                          minutes(numberOf(c, "reclaim_to_first_work_seconds")),
                          c.value("interrupted_gpu_seconds", 0.0) / 60);
    }
    out_.flush();
  }

 private:
  ApiReader api_;
  std::ostream& out_;
  std::set<std::string> seen_;
};

}  // namespace

int runDemo(const config::DemoArgs& args, std::ostream& out, std::ostream& err) {
  log::configure({args.logLevel.value_or(log::Level::Warn), false, ""});

  // --scenario a,b,c plays those in that order; without it every scenario plays, the headline
  // drills first (design §5's worked examples), so a new user sees recoveries and reclaims within
  // the first minute, the rest in name order.
  std::vector<std::string> wanted;
  for (size_t pos = 0; !args.scenario.empty() && pos <= args.scenario.size();) {
    size_t comma = std::min(args.scenario.find(',', pos), args.scenario.size());
    wanted.push_back(args.scenario.substr(pos, comma - pos));
    pos = comma + 1;
  }
  if (wanted.empty())
    wanted = {"reconnection-baseline", "reconnection-improved", "reclaim", "reclaim-improved"};
  auto embedded = embeddedScenarios();
  std::vector<std::string> names;
  for (const auto& [name, yaml] : embedded) names.push_back(name);
  std::vector<std::string> order;
  for (const auto& w : wanted) {
    if (std::find(names.begin(), names.end(), w) == names.end()) {
      err << "demo: unknown scenario \"" << w << "\"; available: "
          << fmt::format("{}", fmt::join(names, ", ")) << "\n";
      return config::kExitUsage;
    }
    if (std::find(order.begin(), order.end(), w) == order.end()) order.push_back(w);
  }
  if (args.scenario.empty())
    for (const auto& n : names)
      if (std::find(order.begin(), order.end(), n) == order.end()) order.push_back(n);
  std::vector<scenario::Scenario> scenarios;
  for (const auto& name : order) {
    auto it = std::find_if(embedded.begin(), embedded.end(),
                           [&](const auto& e) { return e.first == name; });
    auto sc = scenario::loadScenarioFromString(it->second, name + ".yaml");
    if (!sc.ok()) {
      err << "demo: embedded scenario " << name << " does not load:\n" << sc.error() << "\n";
      return config::kExitFailure;
    }
    scenarios.push_back(std::move(*sc));
  }

  // One simulated API server per cluster named by any scenario.
  std::map<std::string, scenario::ScenarioCluster> clusters;
  for (const auto& sc : scenarios)
    for (const auto& c : sc.clusters) clusters.try_emplace(c.name, c);
  std::map<std::string, std::unique_ptr<sim::ApiServer>> servers;
  scenario::ServerMap serverMap;
  for (const auto& [name, c] : clusters) {
    sim::ApiServerOptions o;
    o.tls = true;
    o.name = name;
    o.token = "demo-" + name + "-token";
    auto s = std::make_unique<sim::ApiServer>(o);
    s->start();
    serverMap.emplace(name, std::ref(*s));
    servers.emplace(name, std::move(s));
  }

  char tmpl[] = "/tmp/firstwork-demo-XXXXXX";
  if (!mkdtemp(tmpl)) {
    err << "demo: cannot create a temporary directory\n";
    return config::kExitFailure;
  }
  fs::path dir = tmpl;

  // With --start the simulated clock begins at a given time and every drill at a fixed offset
  // from it, so event times repeat from run to run. Between drills: a few real seconds of slack
  // for the daemon to settle and the estate to be cleared, and room for the next drill's history
  // (steps before its start, e.g. jobs running since -30m), so that no two drills claim the same
  // cluster at the same event time.
  ScaledClock clock = args.start ? ScaledClock(args.speed, *args.start,
                                               std::chrono::steady_clock::now())
                                 : ScaledClock(args.speed);
  const auto slack = std::chrono::ceil<std::chrono::minutes>(
      std::max<std::chrono::duration<double>>(std::chrono::minutes(2),
                                              std::chrono::duration<double>(3.0 * args.speed)));
  std::optional<SystemTime> previousEnd;
  auto scheduledStart = [&](const scenario::Scenario& sc) -> std::optional<SystemTime> {
    if (!args.start) return std::nullopt;
    if (!previousEnd) return *args.start + slack;
    scenario::Offset history{0};
    for (const auto& step : sc.steps) history = std::max(history, -step.at);
    return *previousEnd + std::max<SystemTime::duration>(
                              slack, std::chrono::duration_cast<SystemTime::duration>(history));
  };
  ScaledWallClock daemonClock(clock);
  DaemonOptions opts;
  opts.clock = &daemonClock;
  opts.tickInterval = 100ms;
  opts.stallTimeout = 30s;
  // Retries fast, so that its time-scaled drills see reconnections promptly.
  opts.config.watch.backoffInitial = 50ms;
  opts.config.watch.backoffMax = 250ms;
  opts.config.store.path = args.store.value_or((dir / "firstwork.db").string());
  opts.config.server.listen = args.listen.value_or("127.0.0.1:9500");
  for (const auto& [name, c] : clusters) {
    config::ClusterConfig cc;
    cc.name = name;
    cc.role = roleOf(c.role);
    cc.kubeconfig = (dir / (name + ".kubeconfig")).string();
    if (cc.role == config::ClusterRole::Worker)
      cc.multiKueueClusterName = c.multikueueCluster.empty() ? name : c.multikueueCluster;
    auto rest = kube::loadKubeconfigFromString(servers[name]->kubeconfig(name), "", dir.string(),
                                               name + " (simulated)");
    if (!rest.ok()) {
      err << "demo: " << rest.error() << "\n";
      return config::kExitFailure;
    }
    opts.restConfigs.emplace(name, *rest);
    opts.config.clusters.push_back(cc);
  }

  int exitCode = config::kExitOk;
  {
    Daemon daemon(std::move(opts));
    if (auto s = daemon.start(); !s) {
      err << "demo: cannot start the daemon:\n" << s.error() << "\n";
      fs::remove_all(dir);
      return config::kExitFailure;
    }
    auto base = daemon.baseUrl();
    out << "firstwork demo: a simulated manager and " << (clusters.size() - 1)
        << " worker clusters, drills at " << args.speed << "x\n"
        << "  metrics:    " << base << "/metrics\n"
        << "  incidents:  " << base << "/api/v1/incidents\n"
        << "  reclaims:   " << base << "/api/v1/reclaims\n"
        << "  workloads:  " << base << "/api/v1/workloads\n"
        << "  DRA pools:  " << base << "/api/v1/pools\n"
        << "  capacity:   " << base << "/api/v1/capacity  " << base << "/api/v1/nodes\n"
        << "  health:     " << base << "/healthz  " << base << "/readyz\n"
        << "Ctrl-C stops.\n";
    out.flush();

    LiveSummary live(base, out);
    ApiReader api(base);
    bool stop = false;
    int failures = 0;
    do {
      for (const auto& sc : scenarios) {
        if (stop) break;
        for (auto& [name, s] : servers) clearServer(*s);
        // Let the daemon see the empty estate before the next drill begins. A drill that uses
        // the same ClusterQueue names re-creates them at once (its setup), within the exporter's
        // grace for deleted queues, so their series — and the counters measured below — go on.
        stop = signalled(500ms);
        if (stop) break;
        out << "== " << sc.name << ": " << sc.description << "\n";
        out.flush();
        auto before = api.metrics();
        scenario::PlayerOptions playerOptions;
        playerOptions.drillStart = scheduledStart(sc);
        if (playerOptions.drillStart)
          previousEnd = *playerOptions.drillStart +
                        std::chrono::duration_cast<SystemTime::duration>(sc.duration);
        scenario::ScenarioPlayer player(sc, serverMap, clock, playerOptions);
        if (auto s = player.start(); !s) {
          err << "demo: scenario " << sc.name << ": " << s.error() << "\n";
          ++failures;
          continue;
        }
        auto end = player.drillStart() + std::chrono::duration_cast<SystemTime::duration>(sc.duration);
        auto realDuration = clock.toReal(std::max<std::chrono::nanoseconds>(
            std::chrono::nanoseconds(0), end - clock.systemNow()));
        auto deadline = std::chrono::steady_clock::now() + realDuration + 30s;
        while (!stop && !player.waitUntilDone(0ms) && std::chrono::steady_clock::now() < deadline) {
          stop = signalled(200ms);
          live.poll();
        }
        // A few ticks for the last events to travel through the daemon.
        for (int i = 0; i < 10 && !stop; ++i) {
          stop = signalled(200ms);
          live.poll();
        }
        player.stop();
        for (const auto& e : player.errors()) err << "demo: " << sc.name << ": " << e << "\n";
        if (args.once && !stop) {
          auto result = checkScenario(sc, player.drillStart(), api, before, args.speed);
          for (const auto& l : result.lines) out << l << "\n";
          failures += result.failures + static_cast<int>(player.errors().size());
          out.flush();
        }
      }
    } while (!args.once && !stop);
    daemon.stop();
    if (args.once) {
      out << (failures == 0 ? "demo: every stated figure was reproduced\n"
                            : fmt::format("demo: {} stated figure(s) NOT reproduced\n", failures));
      if (failures) exitCode = config::kExitFailure;
    }
  }
  for (auto& [name, s] : servers) s->stop();
  fs::remove_all(dir);
  if (args.store) out << "demo: the store is kept in " << *args.store << "\n";
  return exitCode;
}

}  // namespace firstwork::app
