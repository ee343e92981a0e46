// firstworkd run / check-config as an operator runs them: the real binary, real HTTPS watch
// streams to Kubernetes API test servers on 127.0.0.1, real HTTP scrapes.
#include <catch2/catch.hpp>
#include <algorithm>
#include <regex>

#include "support/daemon_harness.hpp"

using namespace firstwork;
using namespace std::chrono_literals;
using firstwork::testing::eventually;
using firstwork::testing::Subprocess;
using firstwork::testing::TempDir;
using firstwork::testing::testLogPath;
using firstwork::testing::testSecret;

namespace {

std::string listenUrl(Subprocess& p) { return firstwork::testing::waitForListenUrl(p); }

std::string get(const std::string& base, const std::string& path, int* status = nullptr) {
  return firstwork::testing::httpGet(base, path, status);
}

bool allWatches(const std::string& metrics, const std::string& cluster,
                const std::vector<std::string>& resources, int value) {
  for (const auto& r : resources) {
    auto line = "firstwork_watch_up{cluster=\"" + cluster + "\",resource=\"" + r + "\"} " +
                std::to_string(value);
    if (metrics.find(line) == std::string::npos) return false;
  }
  return true;
}

const std::vector<std::string> kManagementResources{"workloads", "multikueueclusters",
                                                    "clusterqueues", "admissionchecks",
                                                    "multikueueconfigs"};
const std::vector<std::string> kWorkerResources{"workloads", "pods", "resourceclaims",
                                                "resourceslices", "nodes"};

}  // namespace

TEST_CASE("firstworkd run watches a management and a worker cluster, and follows a worker outage",
          "[integration]") {
  sim::ApiServerOptions mo;
  mo.tls = true;
  mo.name = "management";
  mo.token = testSecret("management-token");
  mo.draVersion = "";  // a management cluster without DRA: reported once, not retried hot
  sim::ApiServer management(mo);
  management.start();
  sim::ApiServerOptions wo;
  wo.tls = true;
  wo.name = "worker";
  wo.token = testSecret("worker-token");
  sim::ApiServer worker(wo);
  worker.start();
  // One 2-GPU node time-sliced ×4, with its GPU feature discovery labels (see the fixture README).
  {
    std::ifstream in(std::string(FIRSTWORK_TEST_FIXTURES_DIR) + "/k8s/node-gpu-time-slicing-CONSTRUCTED.json");
    std::string node((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE_FALSE(node.empty());
    worker.create("nodes", node);
  }

  TempDir dir("firstwork-it");
  auto mk = dir.write("management.kubeconfig", management.kubeconfig("management"));
  auto wk = dir.write("worker.kubeconfig", worker.kubeconfig("worker"));
  auto cfg = dir.write("firstwork.yaml", "clusters:\n"
                                         "  - name: management\n"
                                         "    role: management\n"
                                         "    kubeconfig: " + mk + "\n"
                                         "  - name: worker-1\n"
                                         "    role: worker\n"
                                         "    kubeconfig: " + wk + "\n"
                                         "store:\n"
                                         "  path: " + (dir.path / "f.db").string() + "\n"
                                         "server:\n"
                                         "  listen: 127.0.0.1:0\n"
                                         "watch:\n"
                                         "  stallTimeout: 10s\n"
                                         "  backoffInitial: 100ms\n"
                                         "  backoffMax: 400ms\n");
  Subprocess daemon({FIRSTWORKD_PATH, "run", "--config", cfg}, testLogPath("daemon-run"));
  auto base = listenUrl(daemon);
  INFO(daemon.output());
  REQUIRE(!base.empty());

  int status = 0;
  REQUIRE(eventually(
      [&] {
        get(base, "/readyz", &status);
        return status == 200;
      },
      30s));
  // /metrics is served from a snapshot up to a second old (MetricsSnapshot freshness), so it may
  // trail /readyz by that much.
  std::string metrics;
  CHECK(eventually(
      [&] {
        metrics = get(base, "/metrics");
        return allWatches(metrics, "management", kManagementResources, 1) &&
               allWatches(metrics, "worker-1", kWorkerResources, 1);
      },
      10s));
  CHECK(metrics.find("firstwork_build_info{") != std::string::npos);
  // The process's own figures, under the names every exporter's dashboards use (docs/metrics.md).
  CHECK(metrics.find("# TYPE process_cpu_seconds_total counter\n") != std::string::npos);
  for (const char* gauge : {"process_resident_memory_bytes", "process_virtual_memory_bytes",
                            "process_start_time_seconds", "process_open_fds", "process_max_fds"}) {
    INFO(gauge);
    CHECK(metrics.find("# TYPE " + std::string(gauge) + " gauge\n") != std::string::npos);
  }
  {
    // The daemon holds its watches' sockets and its store: a dozen descriptors at least, and a
    // few MiB resident.
    auto value = [&](const std::string& name) {
      const size_t at = metrics.find("\n" + name + " ");
      return at == std::string::npos ? -1.0 : std::stod(metrics.substr(at + name.size() + 2));
    };
    CHECK(value("process_open_fds") >= 10);
    CHECK(value("process_resident_memory_bytes") >= 4 << 20);
    CHECK(value("process_cpu_seconds_total") > 0);
  }
  // Per-worker counters exist at 0 before the first incident, so increase() sees it.
  CHECK(metrics.find("firstwork_recoveries_total{cluster=\"worker-1\",outcome=\"failed\"} 0") !=
        std::string::npos);
  // Incident figures are per device class and unit; each starts at 0 once its class exists —
  // here the node's 8 shares and the 2 GPUs behind them, never 8 GPUs.
  CHECK(eventually(
      [&] {
        metrics = get(base, "/metrics");
        return metrics.find("firstwork_gpus{cluster=\"worker-1\",device_class=\"nvidia.com/gpu.shared\","
                            "state=\"usable\",unit=\"share\"} 8") != std::string::npos;
      },
      10s));
  CHECK(metrics.find("firstwork_gpus{cluster=\"worker-1\",device_class=\"nvidia.com/gpu.shared\","
                     "state=\"usable\",unit=\"gpu\"} 2") != std::string::npos);
  CHECK(metrics.find("device_class=\"nvidia.com/gpu\"") == std::string::npos);
  CHECK(metrics.find("firstwork_recovery_stranded_gpu_seconds_total{cluster=\"worker-1\","
                     "device_class=\"nvidia.com/gpu.shared\",unit=\"share\"} 0") != std::string::npos);
  CHECK(metrics.find("firstwork_recovery_stranded_gpu_seconds_total{cluster=\"worker-1\","
                     "device_class=\"nvidia.com/gpu.shared\",unit=\"gpu\"} 0") != std::string::npos);
  CHECK(metrics.find("firstwork_gpu_nodes{cluster=\"worker-1\",mode=\"time-slicing\"} 1") !=
        std::string::npos);
  CHECK(metrics.find("firstwork_recoveries_total{cluster=\"management\"") == std::string::npos);
  get(base, "/healthz", &status);
  CHECK(status == 200);

  // /metrics is valid exposition text: promtool (Debian's prometheus package) checks it.
  {
    auto file = dir.write("metrics.txt", metrics);
    Subprocess promtool({"/bin/sh", "-c", "/usr/bin/promtool check metrics < " + file},
                        (dir.path / "promtool.log").string());
    auto code = promtool.wait(30s);
    INFO(promtool.output());
    CHECK(code == std::optional<int>(0));
  }

  // The JSON API: every endpoint answers, bad parameters are a 400 that names them, unknown
  // paths a 404 (docs/api.md).
  for (const char* path : {"/api/v1/incidents", "/api/v1/reclaims", "/api/v1/workloads",
                           "/api/v1/duplicates", "/api/v1/pools", "/api/v1/capacity?cluster=management",
                           "/api/v1/nodes?cluster=management",
                           "/api/v1/workloads?cluster=management&cluster_queue=q&since="
                           "2026-01-01T00:00:00Z&limit=10"}) {
    INFO(path);
    auto body = get(base, path, &status);
    CHECK(status == 200);
    CHECK(body.find("\"items\":[") != std::string::npos);
    CHECK(body.find("\"count\":0") != std::string::npos);
  }
  // Capacity per unit and the node's sharing mode (docs/api.md).
  auto capacity = get(base, "/api/v1/capacity?cluster=worker-1", &status);
  CHECK(status == 200);
  CHECK(capacity.find("\"count\":2") != std::string::npos);  // shares, and the GPUs behind them
  CHECK(capacity.find("\"unit\":\"share\"") != std::string::npos);
  CHECK(capacity.find("\"usable\":8") != std::string::npos);
  CHECK(capacity.find("\"usable\":2") != std::string::npos);
  auto nodes = get(base, "/api/v1/nodes", &status);
  CHECK(status == 200);
  CHECK(nodes.find("\"mode\":\"time-slicing\"") != std::string::npos);
  CHECK(nodes.find("\"physical_devices\":2") != std::string::npos);
  CHECK(nodes.find("\"replicas\":4") != std::string::npos);
  auto bad = get(base, "/api/v1/incidents?since=yesterday", &status);
  CHECK(status == 400);
  CHECK(bad.find("since") != std::string::npos);
  bad = get(base, "/api/v1/pools?cluster_queue=q", &status);
  CHECK(status == 400);
  CHECK(bad.find("unknown query parameter \\\"cluster_queue\\\"") != std::string::npos);
  bad = get(base, "/api/v1/workloads?limit=0", &status);
  CHECK(status == 400);
  CHECK(bad.find("limit") != std::string::npos);
  get(base, "/api/v1/nothing-here", &status);
  CHECK(status == 404);

  // The worker goes away: its watches turn to 0, the management's stay up.
  worker.stop();
  CHECK(eventually([&] { return allWatches(get(base, "/metrics"), "worker-1", kWorkerResources, 0); },
                   40s));
  CHECK(allWatches(get(base, "/metrics"), "management", kManagementResources, 1));
  // ... and comes back on the same address: every watch recovers.
  worker.start();
  CHECK(eventually([&] { return allWatches(get(base, "/metrics"), "worker-1", kWorkerResources, 1); },
                   90s));
  auto after = get(base, "/metrics");
  CHECK(after.find("firstwork_watch_restarts_total{cluster=\"worker-1\"") != std::string::npos);
  // Every retry waited within watch.backoffInitial..backoffMax (client-go's 0.8-30 s otherwise):
  // with up to 100 % jitter, at least 100 ms and never more than 400 ms.
  {
    const std::string out = daemon.output();
    const std::regex delay("backoff_ms=([0-9]+)");
    std::vector<long> delays;
    for (auto it = std::sregex_iterator(out.begin(), out.end(), delay); it != std::sregex_iterator(); ++it)
      delays.push_back(std::stol((*it)[1].str()));
    INFO("retry delays (ms):" << [&] {
      std::string s;
      for (long d : delays) s += " " + std::to_string(d);
      return s;
    }());
    CHECK(delays.size() >= 5);  // five worker resources each failed at least once
    for (long d : delays) CHECK((d == 0 || (d >= 100 && d <= 400)));  // 0: a 401 retried at once
    CHECK(std::count_if(delays.begin(), delays.end(), [](long d) { return d > 0; }) >= 5);
  }

  // Tokens never reach the logs.
  auto log = daemon.output();
  CHECK(log.find(mo.token) == std::string::npos);
  CHECK(log.find(wo.token) == std::string::npos);

  daemon.signal(SIGTERM);
  auto code = daemon.wait(30s);
  REQUIRE(code.has_value());
  CHECK(*code == 0);
}

TEST_CASE("firstworkd check-config reports every mistake of a bad config and exits 2",
          "[integration]") {
  TempDir dir("firstwork-it");
  auto cfg = dir.write("bad.yaml",
                       "clusters:\n"
                       "  - name: Management_1\n"      // 1: not a DNS-1123 name
                       "    role: management\n"
                       "    inCluster: true\n"
                       "  - name: w1\n"
                       "    role: wrker\n"             // 2: unknown role
                       "    inCluster: true\n"
                       "recovery:\n"
                       "  budget: soon\n");            // 3: not a duration
  Subprocess p({FIRSTWORKD_PATH, "check-config", "--config", cfg}, (dir.path / "out.log").string());
  auto code = p.wait(30s);
  REQUIRE(code.has_value());
  CHECK(*code == 2);
  auto out = p.output();
  INFO(out);
  CHECK(out.find("clusters[0].name") != std::string::npos);
  CHECK(out.find("clusters[1].role") != std::string::npos);
  CHECK(out.find("recovery.budget") != std::string::npos);

  auto good = dir.write("good.yaml", "clusters:\n  - name: c1\n    role: standalone\n    inCluster: true\n");
  Subprocess ok({FIRSTWORKD_PATH, "check-config", "--config", good}, (dir.path / "ok.log").string());
  CHECK(ok.wait(30s) == std::optional<int>(0));
}

TEST_CASE("firstworkd --version and --help answer without a config", "[integration]") {
  TempDir dir("firstwork-it");
  Subprocess v({FIRSTWORKD_PATH, "--version"}, (dir.path / "v.log").string());
  CHECK(v.wait(30s) == std::optional<int>(0));
  CHECK(v.output().find("firstworkd 0.1.0") == 0);
  Subprocess h({FIRSTWORKD_PATH, "--help"}, (dir.path / "h.log").string());
  CHECK(h.wait(30s) == std::optional<int>(0));
  CHECK(h.output().find("check-config") != std::string::npos);
  Subprocess bad({FIRSTWORKD_PATH, "run", "--bogus"}, (dir.path / "b.log").string());
  CHECK(bad.wait(30s) == std::optional<int>(2));
}

TEST_CASE("firstworkd demo, as the README runs it, shows stranded GPU-seconds rising as drills "
          "complete",
          "[integration][demo]") {
  TempDir dir("firstwork-it");
  // The README's run command is `scripts/demo.sh`, which builds and then execs `firstworkd demo`
  // with its arguments; here at 120x so the first two drills complete within seconds.
  Subprocess demo({FIRSTWORKD_PATH, "demo", "--speed", "120", "--listen", "127.0.0.1:0"},
                  testLogPath("demo"));
  std::string base;
  eventually(
      [&] {
        std::smatch m;
        auto out = demo.output();
        static const std::regex re("metrics: +(http://127\\.0\\.0\\.1:[0-9]+)/metrics");
        if (std::regex_search(out, m, re)) base = m[1];
        return !base.empty() || !demo.running();
      },
      30s);
  INFO(demo.output());
  REQUIRE(!base.empty());
  auto stranded = [&] {
    auto text = get(base, "/metrics");
    static const std::regex re(
        "firstwork_recovery_stranded_gpu_seconds_total\\{cluster=\"worker-1\",device_class=\"nvidia\\."
        "com/gpu\",unit=\"gpu\"\\} ([0-9.e+]+)");
    std::smatch m;
    return std::regex_search(text, m, re) ? std::stod(m[1]) : -1.0;
  };
  // The headline drills play first: the baseline reconnection (320 GPU-min = 19,200 GPU-s), then
  // the improved one (128 GPU-min = 7,680 GPU-s): 19,200, then 26,880.
  CHECK(eventually([&] { return stranded() == 0; }, 20s));
  CHECK(eventually([&] { return stranded() == 19200; }, 90s));
  CHECK(eventually([&] { return stranded() == 26880; }, 90s));
  demo.signal(SIGINT);
  CHECK(demo.wait(30s) == std::optional<int>(0));
}
