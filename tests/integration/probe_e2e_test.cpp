// The PromQL useful-work probe wired through the whole daemon (design §4 signal 3): an
// application's training-step counter is scraped by a real Prometheus; firstworkd polls it and
// marks first useful work of the pod it names, on the cluster its `cluster` label names.
//
// Two standalone clusters run a pod of the same namespace/name (as MultiKueue copies do). A
// series labelled cluster="gpu-a" must make only gpu-a's workload productive; a series without a
// cluster label then reaches every cluster, and gpu-a keeps its earlier first work.

#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "firstwork/core/rfc3339.hpp"
#include "firstwork/http/httplib.hpp"
#include "firstwork/sim/api_server.hpp"
#include "support/prometheus.hpp"
#include "support/subprocess.hpp"
#include "support/test_logs.hpp"

using namespace firstwork;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using nlohmann::json;
using firstwork::testing::eventually;
using firstwork::testing::PrometheusServer;
using firstwork::testing::Subprocess;

namespace {

std::string at(std::chrono::seconds ago) {
  return formatRfc3339(std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now()) - ago);
}

/// One node of 8 GPUs, and `research/train-0` (1 pod × 4 GPUs) admitted and running without any
/// useful-work annotation.
void seedCluster(sim::ApiServer& s) {
  const std::string day = at(86400s);
  s.create("nodes", R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-node-0","uid":"node-uid-0",
    "creationTimestamp":")" + day + R"("},"status":{"allocatable":{"nvidia.com/gpu":"8"},
    "conditions":[{"type":"Ready","status":"True","lastTransitionTime":")" + day + R"("}]}})");
  const std::string containers =
      R"([{"name":"trainer","resources":{"requests":{"nvidia.com/gpu":"4"},"limits":{"nvidia.com/gpu":"4"}}}])";
  s.create("workloads", R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"name":"train-0",
    "namespace":"research","uid":"wl-uid-0","creationTimestamp":")" + at(600s) + R"("},
    "spec":{"queueName":"research-lq","podSets":[{"name":"main","count":1,"template":{"spec":{"containers":)" +
                               containers + R"(}}}]},
    "status":{"admission":{"clusterQueue":"train-cq"},"conditions":[
      {"type":"QuotaReserved","status":"True","reason":"QuotaReserved","lastTransitionTime":")" + at(540s) + R"("},
      {"type":"Admitted","status":"True","reason":"Admitted","lastTransitionTime":")" + at(540s) + R"("}]}})");
  s.create("pods", R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"train-0-pod-0","namespace":"research",
    "uid":"pod-uid-0","creationTimestamp":")" + at(500s) + R"(","annotations":{"kueue.x-k8s.io/workload":"train-0"}},
    "spec":{"nodeName":"gpu-node-0","containers":)" + containers + R"(},
    "status":{"phase":"Running","conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":")" +
                          at(500s) + R"("}],
      "containerStatuses":[{"name":"trainer","ready":true,"restartCount":0,
        "state":{"running":{"startedAt":")" + at(300s) + R"("}}}]}})");
}

/// The application's own /metrics: a training-step counter per (cluster label, pod).
class AppExporter {
 public:
  AppExporter() {
    server_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard lock(mu_);
      res.set_content(body_, "text/plain; version=0.0.4");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~AppExporter() {
    server_.stop();
    thread_.join();
  }
  void set(std::string body) {
    std::lock_guard lock(mu_);
    body_ = std::move(body);
  }
  std::string target() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::string body_ = "# TYPE app_training_steps_total counter\n";
};

std::string get(const std::string& base, const std::string& path) {
  httplib::Client c(base);
  c.set_connection_timeout(2);
  c.set_read_timeout(10);
  auto r = c.Get(path.c_str());
  return r && r->status == 200 ? r->body : std::string();
}

/// research/train-0's first_work on `cluster` and the signal that produced it ("" when none).
std::pair<std::string, std::string> firstWork(const std::string& base, const std::string& cluster) {
  auto body = get(base, "/api/v1/workloads?cluster=" + cluster);
  auto j = json::parse(body, nullptr, false);
  if (j.is_discarded()) return {};
  for (const auto& item : j["items"])
    if (item["workload"].value("name", "") == "train-0" && item["milestones"].contains("first_work"))
      return {item["milestones"]["first_work"].get<std::string>(), item.value("signal", "")};
  return {};
}

}  // namespace

TEST_CASE("the PromQL probe marks first work through the daemon, routed by the cluster label",
          "[integration][prometheus][probe]") {
  char tmpl[] = "/tmp/firstwork-probe-XXXXXX";
  fs::path dir = mkdtemp(tmpl);
  std::map<std::string, std::unique_ptr<sim::ApiServer>> servers;
  std::string config = "clusters:\n";
  for (const char* name : {"gpu-a", "gpu-b"}) {
    sim::ApiServerOptions o;
    o.name = name;
    o.token = std::string("probe-test-") + name;
    auto s = std::make_unique<sim::ApiServer>(o);
    s->start();
    seedCluster(*s);
    auto kc = (dir / (std::string(name) + ".kubeconfig")).string();
    std::ofstream(kc) << s->kubeconfig(name);
    config += std::string("  - name: ") + name + "\n    role: standalone\n    kubeconfig: " + kc + "\n";
    servers.emplace(name, std::move(s));
  }
  AppExporter app;
  auto promDir = dir / "prometheus";
  fs::create_directories(promDir);
  PrometheusServer prometheus(promDir, {app.target()}, "trainer");
  config += "usefulWork:\n  prometheus:\n    url: " + prometheus.url() +
            "\n    query: app_training_steps_total\n    clusterLabel: cluster\n    interval: 1s\n"
            "    timeout: 1s\nstore:\n  path: " + (dir / "firstwork.db").string() +
            "\nserver:\n  listen: 127.0.0.1:0\n";
  std::ofstream(dir / "firstwork.yaml") << config;
  Subprocess daemon({FIRSTWORKD_PATH, "run", "--config", (dir / "firstwork.yaml").string()},
                    firstwork::testing::testLogPath("probe-e2e"));
  std::string base;
  eventually(
      [&] {
        std::smatch m;
        auto out = daemon.output();
        static const std::regex re("\"listen\":\"(http://127\\.0\\.0\\.1:[0-9]+)\"");
        if (std::regex_search(out, m, re)) base = m[1];
        return !base.empty() || !daemon.running();
      },
      30s);
  INFO(daemon.output());
  REQUIRE(!base.empty());
  REQUIRE(eventually([&] { return !get(base, "/readyz").empty(); }, 30s));
  // Running, no useful work yet: the step counter is 0 (the probe needs a positive sample).
  app.set("# TYPE app_training_steps_total counter\n"
          "app_training_steps_total{cluster=\"gpu-a\",namespace=\"research\",pod=\"train-0-pod-0\"} 0\n");
  REQUIRE(eventually([&] { return prometheus.query("app_training_steps_total").has_value(); }, 60s));
  std::this_thread::sleep_for(3s);  // several probe polls see only 0
  CHECK(firstWork(base, "gpu-a").first.empty());

  // gpu-a's pod starts stepping.
  auto before = std::chrono::system_clock::now();
  app.set("# TYPE app_training_steps_total counter\n"
          "app_training_steps_total{cluster=\"gpu-a\",namespace=\"research\",pod=\"train-0-pod-0\"} 5\n");
  REQUIRE(eventually([&] { return !firstWork(base, "gpu-a").first.empty(); }, 60s));
  auto [fwA, signalA] = firstWork(base, "gpu-a");
  CHECK(signalA == "promql");
  auto tA = parseRfc3339(fwA);
  REQUIRE(tA.ok());
  // The signal's time is the first positive sample's time: after the counter moved (within the
  // second-granularity of the API's RFC 3339 times) and within a few scrape/poll intervals.
  CHECK(*tA >= std::chrono::time_point_cast<std::chrono::seconds>(before) - 1s);
  CHECK(*tA <= before + 15s);
  // Same namespace/name on gpu-b: not touched by a series that names gpu-a.
  std::this_thread::sleep_for(3s);
  CHECK(firstWork(base, "gpu-b").first.empty());

  // A series without a cluster label goes to every cluster: gpu-b gets its first work now, gpu-a
  // keeps the earlier one.
  app.set("# TYPE app_training_steps_total counter\n"
          "app_training_steps_total{cluster=\"gpu-a\",namespace=\"research\",pod=\"train-0-pod-0\"} 9\n"
          "app_training_steps_total{namespace=\"research\",pod=\"train-0-pod-0\"} 3\n");
  REQUIRE(eventually([&] { return !firstWork(base, "gpu-b").first.empty(); }, 60s));
  CHECK(firstWork(base, "gpu-b").second == "promql");
  CHECK(firstWork(base, "gpu-a").first == fwA);
  auto metrics = get(base, "/metrics");
  CHECK(metrics.find("firstwork_useful_work_queries_total{result=\"ok\"}") != std::string::npos);

  daemon.signal(SIGTERM);
  CHECK(daemon.wait(30s) == std::optional<int>(0));
  fs::remove_all(dir);
}
