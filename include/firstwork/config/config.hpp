#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "firstwork/core/result.hpp"
#include "firstwork/log/log.hpp"

namespace firstwork::config {

using namespace std::chrono_literals;

/// The daemon's default HTTP port (/metrics, /healthz, /readyz, /api/v1). 9500 is not taken by
/// any exporter commonly run next to Kueue (node_exporter 9100, DCGM exporter 9400, KSM 8080/8081).
inline constexpr uint16_t kDefaultPort = 9500;

enum class ClusterRole : uint8_t { Management, Worker, Standalone };
/// `management`, `worker`, `standalone`.
std::string_view roleName(ClusterRole role);

/// One Kubernetes cluster to watch (`clusters[]`).
struct ClusterConfig {
  std::string name;  // metric label `cluster`; DNS-1123 subdomain, unique
  ClusterRole role = ClusterRole::Standalone;
  std::string kubeconfig;  // path; relative paths are resolved against the config file's directory
  std::string context;     // kubeconfig context; empty = the file's current-context
  bool inCluster = false;  // service-account token + KUBERNETES_SERVICE_HOST; excludes kubeconfig
  /// Workers only: the MultiKueueCluster object naming this worker on the management cluster.
  /// Defaults to `name` when loading.
  std::string multiKueueClusterName;
  /// A kubeconfig with `insecure-skip-tls-verify: true` is refused unless this is set.
  bool insecureSkipTLSVerifyAllowed = false;
};

/// `usefulWork.prometheus`: the PromQL useful-work probe (design §4 signal 3). Enabled when `url`
/// is set. `query` is one instant (or range) query evaluated each `interval` that returns one
/// series per pod, identified by the `namespaceLabel` and `podLabel` labels — label matching, not
/// per-pod placeholders, so the cost is one request per interval whatever the number of pods.
struct PrometheusProbeConfig {
  std::string url;    // base URL, e.g. https://prometheus.monitoring:9090 (a path prefix is kept)
  std::string query;  // e.g. `sum by (namespace, pod) (rate(training_steps_total[1m]))`
  std::string namespaceLabel = "namespace";
  std::string podLabel = "pod";
  /// Optional label that names the cluster a series' pod runs on (e.g. an external label
  /// `cluster` in Thanos or a federated Prometheus). When set, a signal whose label value is a
  /// configured cluster name goes to that cluster only; a signal without it, or with a value that
  /// names no configured cluster, goes to every worker/standalone cluster (pods are then matched
  /// by namespace/name on each).
  std::string clusterLabel;
  /// When true, a sample's value is the Unix time of first work (e.g. an app exporting
  /// `first_step_timestamp_seconds`), instead of "first sample > 0 at the sample's time".
  bool valueIsTimestamp = false;
  std::chrono::milliseconds interval = 15s;
  std::chrono::milliseconds timeout = 10s;
  std::string bearerTokenFile;  // re-read on every poll (rotation); refused over plain http
  std::string caFile;           // PEM bundle; empty = system CAs. Verification is always on.

  bool enabled() const { return !url.empty(); }
};

/// `usefulWork`: which signals say that a pod's GPU work began (design §4).
struct UsefulWorkConfig {
  bool annotation = true;        // pod annotation firstwork.dev/first-work-at
  std::string podConditionType;  // e.g. firstwork.dev/FirstWork; empty = off
  bool readyProxy = false;       // container Ready as a labelled proxy; off by default
  PrometheusProbeConfig prometheus;
};

/// A DeviceClass whose selector is not a plain `device.driver == "..."`, mapped by hand.
struct DeviceClassMapping {
  std::string deviceClass;
  std::string driver;
};

/// `gpu`: what counts as a GPU (design §5).
struct GpuConfig {
  std::vector<std::string> extendedResources{"nvidia.com/gpu"};
  std::vector<std::string> draDrivers{"gpu.nvidia.com"};
  /// Device attribute that splits a driver's devices into incompatible units (MIG profiles);
  /// `profile` is the attribute of gpu.nvidia.com MIG devices. Empty = no split.
  std::string profileAttribute = "profile";
  std::vector<DeviceClassMapping> deviceClassMappings;
};

/// `recovery`: incident and reclaim budgets, stuck detection.
struct RecoveryConfig {
  std::chrono::milliseconds budget = 30min;         // reconnection incident fails after this
  std::chrono::milliseconds reclaimBudget = 30min;  // reclaim fails without first work by then
  std::chrono::milliseconds stuckAfter = 10min;     // admitted but not productive ⇒ stuck
};

/// `metrics`: histogram buckets in seconds.
struct MetricsConfig {
  /// Latency histograms (design §6).
  std::vector<double> buckets{5, 15, 30, 60, 120, 180, 300, 600, 900, 1200, 1800, 3600, 7200, 14400};
  /// firstwork_observation_lag_seconds: healthy watches deliver within a second; reconnects and
  /// relists show up in the 5–300 s range; hours mean a telemetry outage.
  std::vector<double> lagBuckets{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600};
};

/// `store`: the SQLite journal.
struct StoreConfig {
  std::string path = "/var/lib/firstwork/firstwork.db";
  std::chrono::milliseconds retention = std::chrono::hours(24 * 90);
};

/// `server`: the HTTP listener.
struct ServerConfig {
  std::string listen = "0.0.0.0:9500";  // host:port, [ipv6]:port, :port; port 0 = OS picks
  std::string apiBearerTokenFile;       // required on /api/v1/* when set; never on /metrics
  std::string tlsCertFile;              // both or neither
  std::string tlsKeyFile;
};

/// `watch`: list/watch tuning.
struct WatchConfig {
  /// No bytes and no bookmark for this long ⇒ reconnect. API servers send a bookmark about once a
  /// minute to watches that ask for them, so keep this at 2–3× that.
  std::chrono::milliseconds stallTimeout = 3min;
  int64_t pageSize = 500;  // LIST `limit`
  /// Delay before a failed list or watch is retried: doubles per failure in a row (with up to
  /// 100 % jitter) from `backoffInitial` up to `backoffMax`, and starts again from
  /// `backoffInitial` after 2 min without a failure (client-go's reflector: 800 ms, 30 s).
  std::chrono::milliseconds backoffInitial = std::chrono::milliseconds(800);
  std::chrono::milliseconds backoffMax = std::chrono::seconds(30);
};

/// `logging`.
struct LoggingConfig {
  log::Level level = log::Level::Info;
  bool redact = false;         // hash namespaces, workload and pod names in logs and the API
  std::string redactSalt;      // per-install salt, inline ...
  std::string redactSaltFile;  // ... or from a file (e.g. a Secret); one is required with redact
};

/// `shard`: this replica watches the workers whose stable hash falls in its shard (design §10).
struct ShardConfig {
  uint32_t index = 0;
  uint32_t count = 1;
};

/// The whole daemon configuration (design §8). Every member has its default here; a YAML file
/// overrides what it names. Plain data, no thread affinity.
struct Config {
  std::vector<ClusterConfig> clusters;
  UsefulWorkConfig usefulWork;
  GpuConfig gpu;
  RecoveryConfig recovery;
  MetricsConfig metrics;
  StoreConfig store;
  ServerConfig server;
  WatchConfig watch;
  LoggingConfig logging;
  ShardConfig shard;
};

/// One problem, located by its key path (`clusters[1].role`, `metrics.buckets[3]`; empty for the
/// document as a whole).
struct ConfigProblem {
  std::string path;
  std::string message;

  /// `clusters[1].role: must be one of management, worker, standalone`.
  std::string toString() const;
  bool operator==(const ConfigProblem&) const = default;
};
using ConfigProblems = std::vector<ConfigProblem>;

/// One line per problem, in document order (parse problems first, then semantic ones).
std::string formatProblems(const ConfigProblems& problems);

struct ValidateOptions {
  /// Check that referenced files exist and are readable, and look inside kubeconfigs for the
  /// context and for insecure-skip-tls-verify. Off only for tests of the pure rules.
  bool checkFiles = true;
};

/// The outcome of loading: `config` holds every value that parsed (defaults elsewhere), so a
/// caller may inspect it even when `problems` is not empty.
struct ConfigLoad {
  Config config;
  ConfigProblems problems;
  bool ok() const { return problems.empty(); }
};

/// Reads and validates a YAML file. Relative paths inside are resolved against the file's
/// directory. Collects every problem: YAML syntax, unknown or duplicate keys, wrong types, bad
/// values, and the semantic checks of validateConfig().
ConfigLoad loadConfigDetailed(const std::string& path, const ValidateOptions& options = {});
/// Same for YAML text; relative paths stay relative (to the working directory).
ConfigLoad loadConfigFromStringDetailed(std::string_view yaml, const ValidateOptions& options = {});

/// Result form: on failure the error message is formatProblems() (one problem per line).
Result<Config> loadConfig(const std::string& path, const ValidateOptions& options = {});
Result<Config> loadConfigFromString(std::string_view yaml, const ValidateOptions& options = {});

/// Every value and cross-field rule on an already built Config (e.g. after CLI overrides):
/// cluster names valid and unique, one management at most, workers need a management,
/// kubeconfig XOR inCluster, buckets strictly increasing, listen address parsable, budgets
/// positive, shard index < count, TLS cert and key together, and (with checkFiles) files readable.
ConfigProblems validateConfig(const Config& config, const ValidateOptions& options = {});

/// Every key the YAML schema accepts, as paths with `[]` for list items (`clusters[].name`).
/// The example-config test compares it with the keys of config/firstwork.example.yaml.
std::vector<std::string> configKeyPaths();

/// Design §10: whether shard `shard` watches `cluster`. Management clusters are watched by every
/// shard; other clusters by the shard `fnv1a64(name) % count`.
bool shardOwnsCluster(const ShardConfig& shard, const ClusterConfig& cluster);

/// The logging options for log::configure(), reading `logging.redactSaltFile` when set.
Result<log::LogOptions> loggingOptions(const LoggingConfig& logging);

}  // namespace firstwork::config
