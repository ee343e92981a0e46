#include "firstwork/kube/credentials.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "fakes/fake_clock.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "kube_test_util.hpp"

using namespace firstwork;
using namespace firstwork::kube;
using namespace std::chrono_literals;
using firstwork::testing::FakeClock;
using firstwork::testing::TempDir;

namespace {

// acquire() for sources that answer synchronously.
Result<Credentials> acquireNow(CredentialSource& src) {
  std::optional<Result<Credentials>> out;
  src.acquire([&](Result<Credentials> r) { out.emplace(std::move(r)); });
  REQUIRE(out.has_value());
  return std::move(*out);
}

// acquire() that may need the loop (exec plugin).
Result<Credentials> acquireLoop(boost::asio::io_context& io, CredentialSource& src) {
  std::optional<Result<Credentials>> out;
  src.acquire([&](Result<Credentials> r) { out.emplace(std::move(r)); });
  REQUIRE(firstwork::testing::runUntil(io, [&] { return out.has_value(); }));
  return std::move(*out);
}

const std::string kPlugin = std::string(FIRSTWORK_TEST_FIXTURES_DIR) + "/kube/exec-plugin.sh";

struct PluginSetup {
  TempDir dir;
  ExecConfig config;
  ExecClusterInfo cluster;
  PluginSetup() {
    dir.write("token", "exec-token-1");
    config.command = kPlugin;
    config.apiVersion = "client.authentication.k8s.io/v1";
    config.interactiveMode = "Never";
    config.provideClusterInfo = true;
    config.env = {{"FW_EXEC_COUNT_FILE", dir.file("count")},
                  {"FW_EXEC_TOKEN_FILE", dir.file("token")},
                  {"FW_EXEC_INFO_FILE", dir.file("info")}};
    cluster.server = "https://10.0.0.1:6443";
    cluster.tlsServerName = "kubernetes.default.svc";
    cluster.caPem = "CA-PEM";
  }
  void set(const std::string& name, const std::string& value) { config.env.emplace_back(name, value); }
  int runsOnDisk() const { return std::stoi(dir.read("count")); }
};

}  // namespace

TEST_CASE("a token file is re-read after a minute and not before", "[kube][credentials]") {
  FakeClock clock;
  TempDir dir;
  std::string path = dir.write("token", "tok-1\n");
  TokenFileCredentials src(clock, path);
  auto a = acquireNow(src);
  REQUIRE(a.ok());
  CHECK(a->token == "tok-1");  // whitespace trimmed
  CHECK(src.reads() == 1);

  dir.write("token", "tok-2");
  clock.advance(59s);
  CHECK(acquireNow(src)->token == "tok-1");
  CHECK(src.reads() == 1);
  clock.advance(1s);  // 60 s since the read
  auto b = acquireNow(src);
  CHECK(b->token == "tok-2");
  CHECK(b->generation != a->generation);
  CHECK(src.reads() == 2);
}

TEST_CASE("a 401 makes the token file be read again at once", "[kube][credentials]") {
  FakeClock clock;
  TempDir dir;
  std::string path = dir.write("token", "tok-1");
  TokenFileCredentials src(clock, path);
  auto a = acquireNow(src);
  dir.write("token", "tok-2");
  src.invalidate(a->generation + 100);  // not the generation in use: ignored
  CHECK(acquireNow(src)->token == "tok-1");
  src.invalidate(a->generation);
  auto b = acquireNow(src);
  CHECK(b->token == "tok-2");
  CHECK(src.reads() == 2);
}

TEST_CASE("an unreadable token file keeps the last good token", "[kube][credentials]") {
  FakeClock clock;
  TempDir dir;
  std::string path = dir.write("token", "tok-1");
  TokenFileCredentials src(clock, path, 60s, "fallback");
  CHECK(acquireNow(src)->token == "tok-1");
  std::filesystem::remove(path);
  clock.advance(61s);
  CHECK(acquireNow(src)->token == "tok-1");

  TokenFileCredentials withFallback(clock, dir.file("never"), 60s, "fallback");
  CHECK(acquireNow(withFallback)->token == "fallback");
  TokenFileCredentials without(clock, dir.file("never"));
  auto e = acquireNow(without);
  REQUIRE_FALSE(e.ok());
  CHECK_THAT(e.error(), Catch::Contains("never"));
}

TEST_CASE("the exec plugin supplies the token and receives KUBERNETES_EXEC_INFO",
          "[kube][credentials][exec]") {
  boost::asio::io_context io;
  FakeClock clock;  // system time = now, so the plugin's real `date` is comparable
  PluginSetup p;
  ExecCredentials src(io, clock, p.config, p.cluster);
  auto a = acquireLoop(io, src);
  REQUIRE(a.ok());
  CHECK(a->token == "exec-token-1");
  CHECK(src.runs() == 1);
  CHECK(p.runsOnDisk() == 1);

  auto info = nlohmann::json::parse(p.dir.read("info"));
  CHECK(info["apiVersion"] == "client.authentication.k8s.io/v1");
  CHECK(info["kind"] == "ExecCredential");
  CHECK(info["spec"]["interactive"] == false);
  CHECK(info["spec"]["cluster"]["server"] == "https://10.0.0.1:6443");
  CHECK(info["spec"]["cluster"]["tls-server-name"] == "kubernetes.default.svc");
  CHECK(info["spec"]["cluster"]["certificate-authority-data"] == "Q0EtUEVN");  // base64("CA-PEM")

  // Cached while valid.
  CHECK(acquireLoop(io, src)->token == "exec-token-1");
  CHECK(src.runs() == 1);
}

TEST_CASE("the exec plugin is re-run shortly before expiry and after a 401",
          "[kube][credentials][exec]") {
  boost::asio::io_context io;
  FakeClock clock;
  PluginSetup p;
  p.set("FW_EXEC_TTL", "3600");
  ExecOptions opts;
  opts.refreshBefore = 10s;
  ExecCredentials src(io, clock, p.config, p.cluster, opts);
  auto first = acquireLoop(io, src);
  REQUIRE(first.ok());
  REQUIRE(src.runs() == 1);

  // The plugin wrote expiry = (its own now, truncated to seconds) + 3600 s, i.e. more than
  // start + 3599 s. At +3585 s: 3585 + 10 = 3595 < 3599 ⇒ still fresh.
  clock.advance(3585s);
  CHECK(acquireLoop(io, src)->token == "exec-token-1");
  CHECK(src.runs() == 1);
  // At +3595 s: 3595 + 10 = 3605 > 3600 + (ms the plugin took) ⇒ re-run.
  p.dir.write("token", "exec-token-2");
  clock.advance(10s);
  auto second = acquireLoop(io, src);
  CHECK(second->token == "exec-token-2");
  CHECK(src.runs() == 2);
  CHECK(p.runsOnDisk() == 2);

  // 401 with the current credentials ⇒ re-run on the next acquire.
  p.dir.write("token", "exec-token-3");
  src.invalidate(second->generation);
  auto third = acquireLoop(io, src);
  CHECK(third->token == "exec-token-3");
  CHECK(src.runs() == 3);
}

TEST_CASE("concurrent acquires share one plugin run", "[kube][credentials][exec]") {
  boost::asio::io_context io;
  FakeClock clock;
  PluginSetup p;
  ExecCredentials src(io, clock, p.config, p.cluster);
  std::vector<std::string> tokens;
  for (int i = 0; i < 5; ++i) {
    src.acquire([&](Result<Credentials> r) { tokens.push_back(r ? r->token : r.error()); });
  }
  REQUIRE(firstwork::testing::runUntil(io, [&] { return tokens.size() == 5; }));
  CHECK(src.runs() == 1);
  for (const auto& t : tokens) CHECK(t == "exec-token-1");
}

TEST_CASE("exec plugin failures are errors that name the plugin", "[kube][credentials][exec]") {
  boost::asio::io_context io;
  FakeClock clock;
  PluginSetup p;
  SECTION("non-zero exit") {
    p.set("FW_EXEC_MODE", "fail");
    ExecCredentials src(io, clock, p.config, p.cluster);
    auto r = acquireLoop(io, src);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == "exec plugin exec-plugin.sh: exited with status 3");
  }
  SECTION("output that is not an ExecCredential") {
    p.set("FW_EXEC_MODE", "garbage");
    ExecCredentials src(io, clock, p.config, p.cluster);
    auto r = acquireLoop(io, src);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == "exec plugin exec-plugin.sh: output is not JSON");
  }
  SECTION("a plugin answering with another apiVersion") {
    p.set("FW_EXEC_API_VERSION", "client.authentication.k8s.io/v1beta1");
    ExecCredentials src(io, clock, p.config, p.cluster);
    auto r = acquireLoop(io, src);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error(), Catch::Contains("plugin returned apiVersion"));
  }
  SECTION("a hung plugin is killed after the timeout") {
    p.set("FW_EXEC_MODE", "sleep");
    ExecOptions opts;
    opts.timeout = 200ms;
    ExecCredentials src(io, clock, p.config, p.cluster, opts);
    auto r = acquireLoop(io, src);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == "exec plugin exec-plugin.sh: killed after 200 ms timeout");
  }
  SECTION("a missing command") {
    p.config.command = "/nonexistent/credential-helper";
    p.config.installHint = "install the helper";
    ExecCredentials src(io, clock, p.config, p.cluster);
    auto r = acquireLoop(io, src);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error(), Catch::StartsWith("exec plugin credential-helper: cannot start:"));
    CHECK_THAT(r.error(), Catch::EndsWith("(install the helper)"));
  }
}

TEST_CASE("cluster info is only sent when asked for", "[kube][credentials][exec]") {
  boost::asio::io_context io;
  FakeClock clock;
  PluginSetup p;
  p.config.provideClusterInfo = false;
  p.config.apiVersion = "client.authentication.k8s.io/v1beta1";
  ExecCredentials src(io, clock, p.config, p.cluster);
  auto info = nlohmann::json::parse(src.execInfoJson());
  CHECK(info["apiVersion"] == "client.authentication.k8s.io/v1beta1");
  CHECK(info["spec"]["interactive"] == false);
  CHECK_FALSE(info["spec"].contains("cluster"));
}

TEST_CASE("ExecCredential output is parsed strictly", "[kube][credentials][exec]") {
  auto fixture = firstwork::testing::TempDir();  // only for reading the shared fixture
  std::ifstream in(std::string(FIRSTWORK_SHARED_FIXTURES_DIR) +
                   "/exec-credential-v1-response-CONSTRUCTED.json");
  std::stringstream ss;
  ss << in.rdbuf();
  auto parsed = parseExecCredential(ss.str(), "client.authentication.k8s.io/v1");
  REQUIRE(parsed.ok());
  CHECK(parsed->token == "DUMMY-NOT-A-REAL-TOKEN");
  REQUIRE(parsed->expiry);
  CHECK(*parsed->expiry == *parseRfc3339("2026-08-20T11:00:00Z"));

  auto certs = parseExecCredential(
      R"({"apiVersion":"v","kind":"ExecCredential","status":{"clientCertificateData":"C","clientKeyData":"K"}})",
      "v");
  REQUIRE(certs.ok());
  CHECK(certs->clientCertPem == "C");
  CHECK(certs->clientKeyPem == "K");
  CHECK_FALSE(certs->expiry);

  CHECK_FALSE(parseExecCredential(
      R"({"apiVersion":"v","kind":"ExecCredential","status":{"clientCertificateData":"C"}})", "v"));
  CHECK_FALSE(parseExecCredential(R"({"apiVersion":"v","kind":"ExecCredential","status":{}})", "v"));
  CHECK_FALSE(parseExecCredential(
      R"({"apiVersion":"v","kind":"ExecCredential","status":{"token":"t","expirationTimestamp":"soon"}})",
      "v"));
  CHECK_FALSE(parseExecCredential(R"({"apiVersion":"v","kind":"Other","status":{"token":"t"}})", "v"));
}

TEST_CASE("credential precedence follows client-go", "[kube][credentials]") {
  boost::asio::io_context io;
  FakeClock clock;
  RestConfig rc;
  rc.server = "https://a";
  rc.exec = ExecConfig{};
  rc.exec->command = "helper";
  rc.exec->apiVersion = "client.authentication.k8s.io/v1";
  CHECK(makeCredentialSource(io, clock, rc)->describe() == "exec plugin helper");
  rc.clientCertPem = "CERT";  // a static certificate wins over exec
  rc.clientKeyPem = "KEY";
  CHECK(makeCredentialSource(io, clock, rc)->describe() == "no bearer token");
  rc.token = "t";
  CHECK(makeCredentialSource(io, clock, rc)->describe() == "static token");
  rc.tokenFile = "/var/run/token";  // tokenFile wins over token
  CHECK(makeCredentialSource(io, clock, rc)->describe() == "token file /var/run/token");
}
