// Fault soak (issue 8): scenario drills played on simulated clusters while the API servers inject
// random faults from a seeded plan — cut and garbled streams, 410 storms, stalls, 500/429 storms,
// token rotation, API server restarts with a new resourceVersion base, a cluster clock skewed by
// minutes — and firstworkd is SIGKILLed and restarted. The final incidents, reclaims, duplicate
// executions, workload milestone timelines and stored histogram samples must equal those of the
// fault-free run of the same drill, and the daemon's resident memory stays bounded throughout.
//
// Knobs (environment):
//   FIRSTWORK_SOAK_SECONDS   time for faulted rounds after the first round of each scenario
//                            (default 30; at least one faulted round per scenario always runs)
//   FIRSTWORK_SOAK_SEED      seed of the first round; round i uses seed + i (default 20260801)
//   FIRSTWORK_SOAK_SCENARIOS comma-separated scenario names (default reconnection-baseline,reclaim)
//   FIRSTWORK_SOAK_SPEED     drill speed-up (default 120: a 20-minute drill in 10 s)
// A failure prints its seed: FIRSTWORK_SOAK_SEED=<seed> FIRSTWORK_SOAK_SECONDS=0 with the same
// scenario replays the same plan (fault times are real-time offsets, so thread timing can still
// differ slightly between replays).
#include <catch2/catch.hpp>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <iostream>

#include "firstwork/config/config.hpp"
#include "firstwork/core/scaled_clock.hpp"
#include "firstwork/sim/fault_injector.hpp"
#include "support/daemon_harness.hpp"

using namespace firstwork;
using namespace firstwork::testing;
using namespace std::chrono_literals;
using std::chrono::milliseconds;

namespace {

std::string envOr(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::string(v) : fallback;
}

/// The largest cluster clock skew a plan draws, and how far every drill is set back in time so
/// that even a cluster that far ahead stamps times in the daemon's past: the daemon (real clock)
/// would otherwise wait in real minutes for instants the 120x drill has already stamped. With the
/// drill also set back by its own length (as in restart_test), the daemon sees an event at most
/// duration + 2·3 min late — 26 min for a 20-minute drill, inside the 30-minute recovery and
/// reclaim budgets, which are judged on the daemon's clock.
constexpr std::chrono::seconds kMaxSkew{180};

/// Resident memory bound (KiB) for the daemon. Why 96 MiB: the fault-free daemon of these drills
/// peaks around 20-30 MiB (binary and shared libraries, libcurl/OpenSSL contexts for three
/// clusters, SQLite's page cache, a few hundred slim objects); a fault replays every object of a
/// resource (relist) and can hold one LIST page plus one watch line per reflector, i.e. far less
/// than a MiB here. 96 MiB leaves room for allocator fragmentation across many relists while still
/// catching what a leak per fault, per relist or per restart would add over a soak (unbounded
/// queues of pending records, lines or reconnect state grow by tens of MiB within minutes).
#ifndef FIRSTWORK_SANITIZER
constexpr long kRssBoundKiB = 96 * 1024;
#else
/// Under ASan (scripts/test.sh runs the soak only there) the same daemon peaks at 170-185 MiB:
/// shadow memory for every mapped byte plus the quarantine of freed blocks, which holds up to
/// 256 MiB before reuse. Twice the measured peak still fails on a leak per relist or restart.
constexpr long kRssBoundKiB = 384 * 1024;
#endif

struct RunResult {
  DrillOutcome outcome;
  long maxRssKiB = 0;
  int rssSamples = 0;
  int daemonLives = 0;
  bool settled = false;
  std::vector<std::string> applied;
  std::vector<std::string> playerErrors;
  std::string logTail;
  std::optional<int> exitCode;
};

RunResult runDrill(const scenario::Scenario& sc, const sim::FaultPlan* plan, double speed,
                   const std::string& label) {
  RunResult res;
  TempDir dir("firstwork-soak");
  const auto skew = plan ? plan->clockSkew : std::chrono::seconds(0);
  // The clusters' clock: the drill timeline at `speed`, set back as explained at kMaxSkew, plus
  // this run's skew. The daemon keeps its real clock.
  ScaledClock clusterClock(speed,
                           std::chrono::system_clock::now() -
                               std::chrono::duration_cast<SystemTime::duration>(sc.duration) -
                               kMaxSkew + skew,
                           std::chrono::steady_clock::now());
  SimEstate::Options eo;
  eo.clusterClock = &clusterClock;
  eo.tokenPrefix = "soak-";
  // A stall watchdog shorter than the longest planned stall, so both kinds happen. The retry
  // backoff is client-go's (800 ms doubling to 30 s) divided by the drill's speed-up, as the
  // cluster clock is: unscaled, a few failures in a row kept a watch down for 10 s of real time,
  // 20 minutes of a 120x drill, and a pod that checkpointed, was evicted and went in that window
  // (reclaim, seed 9102), or a MultiKueueCluster that went down and came back in it
  // (reconnection-baseline, seed 9102), was never in any response the daemon got: figures no
  // watcher could derive, not a fault the daemon failed to recover from. The faults' own
  // downtimes are not scaled.
  const config::WatchConfig defaults;
  const auto scaledMs = [&](std::chrono::milliseconds d) {
    return std::to_string(std::max<int64_t>(1, std::llround(static_cast<double>(d.count()) / speed)));
  };
  eo.extraConfig = "watch:\n  stallTimeout: 3s\n  backoffInitial: " + scaledMs(defaults.backoffInitial) +
                   "ms\n  backoffMax: " + scaledMs(defaults.backoffMax) + "ms\n";
  SimEstate estate(sc, dir.path, eo);
  DaemonProcess daemon(estate.configPath(), "soak-" + label);
  REQUIRE(daemon.start());
  INFO(daemon.logTail());
  REQUIRE(eventually([&] { return daemon.ready(); }, 30s));

  // Resident memory of whichever life is running, sampled every 100 ms throughout.
  std::atomic<pid_t> pid{daemon.pid()};
  std::atomic<bool> sampling{true};
  std::atomic<long> maxRss{0};
  std::atomic<int> samples{0};
  std::thread sampler([&] {
    while (sampling) {
      if (auto kb = residentKiB(pid.load())) {
        long prev = maxRss.load();
        while (*kb > prev && !maxRss.compare_exchange_weak(prev, *kb)) {
        }
        ++samples;
      }
      std::this_thread::sleep_for(100ms);
    }
  });

  scenario::ScenarioPlayer player(sc, estate.serverMap(), clusterClock);
  REQUIRE(player.start().ok());
  std::unique_ptr<sim::FaultInjector> injector;
  if (plan) {
    sim::FaultHooks hooks;
    hooks.rotateToken = [&](const std::string& cluster, const std::string& token) {
      estate.writeToken(cluster, token);
    };
    hooks.killWatcher = [&](milliseconds downtime) {
      daemon.kill();
      std::this_thread::sleep_for(downtime);
      daemon.start();
      pid = daemon.pid();
    };
    std::map<std::string, std::reference_wrapper<sim::ApiServer>> servers;
    for (const auto& name : estate.clusterNames()) servers.emplace(name, std::ref(estate.server(name)));
    injector = std::make_unique<sim::FaultInjector>(*plan, servers, hooks, "fwcanary-soak-rotated-");
    injector->start();
  }
  const auto realDuration =
      std::chrono::duration_cast<milliseconds>(clusterClock.toReal(sc.duration));
  CHECK(player.waitUntilDone(realDuration + 60s));
  if (injector) {
    CHECK(injector->waitUntilDone(60s));
    injector->stop();
    res.applied = injector->applied();
  }
  // Faults are over: the daemon must catch up on its own (reconnect, relist, resume).
  CHECK(eventually([&] { return daemon.ready(); }, 90s));
  res.outcome = settledOutcome(daemon.baseUrl(), estate.storePath(), player.drillStart(), 3s, 120s,
                               &res.settled);
  sampling = false;
  sampler.join();
  res.maxRssKiB = maxRss;
  res.rssSamples = samples;
  res.daemonLives = daemon.lives();
  res.playerErrors = player.errors();
  res.logTail = daemon.logTail();
  player.stop();
  res.exitCode = daemon.stop();
  return res;
}

}  // namespace

TEST_CASE("fault soak: drills under random faults end with the fault-free figures",
          "[integration][soak]") {
  const double speed = std::stod(envOr("FIRSTWORK_SOAK_SPEED", "120"));
  const uint64_t seed0 = std::stoull(envOr("FIRSTWORK_SOAK_SEED", "20260801"));
  const auto budget = std::chrono::seconds(std::stol(envOr("FIRSTWORK_SOAK_SECONDS", "30")));
  std::vector<std::string> names;
  {
    std::stringstream in(envOr("FIRSTWORK_SOAK_SCENARIOS", "reconnection-baseline,reclaim"));
    for (std::string n; std::getline(in, n, ',');)
      if (!n.empty()) names.push_back(n);
  }
  REQUIRE(!names.empty());
  std::map<std::string, scenario::Scenario> scenarios;
  std::map<std::string, RunResult> references;
  for (const auto& n : names) {
    auto sc = scenario::loadScenario(std::string(FIRSTWORK_SOURCE_DIR) + "/config/scenarios/" + n +
                                     ".yaml");
    INFO(n);
    REQUIRE(sc.ok());
    scenarios.emplace(n, std::move(*sc));
  }

  const auto start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point faultedSince{};
  long peakRss = 0;
  int rounds = 0;
  for (int round = 0;; ++round) {
    const std::string& name = names[static_cast<size_t>(round) % names.size()];
    const bool firstPass = round < static_cast<int>(names.size());
    if (!firstPass && std::chrono::steady_clock::now() - faultedSince >= budget) break;
    const auto& sc = scenarios.at(name);
    if (!references.count(name)) {
      auto ref = runDrill(sc, nullptr, speed, name + "-reference");
      INFO("fault-free " << name << " log tail:\n" << ref.logTail);
      REQUIRE(ref.settled);
      CHECK(ref.playerErrors.empty());
      CHECK(ref.exitCode == std::optional<int>(0));
      // A fault-free run has no gaps in the daemon's own view of the clusters.
      CHECK(ref.outcome.probeIncidents.empty());
      // Something to compare: every drill produces workload timelines and histogram samples.
      REQUIRE(!ref.outcome.timelines.empty());
      REQUIRE(!ref.outcome.observations.empty());
      CHECK(ref.maxRssKiB < kRssBoundKiB);
      peakRss = std::max(peakRss, ref.maxRssKiB);
      std::cout << "soak: " << name << " fault-free: " << ref.outcome.incidents.size()
                << " incidents, " << ref.outcome.reclaims.size() << " reclaims, "
                << ref.outcome.timelines.size() << " workload cycles, max RSS "
                << ref.maxRssKiB / 1024 << " MiB" << std::endl;
      references.emplace(name, std::move(ref));
    }
    if (round == 0) faultedSince = std::chrono::steady_clock::now();

    const uint64_t seed = seed0 + static_cast<uint64_t>(round);
    sim::FaultPlanOptions po;
    po.seed = seed;
    po.length = std::chrono::duration_cast<milliseconds>(
        std::chrono::nanoseconds(static_cast<int64_t>(
            static_cast<double>(std::chrono::nanoseconds(sc.duration).count()) / speed)));
    po.meanInterval = 700ms;
    po.clusters.clear();
    for (const auto& c : sc.clusters) po.clusters.push_back(c.name);
    po.maxStall = 4s;
    po.maxServerDowntime = 1500ms;
    po.maxWatcherDowntime = 2s;
    po.maxWatcherKills = 2;
    po.minGapBetweenKills = 3s;
    po.maxClockSkew = kMaxSkew;
    auto plan = sim::planFaults(po);
    std::cout << "soak: round " << round << " scenario " << name << " seed " << seed
              << " clock skew " << plan.clockSkew.count() << "s faults " << plan.summary()
              << std::endl;

    auto run = runDrill(sc, &plan, speed, name + "-seed" + std::to_string(seed));
    ++rounds;
    peakRss = std::max(peakRss, run.maxRssKiB);
    const auto& ref = references.at(name);
    std::string applied;
    for (const auto& a : run.applied) applied += "  " + a + "\n";
    INFO("scenario " << name << ", seed " << seed << " (reproduce: FIRSTWORK_SOAK_SEED=" << seed
                     << " FIRSTWORK_SOAK_SCENARIOS=" << name << " FIRSTWORK_SOAK_SECONDS=0)\n"
                     << "clock skew " << plan.clockSkew.count() << " s, faults applied:\n"
                     << applied << "daemon lives " << run.daemonLives << ", max RSS "
                     << run.maxRssKiB << " KiB\nlog tail:\n"
                     << run.logTail);
    CHECK(run.settled);
    CHECK(run.playerErrors.empty());
    CHECK(run.applied.size() == plan.faults.size());
    CHECK(run.exitCode == std::optional<int>(0));
    INFO("differences from the fault-free run:\n" << ref.outcome.diff(run.outcome));
    CHECK(run.outcome == ref.outcome);
    // Gaps in the daemon's own view are recorded as telemetry gaps, and all of them closed.
    for (const auto& p : run.outcome.probeIncidents) CHECK(p.value("outcome", "") == "recovered");
    CHECK(run.rssSamples > 0);
    CHECK(run.maxRssKiB < kRssBoundKiB);
    std::cout << "soak: round " << round << " done: " << run.applied.size() << " faults, "
              << run.daemonLives << " daemon lives, " << run.outcome.probeIncidents.size()
              << " telemetry gaps, max RSS " << run.maxRssKiB / 1024 << " MiB" << std::endl;
  }
  std::cout << "soak: " << rounds << " faulted rounds in "
            << std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                                start)
                   .count()
            << " s, peak RSS " << peakRss / 1024 << " MiB (bound " << kRssBoundKiB / 1024
            << " MiB)" << std::endl;
}
