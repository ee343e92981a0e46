#include "firstwork/sim/fault_injector.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "firstwork/http/httplib.hpp"
#include "firstwork/sim/api_server.hpp"
#include "stream_client.hpp"

using namespace firstwork::sim;
using firstwork::sim::testing::StreamClient;
using namespace std::chrono_literals;
using Json = nlohmann::json;

namespace {

std::string pod(const std::string& name) {
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "a"}}},
              {"spec", {{"containers", Json::array({{{"name", "c"}}})}}}}
      .dump();
}

int getStatus(const ApiServer& s, const std::string& token, const std::string& path = "/api/v1/pods") {
  httplib::Client c("127.0.0.1", s.port());
  c.set_read_timeout(30, 0);  // a deadline: 5 s missed under TSan on a loaded 2-vCPU machine
  auto r = c.Get(path.c_str(), {{"Authorization", "Bearer " + token}});
  return r ? r->status : 0;
}

// Polls until `s` has an open watch (bounded).
bool eventuallyOpen(const ApiServer& s) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (s.openWatches() > 0) return true;
    std::this_thread::sleep_for(2ms);
  }
  return s.openWatches() > 0;
}

FaultPlanOptions longPlan(uint64_t seed) {
  FaultPlanOptions o;
  o.seed = seed;
  o.length = 600s;
  o.meanInterval = 1000ms;
  o.clusters = {"manager", "worker-1", "worker-2"};
  return o;
}

std::vector<std::string> lines(const FaultPlan& p) {
  std::vector<std::string> out;
  for (const auto& f : p.faults) out.push_back(f.describe());
  return out;
}

}  // namespace

TEST_CASE("a fault plan is a pure function of its options and seed", "[sim][faults]") {
  auto a = planFaults(longPlan(42));
  auto b = planFaults(longPlan(42));
  auto c = planFaults(longPlan(43));
  CHECK(lines(a) == lines(b));
  CHECK(a.clockSkew == b.clockSkew);
  CHECK(lines(a) != lines(c));
  CHECK(a.seed == 42);
}

TEST_CASE("a plan stays inside its bounds and uses every kind", "[sim][faults]") {
  for (uint64_t seed : {1u, 7u, 2026u}) {
    auto o = longPlan(seed);
    auto p = planFaults(o);
    INFO("seed " << seed << ": " << p.summary());
    // 600 s at one fault per second on average; exponential gaps.
    CHECK(p.faults.size() > 300);
    std::set<FaultKind> seen;
    int kills = 0;
    std::optional<std::chrono::milliseconds> lastKill;
    for (size_t i = 0; i < p.faults.size(); ++i) {
      const auto& f = p.faults[i];
      seen.insert(f.kind);
      CHECK(f.at < o.length);
      if (i > 0) CHECK(f.at >= p.faults[i - 1].at);
      if (f.kind == FaultKind::KillWatcher) {
        CHECK(f.cluster.empty());
        CHECK(f.duration <= o.maxWatcherDowntime);
        if (lastKill) CHECK(f.at - *lastKill >= o.minGapBetweenKills);
        lastKill = f.at;
        ++kills;
      } else {
        CHECK(std::find(o.clusters.begin(), o.clusters.end(), f.cluster) != o.clusters.end());
      }
      if (f.kind == FaultKind::Stall) CHECK((f.duration >= 100ms && f.duration <= o.maxStall));
      if (f.kind == FaultKind::RestartServer) {
        CHECK(f.duration <= o.maxServerDowntime);
        CHECK(f.value >= 1000);  // always above every RV issued before
      }
      if (f.kind == FaultKind::GoneStorm) CHECK((f.count >= 2 && f.count <= 6));
    }
    CHECK(kills == o.maxWatcherKills);
    CHECK(seen.size() == kFaultKindCount);
    CHECK(p.clockSkew <= o.maxClockSkew);
    CHECK(p.clockSkew >= -o.maxClockSkew);
  }
}

TEST_CASE("a plan limited to some kinds and without clusters plans only watcher kills",
          "[sim][faults]") {
  FaultPlanOptions o = longPlan(5);
  o.clusters.clear();
  o.maxWatcherKills = 3;
  auto p = planFaults(o);
  REQUIRE(p.faults.size() == 3);
  for (const auto& f : p.faults) CHECK(f.kind == FaultKind::KillWatcher);
  o.clusters = {"c"};
  o.kinds = {FaultKind::Stall};
  for (const auto& f : planFaults(o).faults) CHECK(f.kind == FaultKind::Stall);
  CHECK(planFaults(o).summary().rfind("stall=", 0) == 0);
  o.length = 0ms;
  CHECK(planFaults(o).summary() == "none");
}

TEST_CASE("the injector applies every kind of fault to its server", "[sim][faults]") {
  ApiServerOptions so;
  so.token = "original-token-1";
  ApiServer s(so);
  s.start();
  s.create("pods", pod("p0"));

  std::vector<std::pair<std::string, std::string>> rotated;
  std::vector<std::chrono::milliseconds> kills;
  FaultHooks hooks;
  hooks.rotateToken = [&](const std::string& cluster, const std::string& token) {
    // The server still takes the old token while the client's file is being written.
    CHECK(getStatus(s, "original-token-1") == 200);
    rotated.emplace_back(cluster, token);
  };
  hooks.killWatcher = [&](std::chrono::milliseconds d) { kills.push_back(d); };

  auto plan = [](std::vector<Fault> faults) {
    FaultPlan p;
    p.seed = 9;
    p.faults = std::move(faults);
    return p;
  };
  auto run = [&](std::vector<Fault> faults) {
    FaultInjector inj(plan(std::move(faults)), {{"c", std::ref(s)}}, hooks, "canary-");
    inj.start();
    REQUIRE(inj.waitUntilDone(10s));
    return inj.applied();
  };

  SECTION("500, 429 with Retry-After, token rotation, watcher kill") {
    Fault errors{0ms, FaultKind::ServerErrors, "c", 0ms, 2, 0};
    auto applied = run({errors});
    REQUIRE(applied.size() == 1);
    CHECK(applied[0] == "+0.000s server_errors c next 2 requests 500");
    CHECK(getStatus(s, "original-token-1") == 500);
    CHECK(getStatus(s, "original-token-1") == 500);
    CHECK(getStatus(s, "original-token-1") == 200);

    run({Fault{0ms, FaultKind::Throttle, "c", 0ms, 1, 3}});
    httplib::Client c("127.0.0.1", s.port());
    c.set_read_timeout(30, 0);
    auto r = c.Get("/api/v1/pods", {{"Authorization", "Bearer original-token-1"}});
    REQUIRE(r);
    CHECK(r->status == 429);
    CHECK(r->get_header_value("Retry-After") == "3");

    FaultInjector inj(plan({Fault{0ms, FaultKind::RotateToken, "c"},
                            Fault{10ms, FaultKind::KillWatcher, "", 250ms}}),
                      {{"c", std::ref(s)}}, hooks, "canary-");
    CHECK(inj.currentToken("c") == "original-token-1");
    inj.start();
    REQUIRE(inj.waitUntilDone(10s));
    REQUIRE(rotated.size() == 1);
    CHECK(rotated[0].first == "c");
    CHECK(rotated[0].second.rfind("canary-c-1-", 0) == 0);
    CHECK(rotated[0].second.size() == std::string("canary-c-1-").size() + 16);
    CHECK(s.token() == rotated[0].second);
    CHECK(inj.currentToken("c") == rotated[0].second);
    CHECK(getStatus(s, "original-token-1") == 401);
    CHECK(getStatus(s, rotated[0].second) == 200);
    CHECK(kills == std::vector<std::chrono::milliseconds>{250ms});
  }

  SECTION("a server restart comes back on the same port with a higher RV base") {
    const uint64_t before = s.currentResourceVersion();
    run({Fault{0ms, FaultKind::RestartServer, "c", 100ms, 0, 5000}});
    CHECK(s.running());
    CHECK(s.currentResourceVersion() == before + 5000);
    CHECK(getStatus(s, "original-token-1") == 200);
    // History is gone: a watch from an RV before the restart gets an in-band 410.
    StreamClient old(s.port(), "/api/v1/pods?watch=true&resourceVersion=1", "original-token-1");
    REQUIRE(old.waitFinalChunk());
    CHECK(Json::parse(old.lines()[0])["object"]["code"] == 410);
  }

  SECTION("stream faults: cut, truncated line, 410 storm, stall") {
    StreamClient cut(s.port(), "/api/v1/pods?watch=true&resourceVersion=1", "original-token-1");
    REQUIRE(cut.waitHeaders());
    run({Fault{0ms, FaultKind::CutStreams, "c"}});
    s.create("pods", pod("p1"));
    REQUIRE(cut.waitClosed());
    CHECK_FALSE(cut.finalChunk());

    StreamClient garbled(s.port(), "/api/v1/pods?watch=true&resourceVersion=2", "original-token-1");
    REQUIRE(garbled.waitHeaders());
    run({Fault{0ms, FaultKind::TruncateEvent, "c"}});
    s.create("pods", pod("p2"));
    REQUIRE(garbled.waitLines(1));
    CHECK_THROWS(Json::parse(garbled.lines()[0]));

    const uint64_t expiredBefore = s.stats().watchExpired;
    StreamClient storm(s.port(), "/api/v1/pods?watch=true&resourceVersion=3", "original-token-1");
    REQUIRE(storm.waitHeaders());
    REQUIRE(eventuallyOpen(s));
    run({Fault{0ms, FaultKind::GoneStorm, "c", 100ms, 3, 0}});
    REQUIRE(storm.waitFinalChunk());
    CHECK(Json::parse(storm.lines().back())["object"]["code"] == 410);
    CHECK(s.stats().watchExpired >= expiredBefore + 1);

    StreamClient stalled(s.port(), "/api/v1/pods?watch=true&resourceVersion=" +
                                       std::to_string(s.currentResourceVersion()),
                         "original-token-1");
    REQUIRE(stalled.waitHeaders());
    const auto t0 = std::chrono::steady_clock::now();
    run({Fault{0ms, FaultKind::Stall, "c", 300ms}});
    s.create("pods", pod("p3"));
    REQUIRE(stalled.waitLines(1));
    CHECK(stalled.lineTimes()[0] - t0 >= 300ms);
  }
}

TEST_CASE("stopping the injector skips the faults not yet due", "[sim][faults]") {
  ApiServer s;
  s.start();
  FaultPlan p;
  p.faults = {Fault{0ms, FaultKind::ServerErrors, "c", 0ms, 1, 0},
              Fault{std::chrono::milliseconds(3600000), FaultKind::ServerErrors, "c", 0ms, 1, 0}};
  FaultInjector inj(p, {{"c", std::ref(s)}}, {});
  inj.start();
  CHECK_FALSE(inj.waitUntilDone(200ms));
  inj.stop();
  CHECK(inj.applied().size() == 1);
}
