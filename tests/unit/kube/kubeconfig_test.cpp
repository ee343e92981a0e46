#include "firstwork/kube/kubeconfig.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>

namespace fs = std::filesystem;
using firstwork::kube::inClusterConfig;
using firstwork::kube::InClusterOptions;
using firstwork::kube::KubeconfigOptions;
using firstwork::kube::loadKubeconfig;
using firstwork::kube::loadKubeconfigFromString;

namespace {

const std::string kShared = FIRSTWORK_SHARED_FIXTURES_DIR;
// base64 -d of the fixtures' data fields, decoded by hand with coreutils.
const std::string kDummyCa = "-----BEGIN CERTIFICATE-----\nDUMMY\n-----END CERTIFICATE-----\n";
const std::string kDummyClientCert =
    "-----BEGIN CERTIFICATE-----\nDUMMY-CLIENT\n-----END CERTIFICATE-----\n";
const std::string kDummyKey =
    "-----BEGIN RSA PRIVATE KEY-----\nDUMMY\n-----END RSA PRIVATE KEY-----\n";
const std::string kNotARealCa =
    "-----BEGIN CERTIFICATE-----\nDUMMY-NOT-A-REAL-CA\n-----END CERTIFICATE-----\n";

struct TempDir {
  TempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() / ("fw-kube-" + std::to_string(rd()) + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& content) const {
    fs::path p = path / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  fs::path path;
};

auto envOf(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace

TEST_CASE("the client-certificate fixture loads every cluster and user field", "[kube][kubeconfig]") {
  KubeconfigOptions opts;
  opts.explicitPath = kShared + "/kubeconfig-clientcert-and-exec-CONSTRUCTED.yaml";
  auto rc = loadKubeconfig(opts);
  REQUIRE(rc.ok());
  CHECK(rc->contextName == "mgmt");  // current-context
  CHECK(rc->clusterName == "mgmt");
  CHECK(rc->userName == "admin-cert");
  CHECK(rc->namespace_ == "kueue-system");
  CHECK(rc->server == "https://mgmt.example.internal:6443");
  CHECK(rc->tlsServerName == "kubernetes.default.svc");
  CHECK(rc->caPem == kDummyCa);
  CHECK(rc->clientCertPem == kDummyClientCert);
  CHECK(rc->clientKeyPem == kDummyKey);
  CHECK_FALSE(rc->insecureSkipTlsVerify);
  CHECK(rc->token.empty());
  CHECK_FALSE(rc->exec.has_value());
}

TEST_CASE("the exec context of the fixture carries the plugin configuration", "[kube][kubeconfig]") {
  KubeconfigOptions opts;
  opts.explicitPath = kShared + "/kubeconfig-clientcert-and-exec-CONSTRUCTED.yaml";
  opts.context = "worker2";
  auto rc = loadKubeconfig(opts);
  REQUIRE(rc.ok());
  CHECK(rc->server == "https://worker2.example.internal:6443");
  CHECK(rc->namespace_ == "default");  // context without namespace
  REQUIRE(rc->exec.has_value());
  CHECK(rc->exec->command == "/usr/local/bin/example-credential-helper");
  CHECK(rc->exec->args == std::vector<std::string>{"get-token", "--cluster=worker2"});
  REQUIRE(rc->exec->env.size() == 1);
  CHECK(rc->exec->env[0].first == "HELPER_MODE");
  CHECK(rc->exec->env[0].second == "noninteractive");
  CHECK(rc->exec->apiVersion == "client.authentication.k8s.io/v1");
  CHECK(rc->exec->installHint == "install example-credential-helper");
  CHECK_FALSE(rc->exec->provideClusterInfo);
  CHECK(rc->exec->interactiveMode == "Never");
}

TEST_CASE("the MultiKueue token fixture loads", "[kube][kubeconfig]") {
  KubeconfigOptions opts;
  opts.explicitPath = kShared + "/kubeconfig-token-multikueue-worker-CONSTRUCTED.yaml";
  auto rc = loadKubeconfig(opts);
  REQUIRE(rc.ok());
  CHECK(rc->contextName == "kind-worker1");
  CHECK(rc->server == "https://worker1.example.internal:6443");
  CHECK(rc->token == "eyJhbGciOiJSUzI1NiIsImtpZCI6IkRVTU1ZIn0.DUMMY-NOT-A-REAL-TOKEN.DUMMY");
  CHECK(rc->caPem == kNotARealCa);
  CHECK(rc->tokenFile.empty());
}

TEST_CASE("an unknown context is an error naming the file", "[kube][kubeconfig]") {
  KubeconfigOptions opts;
  opts.explicitPath = kShared + "/kubeconfig-token-multikueue-worker-CONSTRUCTED.yaml";
  opts.context = "nope";
  auto rc = loadKubeconfig(opts);
  REQUIRE_FALSE(rc.ok());
  CHECK_THAT(rc.error(), Catch::Contains("kubeconfig-token-multikueue-worker-CONSTRUCTED.yaml"));
  CHECK_THAT(rc.error(), Catch::Contains("\"nope\""));
}

TEST_CASE("KUBECONFIG merges files: the first file defining a name wins", "[kube][kubeconfig]") {
  TempDir dir;
  std::string a = dir.write("a/config", R"(
apiVersion: v1
kind: Config
current-context: ctx-a
clusters:
- name: shared
  cluster: {server: "https://from-a:6443", certificate-authority: ca.pem}
contexts:
- name: ctx-a
  context: {cluster: shared, user: u}
)");
  dir.write("a/ca.pem", "CA-A");
  std::string b = dir.write("b/config", R"(
apiVersion: v1
kind: Config
current-context: ctx-b
clusters:
- name: shared
  cluster: {server: "https://from-b:6443"}
- name: only-b
  cluster: {server: "https://only-b:6443/prefix/", certificate-authority: ca.pem}
users:
- name: u
  user: {tokenFile: token}
contexts:
- name: ctx-b
  context: {cluster: only-b, user: u, namespace: team}
)");
  dir.write("b/ca.pem", "CA-B");
  std::string missing = (dir.path / "missing").string();

  KubeconfigOptions opts;
  opts.getenv = envOf({{"KUBECONFIG", missing + ":" + a + "::" + b}});
  auto rc = loadKubeconfig(opts);
  REQUIRE(rc.ok());
  // current-context from a (first to set it); cluster "shared" from a; user "u" only in b,
  // its relative tokenFile resolved against b's directory.
  CHECK(rc->contextName == "ctx-a");
  CHECK(rc->server == "https://from-a:6443");
  CHECK(rc->caPem == "CA-A");
  CHECK(rc->tokenFile == (dir.path / "b" / "token").string());

  opts.context = "ctx-b";
  auto rb = loadKubeconfig(opts);
  REQUIRE(rb.ok());
  CHECK(rb->server == "https://only-b:6443/prefix");  // trailing slash dropped
  CHECK(rb->caPem == "CA-B");
  CHECK(rb->namespace_ == "team");
}

TEST_CASE("KUBECONFIG with no existing file is an error", "[kube][kubeconfig]") {
  KubeconfigOptions opts;
  opts.getenv = envOf({{"KUBECONFIG", "/nonexistent/one:/nonexistent/two"}});
  auto rc = loadKubeconfig(opts);
  REQUIRE_FALSE(rc.ok());
  CHECK_THAT(rc.error(), Catch::Contains("none of the listed files exists"));
}

TEST_CASE("without KUBECONFIG the file under HOME is read", "[kube][kubeconfig]") {
  TempDir dir;
  dir.write(".kube/config", R"(
current-context: c
clusters: [{name: k, cluster: {server: "http://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: k}}]
)");
  KubeconfigOptions opts;
  opts.getenv = envOf({{"HOME", dir.path.string()}});
  auto rc = loadKubeconfig(opts);
  REQUIRE(rc.ok());
  CHECK(rc->server == "http://127.0.0.1:1");
  CHECK(rc->userName.empty());
}

TEST_CASE("errors name the file and the key path", "[kube][kubeconfig]") {
  auto load = [](const std::string& yaml) {
    return loadKubeconfigFromString(yaml, "", "/tmp", "/etc/kc.yaml");
  };
  SECTION("missing server") {
    auto rc = load(R"(
current-context: c
clusters: [{name: k, cluster: {tls-server-name: x}}]
contexts: [{name: c, context: {cluster: k}}]
)");
    REQUIRE_FALSE(rc.ok());
    CHECK(rc.error() == "/etc/kc.yaml: clusters[0].cluster.server: required");
  }
  SECTION("a server URL without a host") {
    // Found by fuzz/fuzz_kubeconfig: "https:///" lost its slashes and was accepted as "https:".
    for (const char* server : {"https://", "https:///", "http:///api", " https:/// "}) {
      INFO(server);
      auto rc = load(std::string(R"(
current-context: c
clusters: [{name: k, cluster: {server: ")") + server + R"("}}]
contexts: [{name: c, context: {cluster: k}}]
)");
      REQUIRE_FALSE(rc.ok());
      CHECK_THAT(rc.error(),
                 Catch::StartsWith("/etc/kc.yaml: clusters[0].cluster.server: has no host"));
    }
  }
  SECTION("exec without command") {
    auto rc = load(R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://a"}}]
users:
- name: other
  user: {token: t}
- name: u
  user: {exec: {apiVersion: client.authentication.k8s.io/v1}}
contexts: [{name: c, context: {cluster: k, user: u}}]
)");
    REQUIRE_FALSE(rc.ok());
    CHECK(rc.error() == "/etc/kc.yaml: users[1].user.exec.command: required");
  }
  SECTION("unsupported exec apiVersion") {
    auto rc = load(R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://a"}}]
users: [{name: u, user: {exec: {command: x, apiVersion: client.authentication.k8s.io/v1alpha1}}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)");
    REQUIRE_FALSE(rc.ok());
    CHECK_THAT(rc.error(), Catch::StartsWith("/etc/kc.yaml: users[0].user.exec.apiVersion:"));
  }
  SECTION("interactive mode Always") {
    auto rc = load(R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://a"}}]
users: [{name: u, user: {exec: {command: x, apiVersion: client.authentication.k8s.io/v1beta1, interactiveMode: Always}}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)");
    REQUIRE_FALSE(rc.ok());
    CHECK_THAT(rc.error(), Catch::StartsWith("/etc/kc.yaml: users[0].user.exec.interactiveMode:"));
  }
  SECTION("unreadable certificate-authority file") {
    auto rc = load(R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://a", certificate-authority: no-such-ca.pem}}]
contexts: [{name: c, context: {cluster: k}}]
)");
    REQUIRE_FALSE(rc.ok());
    CHECK_THAT(rc.error(),
               Catch::StartsWith("/etc/kc.yaml: clusters[0].cluster.certificate-authority: "
                                 "cannot read /tmp/no-such-ca.pem"));
  }
  SECTION("bad base64") {
    auto rc = load(R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://a", certificate-authority-data: "@@@"}}]
contexts: [{name: c, context: {cluster: k}}]
)");
    REQUIRE_FALSE(rc.ok());
    CHECK_THAT(rc.error(),
               Catch::StartsWith("/etc/kc.yaml: clusters[0].cluster.certificate-authority-data:"));
  }
  SECTION("auth-provider is rejected by name") {
    auto rc = load(R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://a"}}]
users: [{name: u, user: {auth-provider: {name: oidc}}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)");
    REQUIRE_FALSE(rc.ok());
    CHECK_THAT(rc.error(), Catch::StartsWith("/etc/kc.yaml: users[0].user.auth-provider:"));
  }
  SECTION("a certificate without its key") {
    auto rc = load(R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://a"}}]
users: [{name: u, user: {client-certificate-data: QUJD}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)");
    REQUIRE_FALSE(rc.ok());
    CHECK(rc.error() == "/etc/kc.yaml: users[0].user: client-certificate given without client-key");
  }
  SECTION("a context naming a missing user") {
    auto rc = load(R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://a"}}]
contexts: [{name: c, context: {cluster: k, user: ghost}}]
)");
    REQUIRE_FALSE(rc.ok());
    CHECK(rc.error() == "/etc/kc.yaml: contexts[0].context.user: no user named \"ghost\"");
  }
  SECTION("invalid YAML") {
    auto rc = load("clusters: [unclosed\n");
    REQUIRE_FALSE(rc.ok());
    CHECK_THAT(rc.error(), Catch::StartsWith("/etc/kc.yaml: invalid YAML"));
  }
  SECTION("no current context") {
    auto rc = load("clusters: []\n");
    REQUIRE_FALSE(rc.ok());
    CHECK_THAT(rc.error(), Catch::Contains("current-context"));
  }
}

TEST_CASE("insecure-skip-tls-verify is allowed and flagged but not with a CA", "[kube][kubeconfig]") {
  auto rc = loadKubeconfigFromString(R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://a", insecure-skip-tls-verify: true, proxy-url: "http://proxy:3128"}}]
contexts: [{name: c, context: {cluster: k}}]
)",
                                     "", "/tmp");
  REQUIRE(rc.ok());
  CHECK(rc->insecureSkipTlsVerify);
  CHECK(rc->proxyUrl == "http://proxy:3128");

  auto bad = loadKubeconfigFromString(R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://a", insecure-skip-tls-verify: true, certificate-authority-data: QUJD}}]
contexts: [{name: c, context: {cluster: k}}]
)",
                                      "", "/tmp", "kc");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error(), Catch::StartsWith("kc: clusters[0].cluster.insecure-skip-tls-verify:"));
}

TEST_CASE("file references resolve against the kubeconfig's directory", "[kube][kubeconfig]") {
  TempDir dir;
  dir.write("conf/certs/ca.crt", "CA");
  dir.write("conf/certs/client.crt", "CERT");
  dir.write("conf/certs/client.key", "KEY");
  std::string path = dir.write("conf/kubeconfig", R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://a", certificate-authority: certs/ca.crt}}]
users:
- name: u
  user:
    client-certificate: certs/client.crt
    client-key: certs/client.key
    exec: {command: ./bin/helper, apiVersion: client.authentication.k8s.io/v1, provideClusterInfo: true}
contexts: [{name: c, context: {cluster: k, user: u}}]
)");
  KubeconfigOptions opts;
  opts.explicitPath = path;
  auto rc = loadKubeconfig(opts);
  REQUIRE(rc.ok());
  CHECK(rc->caPem == "CA");
  CHECK(rc->clientCertPem == "CERT");
  CHECK(rc->clientKeyPem == "KEY");
  REQUIRE(rc->exec);
  CHECK(rc->exec->command == (dir.path / "conf" / "bin" / "helper").string());
  CHECK(rc->exec->provideClusterInfo);
  CHECK(rc->exec->interactiveMode == "IfAvailable");  // default when absent
}

TEST_CASE("in-cluster configuration reads the service account files", "[kube][kubeconfig]") {
  TempDir dir;
  InClusterOptions opts;
  opts.tokenPath = dir.write("sa/token", "tok\n");
  opts.caPath = dir.write("sa/ca.crt", "CA-PEM");
  opts.namespacePath = dir.write("sa/namespace", "firstwork-system\n");
  opts.getenv = envOf({{"KUBERNETES_SERVICE_HOST", "10.96.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}});
  auto rc = inClusterConfig(opts);
  REQUIRE(rc.ok());
  CHECK(rc->server == "https://10.96.0.1:443");
  CHECK(rc->tokenFile == opts.tokenPath);
  CHECK(rc->caPem == "CA-PEM");
  CHECK(rc->namespace_ == "firstwork-system");
  CHECK(rc->source == "in-cluster");

  SECTION("an IPv6 service host is bracketed") {
    opts.getenv = envOf({{"KUBERNETES_SERVICE_HOST", "fd00:10:96::1"},
                         {"KUBERNETES_SERVICE_PORT", "6443"},
                         {"POD_NAMESPACE", "from-env"}});
    auto v6 = inClusterConfig(opts);
    REQUIRE(v6.ok());
    CHECK(v6->server == "https://[fd00:10:96::1]:6443");
    CHECK(v6->namespace_ == "from-env");
  }
  SECTION("missing environment") {
    opts.getenv = envOf({});
    auto e = inClusterConfig(opts);
    REQUIRE_FALSE(e.ok());
    CHECK_THAT(e.error(), Catch::Contains("KUBERNETES_SERVICE_HOST"));
  }
  SECTION("missing token file") {
    opts.tokenPath = (dir.path / "sa" / "nope").string();
    auto e = inClusterConfig(opts);
    REQUIRE_FALSE(e.ok());
    CHECK_THAT(e.error(), Catch::Contains("nope"));
  }
}
