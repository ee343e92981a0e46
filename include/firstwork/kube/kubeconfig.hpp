#pragma once
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "firstwork/core/result.hpp"

namespace firstwork::kube {

/// `users[].user.exec` of a kubeconfig (client.authentication.k8s.io v1 / v1beta1).
struct ExecConfig {
  std::string command;  // absolute, a bare name looked up in PATH, or resolved against the file
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string apiVersion;             // "client.authentication.k8s.io/v1" or ".../v1beta1"
  bool provideClusterInfo = false;    // pass spec.cluster in KUBERNETES_EXEC_INFO
  std::string interactiveMode = "IfAvailable";  // Never | IfAvailable | Always (rejected)
  std::string installHint;
};

/// Everything needed to talk to one API server, resolved from a kubeconfig context or the
/// in-cluster service account: file paths are already read (PEM data is in memory), relative
/// paths resolved against the kubeconfig file that named them. Plain data; any thread.
struct RestConfig {
  std::string server;  // "https://host:port[/prefix]" without a trailing slash
  std::string tlsServerName;         // SNI + certificate name when it differs from the host
  bool insecureSkipTlsVerify = false;  // allowed, but the daemon warns and counts it
  std::string caPem;                 // cluster CA bundle (PEM); empty = system trust store
  std::string proxyUrl;              // http(s):// or socks5:// proxy; empty = environment
  bool disableCompression = false;
  std::string clientCertPem;         // static client certificate (PEM)
  std::string clientKeyPem;          // its key (PEM)
  std::string token;                 // static bearer token
  std::string tokenFile;             // bearer token file, re-read periodically and on 401
  std::optional<ExecConfig> exec;    // credential plugin

  std::string contextName;  // the context used ("" for in-cluster)
  std::string clusterName;
  std::string userName;
  std::string namespace_;   // context namespace / service account namespace
  std::string source;       // where this came from, for messages: file path(s) or "in-cluster"
};

/// Where to load a kubeconfig from. With `explicitPath` only that file is read (as client-go's
/// --kubeconfig); otherwise the `KUBECONFIG` path list (`:`-separated, missing files skipped,
/// the first file that defines a cluster/user/context name or current-context wins), otherwise
/// `$HOME/.kube/config`.
struct KubeconfigOptions {
  std::string explicitPath;
  std::string context;  // "" = current-context
  /// Environment lookup (KUBECONFIG, HOME); tests pass their own. nullptr = getenv.
  std::function<std::optional<std::string>(const std::string&)> getenv;
};

/// Loads and resolves one context. Errors name the file and the key path
/// (e.g. `/etc/kc.yaml: users[1].user.exec.command: required`).
Result<RestConfig> loadKubeconfig(const KubeconfigOptions& options);

/// Resolves a kubeconfig given as text; relative paths resolve against `baseDir`.
Result<RestConfig> loadKubeconfigFromString(const std::string& yaml, const std::string& context,
                                            const std::string& baseDir,
                                            const std::string& sourceName = "<kubeconfig>");

/// In-cluster service-account configuration (client-go rest.InClusterConfig). Paths are
/// overridable for tests.
struct InClusterOptions {
  std::string tokenPath = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string caPath = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
  std::string namespacePath = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";
  std::function<std::optional<std::string>(const std::string&)> getenv;  // nullptr = getenv
};

/// Host from KUBERNETES_SERVICE_HOST/PORT (IPv6 literals bracketed), the token file (re-read at
/// run time, so only its presence is checked here) and the CA bundle.
Result<RestConfig> inClusterConfig(const InClusterOptions& options = {});

}  // namespace firstwork::kube
