#include "firstwork/config/config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

using namespace firstwork;
using namespace firstwork::config;
using namespace std::chrono_literals;

namespace {

const ValidateOptions kNoFiles{.checkFiles = false};

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "fw-config-XXXXXX").string();
    path = mkdtemp(templ.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(path / name) << content;
    return (path / name).string();
  }
};

std::vector<std::string> lines(const ConfigProblems& problems) {
  std::vector<std::string> out;
  for (const auto& p : problems) out.push_back(p.toString());
  return out;
}

std::string kubeconfigYaml(bool insecure) {
  return std::string(R"(apiVersion: v1
kind: Config
current-context: main
clusters:
- name: c1
  cluster:
    server: https://127.0.0.1:6443
)") + (insecure ? "    insecure-skip-tls-verify: true\n" : "") +
         R"(contexts:
- name: main
  context: {cluster: c1, user: u1}
users:
- name: u1
  user: {token: abc}
)";
}

void collectKeys(const YAML::Node& node, const std::string& prefix, std::set<std::string>& out) {
  if (node.IsMap()) {
    for (const auto& e : node) {
      std::string key = prefix.empty() ? e.first.Scalar() : prefix + "." + e.first.Scalar();
      out.insert(key);
      collectKeys(e.second, key, out);
    }
  } else if (node.IsSequence()) {
    for (const auto& e : node) {
      if (e.IsMap()) collectKeys(e, prefix + "[]", out);
    }
  }
}

}  // namespace

TEST_CASE("an empty document gets every default and asks for clusters", "[config]") {
  auto load = loadConfigFromStringDetailed("", kNoFiles);
  REQUIRE(lines(load.problems) ==
          std::vector<std::string>{"clusters: at least one cluster is required"});
  const Config& c = load.config;
  CHECK(c.usefulWork.annotation);
  CHECK(c.usefulWork.podConditionType.empty());
  CHECK_FALSE(c.usefulWork.readyProxy);
  CHECK(c.gpu.extendedResources == std::vector<std::string>{"nvidia.com/gpu"});
  CHECK(c.gpu.draDrivers == std::vector<std::string>{"gpu.nvidia.com"});
  CHECK(c.recovery.budget == 30min);
  CHECK(c.recovery.stuckAfter == 10min);
  CHECK(c.metrics.buckets ==
        std::vector<double>{5, 15, 30, 60, 120, 180, 300, 600, 900, 1200, 1800, 3600, 7200, 14400});
  CHECK(c.store.path == "/var/lib/firstwork/firstwork.db");
  CHECK(c.store.retention == std::chrono::hours(24 * 90));
  CHECK(c.server.listen == "0.0.0.0:9500");
  CHECK(c.watch.pageSize == 500);
  CHECK(c.watch.backoffInitial == 800ms);  // client-go's reflector
  CHECK(c.watch.backoffMax == 30s);
  CHECK(c.logging.level == log::Level::Info);
  CHECK(c.shard.count == 1);
}

TEST_CASE("a config with three different mistakes reports all three", "[config]") {
  const char* yaml = R"(
clusters:
  - name: mgmt
    role: management
    inCluster: true
  - name: w1
    role: wroker
    inCluster: true
recovery:
  budget: 30 minutes
server:
  listen: 0.0.0.0
)";
  auto load = loadConfigFromStringDetailed(yaml, kNoFiles);
  CHECK(lines(load.problems) ==
        std::vector<std::string>{
            "clusters[1].role: must be one of management, worker, standalone",
            "recovery.budget: invalid duration \"30 minutes\": missing unit after a number "
            "(examples: 30s, 10m, 1h30m, 90d)",
            "server.listen: invalid listen address \"0.0.0.0\": missing :port (expected "
            "host:port, [ipv6]:port or :port)"});
  auto result = loadConfigFromString(yaml, kNoFiles);
  REQUIRE_FALSE(result.ok());
  // The Result form joins the same problems, one per line, for `check-config`.
  CHECK(std::count(result.error().begin(), result.error().end(), '\n') == 2);
}

TEST_CASE("unknown and repeated keys are rejected with their path", "[config]") {
  const char* yaml = R"(
clusters:
  - name: a
    role: standalone
    inCluster: true
    kubeConfig: /x
usefulWork:
  prometheus:
    urll: http://p
watch:
  pageSize: 10
  pageSize: 20
colour: blue
)";
  auto load = loadConfigFromStringDetailed(yaml, kNoFiles);
  CHECK(lines(load.problems) ==
        std::vector<std::string>{"colour: unknown key",
                                 "clusters[0].kubeConfig: unknown key (did you mean \"kubeconfig\"?)",
                                 "usefulWork.prometheus.urll: unknown key (did you mean \"url\"?)",
                                 "watch.pageSize: key given more than once"});
}

TEST_CASE("a built-in pod condition the decoder drops is refused as the first-work condition",
          "[config]") {
  const auto problems = [](const std::string& type) {
    return lines(loadConfigFromStringDetailed("clusters:\n  - {name: a, role: standalone, inCluster: true}\n"
                                              "usefulWork:\n  podConditionType: " + type + "\n",
                                              kNoFiles)
                     .problems);
  };
  CHECK(problems("ContainersReady") ==
        std::vector<std::string>{
            "usefulWork.podConditionType: ContainersReady is a built-in pod condition, set before a "
            "container's work begins, and not kept; name a condition the workload sets when its work "
            "begins, or use readyProxy"});
  CHECK(problems("Initialized").size() == 1);
  CHECK(problems("PodReadyToStartContainers").size() == 1);
  CHECK(problems("firstwork.dev/FirstWork").empty());
  CHECK(problems("Ready").empty());  // kept: the decoder keeps Ready
}

TEST_CASE("wrong value types are reported per key", "[config]") {
  const char* yaml = R"(
clusters:
  - name: a
    role: standalone
    inCluster: maybe
metrics:
  buckets: [5, ten, 30]
watch:
  pageSize: 1.5
shard: {index: -1}
logging: {level: loud}
gpu: {extendedResources: nvidia.com/gpu}
)";
  auto load = loadConfigFromStringDetailed(yaml, kNoFiles);
  CHECK(lines(load.problems) ==
        std::vector<std::string>{
            "clusters[0].inCluster: must be true or false",
            "gpu.extendedResources: must be a list of strings",
            "metrics.buckets[1]: must be a number",
            "watch.pageSize: must be an integer",
            "logging.level: must be one of trace, debug, info, warn, error, off",
            "shard.index: must be a non-negative integer",
            // inCluster kept its default (false) and no kubeconfig is set:
            "clusters[0]: set either kubeconfig or inCluster: true"});
}

TEST_CASE("YAML syntax errors carry line and column", "[config]") {
  auto load = loadConfigFromStringDetailed("clusters: [\n  - a\n", kNoFiles);
  REQUIRE(load.problems.size() == 1);
  CHECK(load.problems[0].path.empty());
  CHECK(load.problems[0].message.rfind("YAML syntax error at line", 0) == 0);
}

TEST_CASE("cluster topology rules are checked together", "[config]") {
  const char* yaml = R"(
clusters:
  - {name: m1, role: management, inCluster: true}
  - {name: m2, role: management, inCluster: true, context: x}
  - {name: m1, role: standalone, kubeconfig: /k, inCluster: true}
  - {name: Bad_Name, role: worker}
  - {name: w2, role: worker, inCluster: true, multiKueueClusterName: bad_name}
  - {name: s1, role: standalone, inCluster: true, multiKueueClusterName: s1}
)";
  auto load = loadConfigFromStringDetailed(yaml, kNoFiles);
  CHECK(lines(load.problems) ==
        std::vector<std::string>{
            "clusters[1].role: only one management cluster is allowed (clusters[0] is one)",
            "clusters[1].context: only valid together with kubeconfig",
            "clusters[2].name: duplicate cluster name \"m1\" (also clusters[0])",
            "clusters[2]: kubeconfig and inCluster: true exclude each other",
            "clusters[3].name: must be a DNS-1123 subdomain: lower-case letters, digits, '-' and "
            "'.', starting and ending with a letter or digit",
            "clusters[3]: set either kubeconfig or inCluster: true",
            "clusters[3].multiKueueClusterName: must be a DNS-1123 subdomain",
            "clusters[4].multiKueueClusterName: must be a DNS-1123 subdomain",
            "clusters[5].multiKueueClusterName: only valid for role worker"});
}

TEST_CASE("a worker needs a management cluster and workers default their MultiKueue name",
          "[config]") {
  auto alone = loadConfigFromStringDetailed(
      "clusters: [{name: w1, role: worker, inCluster: true}]", kNoFiles);
  CHECK(lines(alone.problems) ==
        std::vector<std::string>{
            "clusters[0].role: a worker needs a cluster with role management in clusters[]"});

  auto ok = loadConfigFromString(R"(
clusters:
  - {name: m, role: management, inCluster: true}
  - {name: w1, role: worker, inCluster: true}
  - {name: w2, role: worker, inCluster: true, multiKueueClusterName: w1}
)",
                                 kNoFiles);
  REQUIRE_FALSE(ok.ok());
  CHECK(ok.error() == "clusters[2].multiKueueClusterName: \"w1\" already names clusters[1]");

  auto fine = loadConfigFromString(R"(
clusters:
  - {name: m, role: management, inCluster: true}
  - {name: w1, role: worker, inCluster: true}
)",
                                   kNoFiles);
  REQUIRE(fine.ok());
  CHECK(fine->clusters[1].multiKueueClusterName == "w1");
  CHECK(fine->clusters[0].multiKueueClusterName.empty());
}

TEST_CASE("value rules cover buckets, budgets, probe, GPU names, logging and shard", "[config]") {
  const char* yaml = R"(
clusters: [{name: a, role: standalone, inCluster: true}]
usefulWork:
  prometheus:
    url: http://prometheus:9090
    query: 'x{pod="{{pod}}"}'
    bearerTokenFile: /t
    podLabel: "9pod"
    clusterLabel: "cluster-name"
    interval: 10s
    timeout: 20s
gpu:
  extendedResources: [gpu]
  deviceClassMappings:
    - {deviceClass: c1, driver: d.example.com}
    - {deviceClass: c1}
recovery: {budget: "0"}
metrics:
  buckets: [5, 15, 15, -1]
  lagBuckets: []
logging: {redact: true}
shard: {index: 3, count: 3}
)";
  auto load = loadConfigFromStringDetailed(yaml, kNoFiles);
  CHECK(lines(load.problems) ==
        std::vector<std::string>{
            "usefulWork.prometheus.bearerTokenFile: refusing to send a bearer token over plain "
            "http; use an https:// url",
            "usefulWork.prometheus.query: placeholders such as {{pod}} are not supported: write "
            "one query whose series carry the namespaceLabel and podLabel labels",
            "usefulWork.prometheus.podLabel: must be a label name",
            "usefulWork.prometheus.clusterLabel: must be a label name",
            "usefulWork.prometheus.timeout: must not exceed usefulWork.prometheus.interval (10s)",
            "gpu.extendedResources[0]: must be an extended resource name such as nvidia.com/gpu",
            "gpu.deviceClassMappings[1].deviceClass: \"c1\" is already mapped by "
            "gpu.deviceClassMappings[0]",
            "gpu.deviceClassMappings[1].driver: required",
            "recovery.budget: must be longer than 0",
            "metrics.buckets[2]: must be greater than the previous bucket (15)",
            "metrics.buckets[3]: must be a positive finite number of seconds",
            "metrics.lagBuckets: must list at least one bucket",
            "logging.redact: needs logging.redactSalt or logging.redactSaltFile: without a secret "
            "salt, hashed names can be recovered by hashing likely names",
            "shard.index: must be less than shard.count (3)"});
}

TEST_CASE("the retry backoff is read and checked", "[config]") {
  const std::string base = "clusters: [{name: a, role: standalone, inCluster: true}]\n";
  auto ok = loadConfigFromStringDetailed(base + "watch: {backoffInitial: 10ms, backoffMax: 250ms}\n", kNoFiles);
  INFO(formatProblems(ok.problems));
  REQUIRE(ok.ok());
  CHECK(ok.config.watch.backoffInitial == 10ms);
  CHECK(ok.config.watch.backoffMax == 250ms);
  // Equal bounds are a fixed delay.
  CHECK(loadConfigFromStringDetailed(base + "watch: {backoffInitial: 1s, backoffMax: 1s}\n", kNoFiles).ok());

  CHECK(lines(loadConfigFromStringDetailed(base + "watch: {backoffInitial: 2s, backoffMax: 1s}\n", kNoFiles)
                  .problems) ==
        std::vector<std::string>{"watch.backoffMax: must be at least watch.backoffInitial (2000 ms), is 1000 ms"});
  CHECK(lines(loadConfigFromStringDetailed(base + "watch: {backoffInitial: \"0\", backoffMax: ten}\n", kNoFiles)
                  .problems) ==
        std::vector<std::string>{"watch.backoffMax: invalid duration \"ten\": expected a number (examples: 30s, 10m, "
                                 "1h30m, 90d)",
                                 "watch.backoffInitial: must be longer than 0"});
}

TEST_CASE("the documented example config loads and documents every key", "[config][example]") {
  const std::string path = std::string(FIRSTWORK_SOURCE_DIR) + "/config/firstwork.example.yaml";
  auto load = loadConfigDetailed(path, kNoFiles);
  INFO(formatProblems(load.problems));
  REQUIRE(load.ok());
  const Config& c = load.config;
  REQUIRE(c.clusters.size() == 3);
  CHECK(c.clusters[0].role == ClusterRole::Management);
  CHECK(c.clusters[0].context == "manager-admin");
  CHECK(c.clusters[1].multiKueueClusterName == "worker-1");
  CHECK(c.clusters[2].inCluster);
  CHECK(c.server.listen == "0.0.0.0:9500");
  CHECK(c.gpu.deviceClassMappings.size() == 1);

  // Every key the parser accepts appears in the example, and nothing else.
  std::set<std::string> documented;
  collectKeys(YAML::LoadFile(path), "", documented);
  std::vector<std::string> known = configKeyPaths();
  CHECK(std::vector<std::string>(documented.begin(), documented.end()) == known);
}

TEST_CASE("files are checked, relative paths resolve against the config file", "[config][files]") {
  TempDir dir;
  dir.write("good.yaml", kubeconfigYaml(false));
  dir.write("insecure.yaml", kubeconfigYaml(true));
  dir.write("empty-token", "\n");
  std::string path = dir.write("firstwork.yaml", R"(
clusters:
  - {name: m, role: management, kubeconfig: good.yaml}
  - {name: w1, role: worker, kubeconfig: insecure.yaml}
  - {name: w2, role: worker, kubeconfig: insecure.yaml, insecureSkipTLSVerifyAllowed: true}
  - {name: w3, role: worker, kubeconfig: good.yaml, context: nope}
  - {name: w4, role: worker, kubeconfig: missing.yaml}
server:
  apiBearerTokenFile: empty-token
  tlsCertFile: cert.pem
)");
  auto load = loadConfigDetailed(path);
  std::string d = dir.path.string();
  CHECK(load.config.clusters[0].kubeconfig == d + "/good.yaml");
  CHECK(lines(load.problems) ==
        std::vector<std::string>{
            "clusters[1].kubeconfig: cluster \"c1\" in \"" + d +
                "/insecure.yaml\" sets insecure-skip-tls-verify; set "
                "clusters[1].insecureSkipTLSVerifyAllowed: true to accept a connection without "
                "TLS verification",
            "clusters[3].context: context \"nope\" not found in \"" + d + "/good.yaml\"",
            "clusters[4].kubeconfig: cannot read \"" + d +
                "/missing.yaml\": No such file or directory",
            "server.tlsKeyFile: required with server.tlsCertFile",
            "server.tlsCertFile: cannot read \"" + d + "/cert.pem\": No such file or directory",
            "server.apiBearerTokenFile: \"" + d + "/empty-token\" is empty"});
}

TEST_CASE("a missing config file is one clear problem", "[config][files]") {
  auto r = loadConfig("/nonexistent/firstwork.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error() ==
        "cannot read config file \"/nonexistent/firstwork.yaml\": No such file or directory");
}

TEST_CASE("logging options read the salt file", "[config]") {
  TempDir dir;
  LoggingConfig logging;
  logging.redact = true;
  logging.level = log::Level::Debug;
  logging.redactSaltFile = dir.write("salt", "  pepper\n");
  auto options = loggingOptions(logging);
  REQUIRE(options.ok());
  CHECK(options->redact);
  CHECK(options->redactSalt == "pepper");
  CHECK(options->level == log::Level::Debug);
  logging.redactSaltFile = (dir.path / "none").string();
  CHECK_FALSE(loggingOptions(logging).ok());
}

TEST_CASE("shards split workers by a stable hash and all watch the manager", "[config][shard]") {
  ClusterConfig manager;
  manager.name = "m";
  manager.role = ClusterRole::Management;
  ClusterConfig a;
  a.name = "a";
  a.role = ClusterRole::Worker;
  // FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (the FNV reference test vector)
  // = 12638187200555641996, and 12638187200555641996 mod 3 = 1 (digit sum 88, 88 mod 3 = 1).
  CHECK_FALSE(shardOwnsCluster({0, 3}, a));
  CHECK(shardOwnsCluster({1, 3}, a));
  CHECK_FALSE(shardOwnsCluster({2, 3}, a));
  for (uint32_t i = 0; i < 3; ++i) CHECK(shardOwnsCluster({i, 3}, manager));
  CHECK(shardOwnsCluster({0, 1}, a));
}

TEST_CASE("problem lines name the path, or stand alone for the document", "[config]") {
  CHECK(ConfigProblem{"clusters[1].role", "x"}.toString() == "clusters[1].role: x");
  CHECK(ConfigProblem{"", "YAML syntax error"}.toString() == "YAML syntax error");
  CHECK(formatProblems({{"a", "1"}, {"b", "2"}}) == "a: 1\nb: 2");
}
