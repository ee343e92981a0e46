#include "firstwork/config/config.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>
#include <sstream>

#include "firstwork/config/duration.hpp"
#include "firstwork/config/listen_address.hpp"
#include "firstwork/model/pod.hpp"

namespace firstwork::config {
namespace {

// The YAML schema: the keys each mapping accepts. configKeyPaths() is built from these tables, so
// the example-config test notices when a key is added here but not documented there.
constexpr std::array<std::string_view, 10> kTopKeys{
    "clusters", "usefulWork", "gpu", "recovery", "metrics", "store", "server", "watch", "logging",
    "shard"};
constexpr std::array<std::string_view, 7> kClusterKeys{
    "name", "role", "kubeconfig", "context", "inCluster", "multiKueueClusterName",
    "insecureSkipTLSVerifyAllowed"};
constexpr std::array<std::string_view, 4> kUsefulWorkKeys{"annotation", "podConditionType",
                                                          "readyProxy", "prometheus"};
constexpr std::array<std::string_view, 10> kPrometheusKeys{
    "url",      "query",   "namespaceLabel",  "podLabel", "clusterLabel", "valueIsTimestamp",
    "interval", "timeout", "bearerTokenFile", "caFile"};
constexpr std::array<std::string_view, 4> kGpuKeys{"extendedResources", "draDrivers",
                                                   "profileAttribute", "deviceClassMappings"};
constexpr std::array<std::string_view, 2> kMappingKeys{"deviceClass", "driver"};
constexpr std::array<std::string_view, 3> kRecoveryKeys{"budget", "reclaimBudget", "stuckAfter"};
constexpr std::array<std::string_view, 2> kMetricsKeys{"buckets", "lagBuckets"};
constexpr std::array<std::string_view, 2> kStoreKeys{"path", "retention"};
constexpr std::array<std::string_view, 4> kServerKeys{"listen", "apiBearerTokenFile",
                                                      "tlsCertFile", "tlsKeyFile"};
constexpr std::array<std::string_view, 4> kWatchKeys{"stallTimeout", "pageSize", "backoffInitial",
                                                     "backoffMax"};
constexpr std::array<std::string_view, 4> kLoggingKeys{"level", "redact", "redactSalt",
                                                       "redactSaltFile"};
constexpr std::array<std::string_view, 2> kShardKeys{"index", "count"};

std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}
std::string item(const std::string& path, size_t i) { return fmt::format("{}[{}]", path, i); }

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                            std::tolower(static_cast<unsigned char>(b[j - 1]))
                        ? 0
                        : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

/// The entries of one YAML mapping, checked against the schema.
struct MapView {
  std::string path;
  std::vector<std::pair<std::string, YAML::Node>> entries;

  const YAML::Node* find(std::string_view key) const {
    for (const auto& [k, v] : entries) {
      if (k == key && !v.IsNull()) return &v;  // `key:` with no value means "not set"
    }
    return nullptr;
  }
};

class Parser {
 public:
  explicit Parser(ConfigProblems& problems) : problems_(problems) {}

  void problem(std::string path, std::string message) {
    problems_.push_back({std::move(path), std::move(message)});
  }

  // Reports a non-mapping, unknown keys (with the nearest known key as a hint) and repeated keys.
  std::optional<MapView> mapping(const YAML::Node& node, const std::string& path,
                                 std::span<const std::string_view> allowed) {
    if (!node.IsMap()) {
      problem(path, "must be a mapping of keys to values");
      return std::nullopt;
    }
    MapView view{path, {}};
    for (const auto& entry : node) {
      if (!entry.first.IsScalar()) {
        problem(path, "keys must be plain strings");
        continue;
      }
      std::string key = entry.first.Scalar();
      std::string key_path = join(path, key);
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        std::string_view best;
        size_t best_distance = 3;  // suggest only close matches
        for (auto candidate : allowed) {
          size_t d = editDistance(key, candidate);
          if (d < best_distance) {
            best_distance = d;
            best = candidate;
          }
        }
        problem(key_path, best.empty() ? std::string("unknown key")
                                       : fmt::format("unknown key (did you mean \"{}\"?)", best));
        continue;
      }
      bool repeated = std::any_of(view.entries.begin(), view.entries.end(),
                                  [&](const auto& e) { return e.first == key; });
      if (repeated) {
        problem(key_path, "key given more than once");
        continue;
      }
      view.entries.emplace_back(key, entry.second);
    }
    return view;
  }

  void readString(const MapView& m, std::string_view key, std::string& out) {
    const YAML::Node* n = m.find(key);
    if (n == nullptr) return;
    if (!n->IsScalar()) {
      problem(join(m.path, key), "must be a string");
      return;
    }
    out = n->Scalar();
  }

  void readBool(const MapView& m, std::string_view key, bool& out) {
    const YAML::Node* n = m.find(key);
    if (n == nullptr) return;
    bool value = false;
    if (!n->IsScalar() || !YAML::convert<bool>::decode(*n, value)) {
      problem(join(m.path, key), "must be true or false");
      return;
    }
    out = value;
  }

  void readDuration(const MapView& m, std::string_view key, std::chrono::milliseconds& out) {
    const YAML::Node* n = m.find(key);
    if (n == nullptr) return;
    if (!n->IsScalar()) {
      problem(join(m.path, key), "must be a duration such as 30s, 10m, 1h30m or 90d");
      return;
    }
    auto parsed = parseDuration(n->Scalar());
    if (!parsed.ok()) {
      problem(join(m.path, key), parsed.error());
      return;
    }
    out = *parsed;
  }

  void readInt(const MapView& m, std::string_view key, int64_t& out) {
    const YAML::Node* n = m.find(key);
    if (n == nullptr) return;
    int64_t value = 0;
    if (!n->IsScalar() || !YAML::convert<int64_t>::decode(*n, value)) {
      problem(join(m.path, key), "must be an integer");
      return;
    }
    out = value;
  }

  void readUint32(const MapView& m, std::string_view key, uint32_t& out) {
    int64_t value = out;
    size_t before = problems_.size();
    readInt(m, key, value);
    if (problems_.size() != before) return;
    if (value < 0 || value > static_cast<int64_t>(UINT32_MAX)) {
      problem(join(m.path, key), "must be a non-negative integer");
      return;
    }
    out = static_cast<uint32_t>(value);
  }

  void readStringList(const MapView& m, std::string_view key, std::vector<std::string>& out) {
    const YAML::Node* n = m.find(key);
    if (n == nullptr) return;
    std::string path = join(m.path, key);
    if (!n->IsSequence()) {
      problem(path, "must be a list of strings");
      return;
    }
    std::vector<std::string> values;
    for (size_t i = 0; i < n->size(); ++i) {
      const YAML::Node& e = (*n)[i];
      if (!e.IsScalar()) {
        problem(item(path, i), "must be a string");
        continue;
      }
      values.push_back(e.Scalar());
    }
    out = std::move(values);
  }

  void readNumberList(const MapView& m, std::string_view key, std::vector<double>& out) {
    const YAML::Node* n = m.find(key);
    if (n == nullptr) return;
    std::string path = join(m.path, key);
    if (!n->IsSequence()) {
      problem(path, "must be a list of numbers");
      return;
    }
    std::vector<double> values;
    for (size_t i = 0; i < n->size(); ++i) {
      const YAML::Node& e = (*n)[i];
      double v = 0;
      if (!e.IsScalar() || !YAML::convert<double>::decode(e, v)) {
        problem(item(path, i), "must be a number");
        continue;
      }
      values.push_back(v);
    }
    out = std::move(values);
  }

  // Each section reader takes the parent mapping and the section's key.
  std::optional<MapView> section(const MapView& parent, std::string_view key,
                                 std::span<const std::string_view> allowed) {
    const YAML::Node* n = parent.find(key);
    if (n == nullptr) return std::nullopt;
    return mapping(*n, join(parent.path, key), allowed);
  }

  void parseCluster(const YAML::Node& node, const std::string& path, ClusterConfig& c) {
    auto m = mapping(node, path, kClusterKeys);
    if (!m) return;
    readString(*m, "name", c.name);
    if (const YAML::Node* role = m->find("role")) {
      std::string r = role->IsScalar() ? role->Scalar() : std::string();
      if (r == "management") c.role = ClusterRole::Management;
      else if (r == "worker") c.role = ClusterRole::Worker;
      else if (r == "standalone") c.role = ClusterRole::Standalone;
      else problem(join(path, "role"), "must be one of management, worker, standalone");
    } else {
      problem(join(path, "role"), "required: one of management, worker, standalone");
    }
    readString(*m, "kubeconfig", c.kubeconfig);
    readString(*m, "context", c.context);
    readBool(*m, "inCluster", c.inCluster);
    readString(*m, "multiKueueClusterName", c.multiKueueClusterName);
    readBool(*m, "insecureSkipTLSVerifyAllowed", c.insecureSkipTLSVerifyAllowed);
  }

  void parse(const YAML::Node& root, Config& config) {
    if (root.IsNull()) return;  // an empty file: all defaults (validation then asks for clusters)
    auto top = mapping(root, "", kTopKeys);
    if (!top) return;

    if (const YAML::Node* clusters = top->find("clusters")) {
      if (!clusters->IsSequence()) {
        problem("clusters", "must be a list of clusters");
      } else {
        for (size_t i = 0; i < clusters->size(); ++i) {
          ClusterConfig c;
          parseCluster((*clusters)[i], item("clusters", i), c);
          config.clusters.push_back(std::move(c));
        }
      }
    }

    if (auto uw = section(*top, "usefulWork", kUsefulWorkKeys)) {
      readBool(*uw, "annotation", config.usefulWork.annotation);
      readString(*uw, "podConditionType", config.usefulWork.podConditionType);
      readBool(*uw, "readyProxy", config.usefulWork.readyProxy);
      if (auto p = section(*uw, "prometheus", kPrometheusKeys)) {
        auto& pc = config.usefulWork.prometheus;
        readString(*p, "url", pc.url);
        readString(*p, "query", pc.query);
        readString(*p, "namespaceLabel", pc.namespaceLabel);
        readString(*p, "podLabel", pc.podLabel);
        readString(*p, "clusterLabel", pc.clusterLabel);
        readBool(*p, "valueIsTimestamp", pc.valueIsTimestamp);
        readDuration(*p, "interval", pc.interval);
        readDuration(*p, "timeout", pc.timeout);
        readString(*p, "bearerTokenFile", pc.bearerTokenFile);
        readString(*p, "caFile", pc.caFile);
      }
    }

    if (auto g = section(*top, "gpu", kGpuKeys)) {
      readStringList(*g, "extendedResources", config.gpu.extendedResources);
      readStringList(*g, "draDrivers", config.gpu.draDrivers);
      readString(*g, "profileAttribute", config.gpu.profileAttribute);
      if (const YAML::Node* maps = g->find("deviceClassMappings")) {
        std::string path = "gpu.deviceClassMappings";
        if (!maps->IsSequence()) {
          problem(path, "must be a list of {deviceClass, driver}");
        } else {
          for (size_t i = 0; i < maps->size(); ++i) {
            DeviceClassMapping dm;
            if (auto mm = mapping((*maps)[i], item(path, i), kMappingKeys)) {
              readString(*mm, "deviceClass", dm.deviceClass);
              readString(*mm, "driver", dm.driver);
            }
            config.gpu.deviceClassMappings.push_back(std::move(dm));
          }
        }
      }
    }

    if (auto r = section(*top, "recovery", kRecoveryKeys)) {
      readDuration(*r, "budget", config.recovery.budget);
      readDuration(*r, "reclaimBudget", config.recovery.reclaimBudget);
      readDuration(*r, "stuckAfter", config.recovery.stuckAfter);
    }
    if (auto mt = section(*top, "metrics", kMetricsKeys)) {
      readNumberList(*mt, "buckets", config.metrics.buckets);
      readNumberList(*mt, "lagBuckets", config.metrics.lagBuckets);
    }
    if (auto s = section(*top, "store", kStoreKeys)) {
      readString(*s, "path", config.store.path);
      readDuration(*s, "retention", config.store.retention);
    }
    if (auto s = section(*top, "server", kServerKeys)) {
      readString(*s, "listen", config.server.listen);
      readString(*s, "apiBearerTokenFile", config.server.apiBearerTokenFile);
      readString(*s, "tlsCertFile", config.server.tlsCertFile);
      readString(*s, "tlsKeyFile", config.server.tlsKeyFile);
    }
    if (auto w = section(*top, "watch", kWatchKeys)) {
      readDuration(*w, "stallTimeout", config.watch.stallTimeout);
      readInt(*w, "pageSize", config.watch.pageSize);
      readDuration(*w, "backoffInitial", config.watch.backoffInitial);
      readDuration(*w, "backoffMax", config.watch.backoffMax);
    }
    if (auto l = section(*top, "logging", kLoggingKeys)) {
      if (const YAML::Node* level = l->find("level")) {
        auto parsed = level->IsScalar() ? log::parseLevel(level->Scalar())
                                        : Result<log::Level>(makeError("must be a string"));
        if (parsed.ok()) {
          config.logging.level = *parsed;
        } else {
          problem("logging.level", "must be one of trace, debug, info, warn, error, off");
        }
      }
      readBool(*l, "redact", config.logging.redact);
      readString(*l, "redactSalt", config.logging.redactSalt);
      readString(*l, "redactSaltFile", config.logging.redactSaltFile);
    }
    if (auto s = section(*top, "shard", kShardKeys)) {
      readUint32(*s, "index", config.shard.index);
      readUint32(*s, "count", config.shard.count);
    }
  }

 private:
  ConfigProblems& problems_;
};

// --- semantic checks -----------------------------------------------------------------------

bool isDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-' || c == '.'; });
}

bool isLabelName(std::string_view s) {
  if (s.empty()) return false;
  auto first = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  if (!first(s.front())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) {
    return first(c) || std::isdigit(static_cast<unsigned char>(c));
  });
}

// `domain/name` (nvidia.com/gpu, amd.com/gpu).
bool isQualifiedResourceName(std::string_view s) {
  size_t slash = s.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == s.size()) return false;
  if (s.find('/', slash + 1) != std::string_view::npos) return false;
  return isDnsSubdomain(s.substr(0, slash)) &&
         std::all_of(s.begin() + static_cast<std::ptrdiff_t>(slash) + 1, s.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
         });
}

// Empty optional when the file can be opened for reading, else why not.
std::optional<std::string> unreadable(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return fmt::format("\"{}\" is a directory", path);
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return fmt::format("cannot read \"{}\": {}", path, std::strerror(errno));
  std::fclose(f);
  return std::nullopt;
}

std::string readTrimmed(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  return s.substr(start);
}

void checkFile(ConfigProblems& out, const std::string& path_key, const std::string& file) {
  if (auto why = unreadable(file)) out.push_back({path_key, *why});
}

// A pre-flight look into a kubeconfig, so `check-config` reports what the kube client would
// refuse at start: a missing context and an unverified TLS connection.
void checkKubeconfig(ConfigProblems& out, const std::string& path, const ClusterConfig& c) {
  YAML::Node kc;
  try {
    kc = YAML::LoadFile(c.kubeconfig);
  } catch (const YAML::Exception& e) {
    out.push_back({join(path, "kubeconfig"),
                   fmt::format("\"{}\" is not a valid kubeconfig: {}", c.kubeconfig, e.what())});
    return;
  }
  if (!kc.IsMap()) {
    out.push_back({join(path, "kubeconfig"),
                   fmt::format("\"{}\" is not a valid kubeconfig: not a mapping", c.kubeconfig)});
    return;
  }
  auto scalar = [](const YAML::Node& n) { return n && n.IsScalar() ? n.Scalar() : std::string(); };
  std::string context = c.context.empty() ? scalar(kc["current-context"]) : c.context;
  if (context.empty()) {
    out.push_back({join(path, "kubeconfig"),
                   fmt::format("\"{}\" has no current-context; set {}", c.kubeconfig,
                               join(path, "context"))});
    return;
  }
  auto findNamed = [](const YAML::Node& list, const std::string& name) -> YAML::Node {
    if (!list || !list.IsSequence()) return YAML::Node();
    for (const auto& e : list) {
      if (e.IsMap() && e["name"] && e["name"].IsScalar() && e["name"].Scalar() == name) return e;
    }
    return YAML::Node();
  };
  YAML::Node ctx = findNamed(kc["contexts"], context);
  if (!ctx || !ctx["context"] || !ctx["context"].IsMap()) {
    out.push_back({c.context.empty() ? join(path, "kubeconfig") : join(path, "context"),
                   fmt::format("context \"{}\" not found in \"{}\"", context, c.kubeconfig)});
    return;
  }
  std::string cluster_name = scalar(ctx["context"]["cluster"]);
  YAML::Node cluster = findNamed(kc["clusters"], cluster_name);
  if (!cluster || !cluster["cluster"] || !cluster["cluster"].IsMap()) {
    out.push_back({join(path, "kubeconfig"),
                   fmt::format("cluster \"{}\" of context \"{}\" not found in \"{}\"",
                               cluster_name, context, c.kubeconfig)});
    return;
  }
  bool insecure = false;
  YAML::Node flag = cluster["cluster"]["insecure-skip-tls-verify"];
  if (flag && flag.IsScalar()) YAML::convert<bool>::decode(flag, insecure);
  if (insecure && !c.insecureSkipTLSVerifyAllowed) {
    out.push_back({join(path, "kubeconfig"),
                   fmt::format("cluster \"{}\" in \"{}\" sets insecure-skip-tls-verify; set {} "
                               "to accept a connection without TLS verification",
                               cluster_name, c.kubeconfig,
                               join(path, "insecureSkipTLSVerifyAllowed: true"))});
  }
}

void checkBuckets(ConfigProblems& out, const std::string& path, const std::vector<double>& b) {
  if (b.empty()) {
    out.push_back({path, "must list at least one bucket"});
    return;
  }
  for (size_t i = 0; i < b.size(); ++i) {
    if (!std::isfinite(b[i]) || b[i] <= 0) {
      out.push_back({item(path, i), "must be a positive finite number of seconds"});
    } else if (i > 0 && std::isfinite(b[i - 1]) && b[i] <= b[i - 1]) {
      out.push_back({item(path, i), fmt::format("must be greater than the previous bucket ({})",
                                                b[i - 1])});
    }
  }
}

void checkPositive(ConfigProblems& out, const std::string& path, std::chrono::milliseconds d) {
  if (d.count() <= 0) out.push_back({path, "must be longer than 0"});
}

void resolveRelative(std::string& p, const std::filesystem::path& base) {
  if (p.empty()) return;
  std::filesystem::path fp(p);
  if (fp.is_relative()) p = (base / fp).lexically_normal().string();
}

void resolvePaths(Config& c, const std::filesystem::path& base) {
  for (auto& cl : c.clusters) resolveRelative(cl.kubeconfig, base);
  resolveRelative(c.usefulWork.prometheus.bearerTokenFile, base);
  resolveRelative(c.usefulWork.prometheus.caFile, base);
  resolveRelative(c.store.path, base);
  resolveRelative(c.server.apiBearerTokenFile, base);
  resolveRelative(c.server.tlsCertFile, base);
  resolveRelative(c.server.tlsKeyFile, base);
  resolveRelative(c.logging.redactSaltFile, base);
}

void applyDefaults(Config& c) {
  for (auto& cl : c.clusters) {
    if (cl.role == ClusterRole::Worker && cl.multiKueueClusterName.empty()) {
      cl.multiKueueClusterName = cl.name;
    }
  }
}

ConfigLoad loadFromText(std::string_view yaml, const std::filesystem::path* base,
                        const ValidateOptions& options) {
  ConfigLoad load;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::ParserException& e) {
    load.problems.push_back(
        {"", fmt::format("YAML syntax error at line {}, column {}: {}", e.mark.line + 1,
                         e.mark.column + 1, e.msg)});
    return load;
  } catch (const YAML::Exception& e) {
    load.problems.push_back({"", fmt::format("YAML error: {}", e.what())});
    return load;
  }
  try {
    Parser(load.problems).parse(root, load.config);
  } catch (const YAML::Exception& e) {
    // yaml-cpp throws for a few malformed trees (e.g. invalid aliases); keep what was collected.
    load.problems.push_back({"", fmt::format("YAML error: {}", e.what())});
  }
  if (base != nullptr) resolvePaths(load.config, *base);
  applyDefaults(load.config);
  ConfigProblems semantic = validateConfig(load.config, options);
  // A value that failed to parse kept its default; its semantic problem would be noise.
  for (auto& p : semantic) {
    bool duplicate = std::any_of(load.problems.begin(), load.problems.end(),
                                 [&](const ConfigProblem& q) { return q.path == p.path; });
    if (!duplicate) load.problems.push_back(std::move(p));
  }
  return load;
}

}  // namespace

std::string_view roleName(ClusterRole role) {
  switch (role) {
    case ClusterRole::Management: return "management";
    case ClusterRole::Worker: return "worker";
    case ClusterRole::Standalone: return "standalone";
  }
  return "standalone";
}

std::string ConfigProblem::toString() const {
  return path.empty() ? message : fmt::format("{}: {}", path, message);
}

std::string formatProblems(const ConfigProblems& problems) {
  std::string out;
  for (size_t i = 0; i < problems.size(); ++i) {
    if (i > 0) out += '\n';
    out += problems[i].toString();
  }
  return out;
}

ConfigProblems validateConfig(const Config& c, const ValidateOptions& options) {
  ConfigProblems out;
  auto add = [&](std::string path, std::string message) {
    out.push_back({std::move(path), std::move(message)});
  };

  // clusters
  if (c.clusters.empty()) add("clusters", "at least one cluster is required");
  std::optional<size_t> management;
  std::map<std::string, size_t> names;
  std::map<std::string, size_t> mk_names;
  for (size_t i = 0; i < c.clusters.size(); ++i) {
    const ClusterConfig& cl = c.clusters[i];
    std::string path = item("clusters", i);
    if (cl.name.empty()) {
      add(join(path, "name"), "required");
    } else if (!isDnsSubdomain(cl.name)) {
      add(join(path, "name"), "must be a DNS-1123 subdomain: lower-case letters, digits, '-' and "
                              "'.', starting and ending with a letter or digit");
    } else if (auto [it, inserted] = names.emplace(cl.name, i); !inserted) {
      add(join(path, "name"),
          fmt::format("duplicate cluster name \"{}\" (also clusters[{}])", cl.name, it->second));
    }
    if (cl.role == ClusterRole::Management) {
      if (management) {
        add(join(path, "role"), fmt::format("only one management cluster is allowed (clusters[{}] "
                                            "is one)", *management));
      } else {
        management = i;
      }
    }
    if (cl.kubeconfig.empty() && !cl.inCluster) {
      add(path, "set either kubeconfig or inCluster: true");
    } else if (!cl.kubeconfig.empty() && cl.inCluster) {
      add(path, "kubeconfig and inCluster: true exclude each other");
    }
    if (!cl.context.empty() && cl.kubeconfig.empty()) {
      add(join(path, "context"), "only valid together with kubeconfig");
    }
    if (cl.role != ClusterRole::Worker && !cl.multiKueueClusterName.empty()) {
      add(join(path, "multiKueueClusterName"), "only valid for role worker");
    }
    if (cl.role == ClusterRole::Worker) {
      const std::string& mk = cl.multiKueueClusterName.empty() ? cl.name : cl.multiKueueClusterName;
      if (!mk.empty() && !isDnsSubdomain(mk)) {
        add(join(path, "multiKueueClusterName"), "must be a DNS-1123 subdomain");
      } else if (auto [it, inserted] = mk_names.emplace(mk, i); !mk.empty() && !inserted) {
        add(join(path, "multiKueueClusterName"),
            fmt::format("\"{}\" already names clusters[{}]", mk, it->second));
      }
    }
    if (options.checkFiles && !cl.kubeconfig.empty() && !cl.inCluster) {
      if (auto why = unreadable(cl.kubeconfig)) {
        add(join(path, "kubeconfig"), *why);
      } else {
        checkKubeconfig(out, path, cl);
      }
    }
  }
  for (size_t i = 0; i < c.clusters.size(); ++i) {
    if (c.clusters[i].role == ClusterRole::Worker && !management) {
      add(join(item("clusters", i), "role"),
          "a worker needs a cluster with role management in clusters[]");
    }
  }

  // usefulWork
  const auto& uw = c.usefulWork;
  for (char ch : uw.podConditionType) {
    if (std::isspace(static_cast<unsigned char>(ch))) {
      add("usefulWork.podConditionType", "must not contain whitespace");
      break;
    }
  }
  for (std::string_view unread : model::kUnreadPodConditionTypes) {
    if (uw.podConditionType == unread) {
      add("usefulWork.podConditionType",
          fmt::format("{} is a built-in pod condition, set before a container's work begins, and "
                      "not kept; name a condition the workload sets when its work begins, or use "
                      "readyProxy",
                      unread));
    }
  }
  const auto& pr = uw.prometheus;
  const std::string pp = "usefulWork.prometheus";
  bool https = pr.url.rfind("https://", 0) == 0;
  bool http = pr.url.rfind("http://", 0) == 0;
  if (!pr.url.empty()) {
    if (!https && !http) {
      add(join(pp, "url"), "must start with http:// or https://");
    } else if (pr.url.size() == (https ? 8u : 7u)) {
      add(join(pp, "url"), "has no host");
    }
    if (pr.query.empty()) add(join(pp, "query"), "required when usefulWork.prometheus.url is set");
    if (http && !pr.bearerTokenFile.empty()) {
      add(join(pp, "bearerTokenFile"),
          "refusing to send a bearer token over plain http; use an https:// url");
    }
  } else if (!pr.query.empty()) {
    add(join(pp, "url"), "required when usefulWork.prometheus.query is set");
  }
  if (pr.query.find("{{") != std::string::npos) {
    add(join(pp, "query"),
        "placeholders such as {{pod}} are not supported: write one query whose series carry the "
        "namespaceLabel and podLabel labels");
  }
  if (!isLabelName(pr.namespaceLabel)) add(join(pp, "namespaceLabel"), "must be a label name");
  if (!isLabelName(pr.podLabel)) add(join(pp, "podLabel"), "must be a label name");
  if (!pr.clusterLabel.empty() && !isLabelName(pr.clusterLabel))
    add(join(pp, "clusterLabel"), "must be a label name");
  if (pr.interval < std::chrono::seconds(1)) add(join(pp, "interval"), "must be at least 1s");
  if (pr.timeout.count() <= 0) {
    add(join(pp, "timeout"), "must be longer than 0");
  } else if (pr.timeout > pr.interval && pr.interval >= std::chrono::seconds(1)) {
    add(join(pp, "timeout"), fmt::format("must not exceed usefulWork.prometheus.interval ({})",
                                         formatDuration(pr.interval)));
  }
  if (options.checkFiles) {
    if (!pr.bearerTokenFile.empty()) checkFile(out, join(pp, "bearerTokenFile"), pr.bearerTokenFile);
    if (!pr.caFile.empty()) checkFile(out, join(pp, "caFile"), pr.caFile);
  }

  // gpu
  if (c.gpu.extendedResources.empty() && c.gpu.draDrivers.empty()) {
    add("gpu", "at least one of extendedResources or draDrivers is needed to count GPUs");
  }
  for (size_t i = 0; i < c.gpu.extendedResources.size(); ++i) {
    if (!isQualifiedResourceName(c.gpu.extendedResources[i])) {
      add(item("gpu.extendedResources", i),
          "must be an extended resource name such as nvidia.com/gpu");
    }
  }
  for (size_t i = 0; i < c.gpu.draDrivers.size(); ++i) {
    if (!isDnsSubdomain(c.gpu.draDrivers[i])) {
      add(item("gpu.draDrivers", i), "must be a DRA driver name such as gpu.nvidia.com");
    }
  }
  std::map<std::string, size_t> classes;
  for (size_t i = 0; i < c.gpu.deviceClassMappings.size(); ++i) {
    const auto& m = c.gpu.deviceClassMappings[i];
    std::string path = item("gpu.deviceClassMappings", i);
    if (m.deviceClass.empty()) {
      add(join(path, "deviceClass"), "required");
    } else if (auto [it, inserted] = classes.emplace(m.deviceClass, i); !inserted) {
      add(join(path, "deviceClass"),
          fmt::format("\"{}\" is already mapped by gpu.deviceClassMappings[{}]", m.deviceClass,
                      it->second));
    }
    if (m.driver.empty()) add(join(path, "driver"), "required");
    else if (!isDnsSubdomain(m.driver)) add(join(path, "driver"), "must be a DRA driver name");
  }

  checkPositive(out, "recovery.budget", c.recovery.budget);
  checkPositive(out, "recovery.reclaimBudget", c.recovery.reclaimBudget);
  checkPositive(out, "recovery.stuckAfter", c.recovery.stuckAfter);

  checkBuckets(out, "metrics.buckets", c.metrics.buckets);
  checkBuckets(out, "metrics.lagBuckets", c.metrics.lagBuckets);

  if (c.store.path.empty()) add("store.path", "required");
  checkPositive(out, "store.retention", c.store.retention);

  // server
  if (auto la = parseListenAddress(c.server.listen); !la.ok()) add("server.listen", la.error());
  if (c.server.tlsCertFile.empty() != c.server.tlsKeyFile.empty()) {
    if (c.server.tlsCertFile.empty()) add("server.tlsCertFile", "required with server.tlsKeyFile");
    else add("server.tlsKeyFile", "required with server.tlsCertFile");
  }
  if (options.checkFiles) {
    if (!c.server.tlsCertFile.empty()) checkFile(out, "server.tlsCertFile", c.server.tlsCertFile);
    if (!c.server.tlsKeyFile.empty()) checkFile(out, "server.tlsKeyFile", c.server.tlsKeyFile);
    if (!c.server.apiBearerTokenFile.empty()) {
      if (auto why = unreadable(c.server.apiBearerTokenFile)) {
        add("server.apiBearerTokenFile", *why);
      } else if (readTrimmed(c.server.apiBearerTokenFile).empty()) {
        // An empty token would make every request authorised: refuse rather than open the API.
        add("server.apiBearerTokenFile", fmt::format("\"{}\" is empty", c.server.apiBearerTokenFile));
      }
    }
  }

  checkPositive(out, "watch.stallTimeout", c.watch.stallTimeout);
  if (c.watch.pageSize < 1) add("watch.pageSize", "must be at least 1");
  checkPositive(out, "watch.backoffInitial", c.watch.backoffInitial);
  checkPositive(out, "watch.backoffMax", c.watch.backoffMax);
  if (c.watch.backoffMax < c.watch.backoffInitial) {
    add("watch.backoffMax", fmt::format("must be at least watch.backoffInitial ({} ms), is {} ms",
                                        c.watch.backoffInitial.count(), c.watch.backoffMax.count()));
  }

  // logging
  if (c.logging.redact && c.logging.redactSalt.empty() && c.logging.redactSaltFile.empty()) {
    add("logging.redact", "needs logging.redactSalt or logging.redactSaltFile: without a secret "
                          "salt, hashed names can be recovered by hashing likely names");
  }
  if (!c.logging.redactSalt.empty() && !c.logging.redactSaltFile.empty()) {
    add("logging.redactSaltFile", "set either logging.redactSalt or logging.redactSaltFile, not "
                                  "both");
  }
  if (options.checkFiles && !c.logging.redactSaltFile.empty()) {
    if (auto why = unreadable(c.logging.redactSaltFile)) {
      add("logging.redactSaltFile", *why);
    } else if (readTrimmed(c.logging.redactSaltFile).empty()) {
      add("logging.redactSaltFile", fmt::format("\"{}\" is empty", c.logging.redactSaltFile));
    }
  }

  if (c.shard.count < 1) add("shard.count", "must be at least 1");
  else if (c.shard.index >= c.shard.count) {
    add("shard.index", fmt::format("must be less than shard.count ({})", c.shard.count));
  }
  return out;
}

ConfigLoad loadConfigFromStringDetailed(std::string_view yaml, const ValidateOptions& options) {
  return loadFromText(yaml, nullptr, options);
}

ConfigLoad loadConfigDetailed(const std::string& path, const ValidateOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ConfigLoad load;
    load.problems.push_back(
        {"", fmt::format("cannot read config file \"{}\": {}", path, std::strerror(errno))});
    return load;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::filesystem::path base = std::filesystem::absolute(path).parent_path();
  return loadFromText(ss.str(), &base, options);
}

Result<Config> loadConfig(const std::string& path, const ValidateOptions& options) {
  ConfigLoad load = loadConfigDetailed(path, options);
  if (!load.ok()) return makeError(formatProblems(load.problems));
  return std::move(load.config);
}

Result<Config> loadConfigFromString(std::string_view yaml, const ValidateOptions& options) {
  ConfigLoad load = loadConfigFromStringDetailed(yaml, options);
  if (!load.ok()) return makeError(formatProblems(load.problems));
  return std::move(load.config);
}

std::vector<std::string> configKeyPaths() {
  std::vector<std::string> out;
  auto addAll = [&](const std::string& prefix, std::span<const std::string_view> keys) {
    for (auto k : keys) out.push_back(join(prefix, k));
  };
  addAll("", kTopKeys);
  addAll("clusters[]", kClusterKeys);
  addAll("usefulWork", kUsefulWorkKeys);
  addAll("usefulWork.prometheus", kPrometheusKeys);
  addAll("gpu", kGpuKeys);
  addAll("gpu.deviceClassMappings[]", kMappingKeys);
  addAll("recovery", kRecoveryKeys);
  addAll("metrics", kMetricsKeys);
  addAll("store", kStoreKeys);
  addAll("server", kServerKeys);
  addAll("watch", kWatchKeys);
  addAll("logging", kLoggingKeys);
  addAll("shard", kShardKeys);
  std::sort(out.begin(), out.end());
  return out;
}

bool shardOwnsCluster(const ShardConfig& shard, const ClusterConfig& cluster) {
  if (cluster.role == ClusterRole::Management || shard.count <= 1) return true;
  uint64_t h = 14695981039346656037ULL;  // FNV-1a 64: stable across builds and platforms
  for (unsigned char ch : cluster.name) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  return h % shard.count == shard.index;
}

Result<log::LogOptions> loggingOptions(const LoggingConfig& logging) {
  log::LogOptions options;
  options.level = logging.level;
  options.redact = logging.redact;
  options.redactSalt = logging.redactSalt;
  if (!logging.redactSaltFile.empty()) {
    if (auto why = unreadable(logging.redactSaltFile)) {
      return makeError(fmt::format("logging.redactSaltFile: {}", *why));
    }
    options.redactSalt = readTrimmed(logging.redactSaltFile);
  }
  if (options.redact && options.redactSalt.empty()) {
    return makeError("logging.redact: needs a non-empty salt");
  }
  return options;
}

}  // namespace firstwork::config
