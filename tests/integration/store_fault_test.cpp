// A full disk or a read-only store must not stop the daemon (issue #4): it logs a clear error,
// counts firstwork_store_errors_total, keeps serving /metrics with live gauges, exports no fact it
// could not commit, and once the disk is back commits what it kept and exports it — the drill's
// figures come out as in an undisturbed run.
//
// The store lives on a small tmpfs mounted by the test (CI runs as root, like `scripts/test.sh`).
// "Full" is a filler file that takes every free block; "read-only" a read-only bind mount.
#include <sys/mount.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "firstwork/core/scaled_clock.hpp"
#include "firstwork/http/httplib.hpp"
#include "firstwork/scenario/scenario.hpp"
#include "firstwork/scenario/scenario_player.hpp"
#include "firstwork/sim/api_server.hpp"
#include "support/subprocess.hpp"
#include "support/test_logs.hpp"

using namespace firstwork;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using nlohmann::json;
using firstwork::testing::eventually;
using firstwork::testing::Subprocess;

namespace {

/// A tmpfs of `sizeKiB` mounted on a fresh directory, unmounted and removed at the end.
struct SmallDisk {
  fs::path dir;
  bool mounted = false;
  explicit SmallDisk(int sizeKiB) {
    char tmpl[] = "/tmp/firstwork-storefault-XXXXXX";
    dir = mkdtemp(tmpl);
    std::string opts = "size=" + std::to_string(sizeKiB) + "k,mode=0755";
    if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, opts.c_str()) == 0) mounted = true;
    else FAIL("cannot mount a tmpfs for the store (this test needs root, as CI has): " << std::strerror(errno));
  }
  ~SmallDisk() {
    if (mounted) ::umount2(dir.c_str(), MNT_DETACH);
    fs::remove_all(dir);
  }
  /// Takes every free block with a filler file; returns its size.
  uintmax_t fill() {
    std::ofstream f(dir / "filler", std::ios::binary);
    std::string block(64 * 1024, 'x');
    while (f.write(block.data(), static_cast<std::streamsize>(block.size()))) {
    }
    f.close();
    std::error_code ec;
    return fs::file_size(dir / "filler", ec);
  }
  void unfill() { fs::remove(dir / "filler"); }
};

std::string get(const std::string& base, const std::string& path) {
  httplib::Client c(base);
  c.set_connection_timeout(2);
  c.set_read_timeout(10);
  auto r = c.Get(path.c_str());
  return r && r->status == 200 ? r->body : std::string();
}

/// The value of one sample line (exact series text up to the value), or -1 when absent.
double sample(const std::string& metrics, const std::string& series) {
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  return -1;
}

/// Sum over every series of `name` (any labels).
double sumOf(const std::string& metrics, const std::string& name) {
  double sum = 0;
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name + "{", 0) == 0 || line.rfind(name + " ", 0) == 0)
      sum += std::stod(line.substr(line.rfind(' ') + 1));
  return sum;
}

/// The estate of one drill and a daemon whose store lives on `disk`.
struct Rig {
  scenario::Scenario sc;
  std::map<std::string, std::unique_ptr<sim::ApiServer>> servers;
  scenario::ServerMap map;
  fs::path work;
  std::unique_ptr<Subprocess> daemon;
  std::string base;
  std::unique_ptr<ScaledClock> clock;
  std::unique_ptr<scenario::ScenarioPlayer> player;

  Rig(const std::string& scenarioName, const fs::path& storeDir) {
    auto loaded = scenario::loadScenario(std::string(FIRSTWORK_SOURCE_DIR) + "/config/scenarios/" +
                                         scenarioName + ".yaml");
    REQUIRE(loaded.ok());
    sc = std::move(*loaded);
    char tmpl[] = "/tmp/firstwork-storefault-work-XXXXXX";
    work = mkdtemp(tmpl);
    std::string config = "clusters:\n";
    for (const auto& c : sc.clusters) {
      sim::ApiServerOptions o;
      o.name = c.name;
      o.token = "store-fault-test-" + c.name;
      auto s = std::make_unique<sim::ApiServer>(o);
      s->start();
      auto kc = (work / (c.name + ".kubeconfig")).string();
      std::ofstream(kc) << s->kubeconfig(c.name);
      config += "  - name: " + c.name + "\n    role: " +
                (c.role == scenario::ClusterRole::Manager  ? "management"
                 : c.role == scenario::ClusterRole::Worker ? "worker"
                                                           : "standalone") +
                "\n    kubeconfig: " + kc + "\n";
      map.emplace(c.name, std::ref(*s));
      servers.emplace(c.name, std::move(s));
    }
    config += "store:\n  path: " + (storeDir / "firstwork.db").string() +
              "\nserver:\n  listen: 127.0.0.1:0\n";
    std::ofstream(work / "firstwork.yaml") << config;
    daemon = std::make_unique<Subprocess>(
        std::vector<std::string>{FIRSTWORKD_PATH, "run", "--config", (work / "firstwork.yaml").string()},
        firstwork::testing::testLogPath("store-fault"));
    eventually(
        [&] {
          std::smatch m;
          auto out = daemon->output();
          static const std::regex re("\"listen\":\"(http://127\\.0\\.0\\.1:[0-9]+)\"");
          if (std::regex_search(out, m, re)) base = m[1];
          return !base.empty() || !daemon->running();
        },
        30s);
    INFO(daemon->output());
    REQUIRE(!base.empty());
    REQUIRE(eventually([&] { return !get(base, "/readyz").empty(); }, 30s));
  }
  ~Rig() {
    if (player) player->stop();
    if (daemon && daemon->running()) {
      daemon->signal(SIGTERM);
      daemon->wait(30s);
    }
    fs::remove_all(work);
  }

  /// Plays the drill 120x fast, its clock set back by its length (every timestamp in the past).
  void play() {
    clock = std::make_unique<ScaledClock>(120.0, std::chrono::system_clock::now() - sc.duration,
                                          std::chrono::steady_clock::now());
    player = std::make_unique<scenario::ScenarioPlayer>(sc, map, *clock);
    REQUIRE(player->start().ok());
  }
  void waitPlayed() {
    REQUIRE(player->waitUntilDone(
        std::chrono::duration_cast<std::chrono::milliseconds>(clock->toReal(sc.duration)) + 60s));
  }
  std::string metrics() { return get(base, "/metrics"); }
  std::string log() {
    auto out = daemon->output();
    return out.substr(out.size() > 8000 ? out.size() - 8000 : 0);
  }
};

}  // namespace

TEST_CASE("a full disk under the store: errors counted, exporting goes on, nothing lost once it frees up",
          "[integration][store]") {
  SmallDisk disk(8 * 1024);
  Rig rig("reconnection-baseline", disk.dir);
  INFO("daemon log (tail):\n" << rig.log());
  REQUIRE(disk.fill() > 0);

  rig.play();
  // The drill's incident closes while nothing can be written: the store errors are counted and
  // logged, and the closed incident is NOT exported (it is not committed), while the live
  // integral of stranded GPUs keeps moving on /metrics.
  const std::string errors = "firstwork_store_errors_total{operation=\"write\"}";
  REQUIRE(eventually([&] { return sample(rig.metrics(), errors) >= 1; }, 60s));
  rig.waitPlayed();
  auto during = rig.metrics();
  CHECK(sample(during, "firstwork_recoveries_total{cluster=\"worker-1\",outcome=\"recovered\"}") == 0);
  CHECK(sumOf(during, "firstwork_stranded_gpu_seconds_total") > 0);
  CHECK(get(rig.base, "/healthz") != "");
  auto logText = rig.daemon->output();
  CHECK(logText.find("store write failed") != std::string::npos);
  // Said once, not once per retry.
  CHECK(logText.find("store write failed") == logText.rfind("store write failed"));

  disk.unfill();
  REQUIRE(eventually(
      [&] {
        return sample(rig.metrics(), "firstwork_recoveries_total{cluster=\"worker-1\",outcome=\"recovered\"}") == 1;
      },
      60s));
  auto after = rig.metrics();
  // reconnection-baseline.yaml: 16 GPUs idle 8 min + 16 GPUs idle 12 min = 320 GPU-min = 19,200 GPU-s.
  CHECK(sample(after, "firstwork_recovery_stranded_gpu_seconds_total{cluster=\"worker-1\",device_class=\"nvidia.com/gpu\",unit=\"gpu\"}") ==
        Approx(19200));
  CHECK(rig.daemon->output().find("store writes recovered") != std::string::npos);
  auto incidents = json::parse(get(rig.base, "/api/v1/incidents"));
  REQUIRE(incidents["items"].size() == 1);
  CHECK(incidents["items"][0]["stranded_gpu_seconds"].get<double>() == Approx(19200));
  CHECK(incidents["items"][0]["outcome"] == "recovered");
}

TEST_CASE("a read-only store volume at start: a clear error naming the store, exit 1", "[integration][store]") {
  // Linux refuses to make a mount read-only while files on it are open for writing (EBUSY), so a
  // store cannot be flipped read-only under a running daemon here; what an operator meets is a
  // read-only volume at (re)start. The daemon must say so plainly instead of running without
  // durability (Kubernetes then shows the pod failing with that message).
  SmallDisk disk(1024);
  REQUIRE(::mount(disk.dir.c_str(), disk.dir.c_str(), nullptr, MS_BIND, nullptr) == 0);
  REQUIRE(::mount(nullptr, disk.dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) == 0);
  struct Unbind {
    fs::path d;
    ~Unbind() { ::umount2(d.c_str(), MNT_DETACH); }
  } unbind{disk.dir};
  char tmpl[] = "/tmp/firstwork-storefault-cfg-XXXXXX";
  fs::path work = mkdtemp(tmpl);
  std::ofstream(work / "firstwork.yaml")
      << "clusters:\n  - name: gpu-a\n    role: standalone\n    kubeconfig: " << (work / "kc").string()
      << "\nstore:\n  path: " << (disk.dir / "firstwork.db").string() << "\nserver:\n  listen: 127.0.0.1:0\n";
  std::ofstream(work / "kc") << "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: "
                                "https://127.0.0.1:1\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\n"
                                "current-context: c\nusers:\n- name: u\n  user:\n    token: store-fault-token\n";
  Subprocess daemon({FIRSTWORKD_PATH, "run", "--config", (work / "firstwork.yaml").string()},
                    firstwork::testing::testLogPath("store-fault"));
  auto code = daemon.wait(30s);
  auto out = daemon.output();
  INFO(out);
  CHECK(code == std::optional<int>(1));
  CHECK(out.find((disk.dir / "firstwork.db").string()) != std::string::npos);
  CHECK(out.find("Read-only file system") != std::string::npos);
  CHECK(out.find("store-fault-token") == std::string::npos);
  fs::remove_all(work);
}
