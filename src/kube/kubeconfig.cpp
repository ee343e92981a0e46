#include "firstwork/kube/kubeconfig.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "detail/util.hpp"

namespace firstwork::kube {

namespace {

namespace fs = std::filesystem;

std::optional<std::string> lookupEnv(
    const std::function<std::optional<std::string>(const std::string&)>& getenvFn,
    const std::string& name) {
  if (getenvFn) return getenvFn(name);
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

// One named entry (cluster, user or context) together with the file that defined it: relative
// paths inside it resolve against that file's directory (client-go ResolveLocalPaths).
struct Entry {
  YAML::Node node;      // the inner map (`cluster:`, `user:`, `context:`)
  std::string file;     // for messages
  std::string baseDir;  // for relative paths
  std::string keyPath;  // e.g. "clusters[1].cluster"
};

struct Merged {
  std::map<std::string, Entry> clusters;
  std::map<std::string, Entry> users;
  std::map<std::string, Entry> contexts;
  std::string currentContext;
  std::string currentContextFile;
  std::vector<std::string> files;
};

std::string errAt(const std::string& file, const std::string& keyPath, const std::string& what) {
  return file + ": " + keyPath + ": " + what;
}

// Reads an optional string scalar; an error for a non-scalar.
Result<std::string> optString(const YAML::Node& map, const std::string& key, const Entry& e) {
  YAML::Node v = map[key];
  if (!v.IsDefined() || v.IsNull()) return std::string();
  if (!v.IsScalar()) return makeError(errAt(e.file, e.keyPath + "." + key, "expected a string"));
  return v.Scalar();
}

Result<bool> optBool(const YAML::Node& map, const std::string& key, const Entry& e) {
  YAML::Node v = map[key];
  if (!v.IsDefined() || v.IsNull()) return false;
  bool out = false;
  if (!v.IsScalar() || !YAML::convert<bool>::decode(v, out)) {
    return makeError(errAt(e.file, e.keyPath + "." + key, "expected true or false"));
  }
  return out;
}

std::string resolvePath(const std::string& baseDir, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute() || baseDir.empty()) return path;
  return (fs::path(baseDir) / path).lexically_normal().string();
}

// `<key>-data` (base64) wins over `<key>` (a file path), as in client-go.
Result<std::string> loadPem(const YAML::Node& map, const std::string& key, const Entry& e) {
  auto data = optString(map, key + "-data", e);
  if (!data) return makeError(data.error());
  if (!data->empty()) {
    auto decoded = detail::base64Decode(*data);
    if (!decoded) return makeError(errAt(e.file, e.keyPath + "." + key + "-data", decoded.error()));
    if (decoded->empty()) {
      return makeError(errAt(e.file, e.keyPath + "." + key + "-data", "decodes to nothing"));
    }
    return std::move(decoded).value();
  }
  auto path = optString(map, key, e);
  if (!path) return makeError(path.error());
  if (path->empty()) return std::string();
  auto content = detail::readFile(resolvePath(e.baseDir, *path));
  if (!content) return makeError(errAt(e.file, e.keyPath + "." + key, content.error()));
  if (content->empty()) return makeError(errAt(e.file, e.keyPath + "." + key, *path + " is empty"));
  return std::move(content).value();
}

// Parses one kubeconfig document and merges its named entries into `merged` (first wins).
Status mergeDocument(const YAML::Node& root, const std::string& file, const std::string& baseDir,
                     Merged& merged) {
  if (root.IsNull() || !root.IsDefined()) return Ok{};  // an empty file is a valid, empty config
  if (!root.IsMap()) return makeError(file + ": expected a mapping at the top level");

  struct Section {
    const char* list;
    const char* inner;
    std::map<std::string, Entry>* out;
  };
  const Section sections[] = {{"clusters", "cluster", &merged.clusters},
                              {"users", "user", &merged.users},
                              {"contexts", "context", &merged.contexts}};
  for (const Section& s : sections) {
    const YAML::Node list = root[s.list];
    if (!list.IsDefined() || list.IsNull()) continue;
    if (!list.IsSequence()) return makeError(errAt(file, s.list, "expected a list"));
    for (size_t i = 0; i < list.size(); ++i) {
      std::string at = std::string(s.list) + "[" + std::to_string(i) + "]";
      const YAML::Node item = list[i];
      if (!item.IsMap()) return makeError(errAt(file, at, "expected a mapping"));
      YAML::Node name = item["name"];
      if (!name.IsDefined() || !name.IsScalar() || name.Scalar().empty()) {
        return makeError(errAt(file, at + ".name", "required"));
      }
      const YAML::Node inner = item[s.inner];
      if (inner.IsDefined() && !inner.IsNull() && !inner.IsMap()) {
        return makeError(errAt(file, at + "." + s.inner, "expected a mapping"));
      }
      // First file to define a name wins (client-go merge of the KUBECONFIG list).
      bool present = inner.IsDefined() && !inner.IsNull();
      s.out->emplace(name.Scalar(), Entry{present ? inner : YAML::Node(YAML::NodeType::Map), file,
                                          baseDir, at + "." + s.inner});
    }
  }
  YAML::Node cc = root["current-context"];
  if (cc.IsDefined() && !cc.IsNull()) {
    if (!cc.IsScalar()) return makeError(errAt(file, "current-context", "expected a string"));
    if (merged.currentContext.empty() && !cc.Scalar().empty()) {
      merged.currentContext = cc.Scalar();
      merged.currentContextFile = file;
    }
  }
  return Ok{};
}

Status mergeText(const std::string& text, const std::string& file, const std::string& baseDir,
                 Merged& merged) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return makeError(file + ": invalid YAML at line " + std::to_string(e.mark.line + 1) + ": " +
                     e.msg);
  }
  try {
    return mergeDocument(root, file, baseDir, merged);
  } catch (const YAML::Exception& e) {
    return makeError(file + ": " + e.what());
  }
}

Result<ExecConfig> parseExec(const YAML::Node& node, const Entry& user) {
  Entry e{node, user.file, user.baseDir, user.keyPath + ".exec"};
  if (!node.IsMap()) return makeError(errAt(e.file, e.keyPath, "expected a mapping"));
  ExecConfig exec;
  auto command = optString(node, "command", e);
  if (!command) return makeError(command.error());
  if (command->empty()) return makeError(errAt(e.file, e.keyPath + ".command", "required"));
  // client-go resolves a command containing a path separator against the kubeconfig's
  // directory; a bare name is looked up in PATH when the plugin runs.
  exec.command = command->find('/') != std::string::npos ? resolvePath(e.baseDir, *command)
                                                         : *command;
  auto apiVersion = optString(node, "apiVersion", e);
  if (!apiVersion) return makeError(apiVersion.error());
  if (*apiVersion != "client.authentication.k8s.io/v1" &&
      *apiVersion != "client.authentication.k8s.io/v1beta1") {
    return makeError(errAt(e.file, e.keyPath + ".apiVersion",
                           apiVersion->empty()
                               ? "required (client.authentication.k8s.io/v1 or v1beta1)"
                               : "unsupported \"" + *apiVersion +
                                     "\" (use client.authentication.k8s.io/v1 or v1beta1)"));
  }
  exec.apiVersion = *apiVersion;
  const YAML::Node args = node["args"];
  if (args.IsDefined() && !args.IsNull()) {
    if (!args.IsSequence()) return makeError(errAt(e.file, e.keyPath + ".args", "expected a list"));
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].IsScalar()) {
        return makeError(errAt(e.file, e.keyPath + ".args[" + std::to_string(i) + "]",
                               "expected a string"));
      }
      exec.args.push_back(args[i].Scalar());
    }
  }
  const YAML::Node env = node["env"];
  if (env.IsDefined() && !env.IsNull()) {
    if (!env.IsSequence()) return makeError(errAt(e.file, e.keyPath + ".env", "expected a list"));
    for (size_t i = 0; i < env.size(); ++i) {
      std::string at = e.keyPath + ".env[" + std::to_string(i) + "]";
      const YAML::Node item = env[i];
      if (!item.IsMap() || !item["name"].IsDefined() || !item["name"].IsScalar() ||
          item["name"].Scalar().empty()) {
        return makeError(errAt(e.file, at + ".name", "required"));
      }
      std::string value;
      if (item["value"].IsDefined() && !item["value"].IsNull()) {
        if (!item["value"].IsScalar()) {
          return makeError(errAt(e.file, at + ".value", "expected a string"));
        }
        value = item["value"].Scalar();
      }
      exec.env.emplace_back(item["name"].Scalar(), value);
    }
  }
  auto provide = optBool(node, "provideClusterInfo", e);
  if (!provide) return makeError(provide.error());
  exec.provideClusterInfo = *provide;
  auto mode = optString(node, "interactiveMode", e);
  if (!mode) return makeError(mode.error());
  if (!mode->empty()) exec.interactiveMode = *mode;
  if (exec.interactiveMode == "Always") {
    return makeError(errAt(e.file, e.keyPath + ".interactiveMode",
                           "Always needs a terminal, which a daemon does not have"));
  }
  if (exec.interactiveMode != "Never" && exec.interactiveMode != "IfAvailable") {
    return makeError(errAt(e.file, e.keyPath + ".interactiveMode",
                           "must be Never, IfAvailable or Always"));
  }
  auto hint = optString(node, "installHint", e);
  if (!hint) return makeError(hint.error());
  exec.installHint = *hint;
  return exec;
}

Result<RestConfig> resolve(const Merged& merged, const std::string& requestedContext) {
  std::string files;
  for (const auto& f : merged.files) files += (files.empty() ? "" : ":") + f;
  if (files.empty()) files = "<kubeconfig>";

  std::string contextName = requestedContext.empty() ? merged.currentContext : requestedContext;
  if (contextName.empty()) {
    return makeError(files + ": current-context: not set and no context was given");
  }
  auto ctxIt = merged.contexts.find(contextName);
  if (ctxIt == merged.contexts.end()) {
    return makeError(files + ": contexts: no context named \"" + contextName + "\"");
  }
  const Entry& ctx = ctxIt->second;

  RestConfig rc;
  rc.contextName = contextName;
  rc.source = files;
  auto clusterName = optString(ctx.node, "cluster", ctx);
  if (!clusterName) return makeError(clusterName.error());
  if (clusterName->empty()) return makeError(errAt(ctx.file, ctx.keyPath + ".cluster", "required"));
  auto userName = optString(ctx.node, "user", ctx);
  if (!userName) return makeError(userName.error());
  auto ns = optString(ctx.node, "namespace", ctx);
  if (!ns) return makeError(ns.error());
  rc.clusterName = *clusterName;
  rc.userName = *userName;
  rc.namespace_ = ns->empty() ? "default" : *ns;

  auto clIt = merged.clusters.find(*clusterName);
  if (clIt == merged.clusters.end()) {
    return makeError(errAt(ctx.file, ctx.keyPath + ".cluster",
                           "no cluster named \"" + *clusterName + "\""));
  }
  const Entry& cl = clIt->second;
  auto server = optString(cl.node, "server", cl);
  if (!server) return makeError(server.error());
  std::string s = std::string(detail::trim(*server));
  if (s.empty()) return makeError(errAt(cl.file, cl.keyPath + ".server", "required"));
  if (s.rfind("https://", 0) != 0 && s.rfind("http://", 0) != 0) {
    return makeError(errAt(cl.file, cl.keyPath + ".server",
                           "must start with https:// or http:// (got \"" + s + "\")"));
  }
  // "https://" or "https:///x" names no host: stripping the slashes would leave "https:".
  const size_t authority = s.find("://") + 3;
  if (authority >= s.size() || s[authority] == '/') {
    return makeError(errAt(cl.file, cl.keyPath + ".server", "has no host (got \"" + s + "\")"));
  }
  while (s.back() == '/') s.pop_back();
  rc.server = s;
  auto tlsName = optString(cl.node, "tls-server-name", cl);
  if (!tlsName) return makeError(tlsName.error());
  rc.tlsServerName = *tlsName;
  auto insecure = optBool(cl.node, "insecure-skip-tls-verify", cl);
  if (!insecure) return makeError(insecure.error());
  rc.insecureSkipTlsVerify = *insecure;
  auto ca = loadPem(cl.node, "certificate-authority", cl);
  if (!ca) return makeError(ca.error());
  rc.caPem = std::move(ca).value();
  if (rc.insecureSkipTlsVerify && !rc.caPem.empty()) {
    // Same rule as client-go: a CA with verification off is almost certainly a mistake.
    return makeError(errAt(cl.file, cl.keyPath + ".insecure-skip-tls-verify",
                           "cannot be combined with certificate-authority(-data)"));
  }
  auto proxy = optString(cl.node, "proxy-url", cl);
  if (!proxy) return makeError(proxy.error());
  rc.proxyUrl = *proxy;
  auto noCompression = optBool(cl.node, "disable-compression", cl);
  if (!noCompression) return makeError(noCompression.error());
  rc.disableCompression = *noCompression;

  if (rc.userName.empty()) return rc;  // anonymous: allowed by client-go
  auto uIt = merged.users.find(rc.userName);
  if (uIt == merged.users.end()) {
    return makeError(errAt(ctx.file, ctx.keyPath + ".user",
                           "no user named \"" + rc.userName + "\""));
  }
  const Entry& u = uIt->second;
  // Authentication methods a daemon should not use (or that client-go itself dropped) are
  // rejected by name rather than silently ignored, so the operator learns why auth fails.
  for (const char* key : {"auth-provider", "username", "password", "as", "act-as", "as-uid",
                          "act-as-uid", "as-groups", "act-as-groups", "as-user-extra",
                          "act-as-user-extra"}) {
    YAML::Node v = u.node[key];
    if (v.IsDefined() && !v.IsNull()) {
      std::string why = std::string(key) == "auth-provider"
                            ? "not supported (use an exec credential plugin)"
                        : (std::string(key) == "username" || std::string(key) == "password")
                            ? "basic authentication is not supported"
                            : "impersonation is not supported";
      return makeError(errAt(u.file, u.keyPath + "." + key, why));
    }
  }
  auto cert = loadPem(u.node, "client-certificate", u);
  if (!cert) return makeError(cert.error());
  auto key = loadPem(u.node, "client-key", u);
  if (!key) return makeError(key.error());
  if (cert->empty() != key->empty()) {
    return makeError(errAt(u.file, u.keyPath,
                           cert->empty() ? "client-key given without client-certificate"
                                         : "client-certificate given without client-key"));
  }
  rc.clientCertPem = std::move(cert).value();
  rc.clientKeyPem = std::move(key).value();
  auto token = optString(u.node, "token", u);
  if (!token) return makeError(token.error());
  rc.token = std::string(detail::trim(*token));
  auto tokenFile = optString(u.node, "tokenFile", u);
  if (!tokenFile) return makeError(tokenFile.error());
  rc.tokenFile = resolvePath(u.baseDir, *tokenFile);
  YAML::Node exec = u.node["exec"];
  if (exec.IsDefined() && !exec.IsNull()) {
    auto parsed = parseExec(exec, u);
    if (!parsed) return makeError(parsed.error());
    rc.exec = std::move(parsed).value();
  }
  return rc;
}

}  // namespace

Result<RestConfig> loadKubeconfigFromString(const std::string& yaml, const std::string& context,
                                            const std::string& baseDir,
                                            const std::string& sourceName) {
  Merged merged;
  merged.files.push_back(sourceName);
  if (auto st = mergeText(yaml, sourceName, baseDir, merged); !st) return makeError(st.error());
  try {
    return resolve(merged, context);
  } catch (const YAML::Exception& e) {
    return makeError(sourceName + ": " + e.what());
  }
}

Result<RestConfig> loadKubeconfig(const KubeconfigOptions& options) {
  std::vector<std::string> paths;
  bool fromEnvList = false;
  std::string origin;
  if (!options.explicitPath.empty()) {
    paths.push_back(options.explicitPath);
    origin = options.explicitPath;
  } else if (auto env = lookupEnv(options.getenv, "KUBECONFIG"); env && !env->empty()) {
    fromEnvList = true;
    origin = "KUBECONFIG=" + *env;
    std::set<std::string> seen;
    size_t start = 0;
    while (start <= env->size()) {
      size_t end = env->find(':', start);
      if (end == std::string::npos) end = env->size();
      std::string p = env->substr(start, end - start);
      if (!p.empty() && seen.insert(p).second) paths.push_back(p);
      start = end + 1;
    }
  } else {
    auto home = lookupEnv(options.getenv, "HOME");
    if (!home || home->empty()) {
      return makeError("no kubeconfig: neither --kubeconfig, KUBECONFIG nor HOME is set");
    }
    paths.push_back(*home + "/.kube/config");
    origin = paths.back();
  }

  Merged merged;
  for (const auto& path : paths) {
    std::error_code ec;
    if (fromEnvList && !fs::exists(path, ec)) continue;  // client-go skips missing list entries
    auto text = detail::readFile(path);
    if (!text) return makeError(text.error());
    merged.files.push_back(path);
    std::string baseDir = fs::path(path).parent_path().string();
    if (baseDir.empty()) baseDir = ".";
    if (auto st = mergeText(*text, path, baseDir, merged); !st) return makeError(st.error());
  }
  if (merged.files.empty()) return makeError(origin + ": none of the listed files exists");
  try {
    return resolve(merged, options.context);
  } catch (const YAML::Exception& e) {
    return makeError(origin + ": " + e.what());
  }
}

Result<RestConfig> inClusterConfig(const InClusterOptions& options) {
  auto host = lookupEnv(options.getenv, "KUBERNETES_SERVICE_HOST");
  auto port = lookupEnv(options.getenv, "KUBERNETES_SERVICE_PORT");
  if (!host || host->empty() || !port || port->empty()) {
    return makeError(
        "in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set (is the "
        "daemon running in a pod?)");
  }
  RestConfig rc;
  std::string h = *host;
  // net.JoinHostPort semantics: an IPv6 literal needs brackets in a URL.
  if (h.find(':') != std::string::npos && h.front() != '[') h = "[" + h + "]";
  rc.server = "https://" + h + ":" + *port;
  rc.source = "in-cluster";
  rc.contextName = "";
  rc.clusterName = "in-cluster";
  rc.userName = "service-account";

  std::error_code ec;
  if (!fs::exists(options.tokenPath, ec)) {
    return makeError("in-cluster: token file " + options.tokenPath + " does not exist");
  }
  rc.tokenFile = options.tokenPath;
  auto ca = detail::readFile(options.caPath);
  if (!ca) return makeError("in-cluster: CA bundle: " + ca.error());
  if (ca->empty()) return makeError("in-cluster: CA bundle " + options.caPath + " is empty");
  rc.caPem = std::move(ca).value();
  if (auto ns = lookupEnv(options.getenv, "POD_NAMESPACE"); ns && !ns->empty()) {
    rc.namespace_ = *ns;
  } else if (auto nsFile = detail::readFile(options.namespacePath); nsFile) {
    rc.namespace_ = std::string(detail::trim(*nsFile));
  }
  if (rc.namespace_.empty()) rc.namespace_ = "default";
  return rc;
}

}  // namespace firstwork::kube
