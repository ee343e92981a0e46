#include "firstwork/http/http_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "firstwork/http/httplib.hpp"
#include "firstwork/metrics/self_metrics.hpp"
#include "fakes/manual_clock.hpp"

using namespace firstwork;
using namespace firstwork::http;
using namespace std::chrono_literals;

namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "fw-http-XXXXXX").string();
    path = mkdtemp(templ.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(path / name) << content;
    return file(name);
  }
};

struct Fixture {
  prometheus::Registry registry;
  metrics::SelfMetrics self{registry, metrics::SelfMetrics::defaultLagBuckets(), "0.1.0", "test"};
  testing::ManualClock clock;
  MetricsSnapshot snapshot{registry, clock};

  std::unique_ptr<HttpServer> start(HttpServerOptions options) {
    auto server = std::make_unique<HttpServer>(std::move(options), snapshot, clock);
    return server;
  }
};

// Designated initialisers would trip -Wmissing-field-initializers; build options field by field.
HttpServerOptions opts(std::string listen, std::function<void(HttpServerOptions&)> more = {}) {
  HttpServerOptions o;
  o.listen = std::move(listen);
  if (more) more(o);
  return o;
}

httplib::Client client(const HttpServer& server) {
  httplib::Client c("127.0.0.1", server.port());
  c.set_connection_timeout(5s);
  c.set_read_timeout(10s);
  return c;
}

}  // namespace

TEST_CASE("the server binds port 0, reports the port and serves the fixed endpoints",
          "[http][server]") {
  Fixture f;
  f.self.watchUp("w1", "pods", true);
  f.self.watchEvent("w1", "pods", "ADDED", 3);
  f.self.observationLag("w1", "pods", 0.2);
  HttpServer server(opts("127.0.0.1:0"), f.snapshot, f.clock);
  REQUIRE(server.start().ok());
  REQUIRE(server.port() != 0);
  CHECK(server.baseUrl() == "http://127.0.0.1:" + std::to_string(server.port()));
  auto c = client(server);

  auto metrics = c.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->status == 200);
  CHECK(metrics->get_header_value("Content-Type") == "text/plain; version=0.0.4; charset=utf-8");
  CHECK(metrics->body.find(R"(firstwork_watch_up{cluster="w1",resource="pods"} 1)") !=
        std::string::npos);

  auto health = c.Get("/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);
  CHECK(health->body == "ok\n");
  auto ready = c.Get("/readyz");
  REQUIRE(ready);
  CHECK(ready->status == 200);  // no readiness check registered: ready

  auto other = c.Get("/nope");
  REQUIRE(other);
  CHECK(other->status == 404);
  auto post = c.Post("/metrics", "x", "text/plain");
  REQUIRE(post);
  CHECK(post->status == 405);
  CHECK(post->get_header_value("Allow") == "GET, HEAD");
  server.stop();
  CHECK_FALSE(server.running());
  CHECK(server.port() == 0);
}

TEST_CASE("/metrics passes promtool check metrics", "[http][server][promtool]") {
  Fixture f;
  f.self.watchUp("w1", "workloads", true);
  f.self.watchEvent("w1", "workloads", "BOOKMARK");
  f.self.watchRestart("w1", "workloads", "expired");
  f.self.decodeError("w1", "workloads");
  f.self.trackedObjects("w1", "workloads", 10);
  f.self.clockSkew("w1", 0.25);
  f.self.observationLag("w1", "workloads", 3);
  f.self.insecureTls("w1", false);
  f.self.storeError("write");
  f.self.usefulWorkQuery("ok");
  HttpServer server(opts("127.0.0.1:0"), f.snapshot, f.clock);
  REQUIRE(server.start().ok());
  auto res = client(server).Get("/metrics");
  REQUIRE(res);
  REQUIRE(res->status == 200);

  TempDir dir;
  std::string input = dir.write("metrics.txt", res->body);
  std::string output = dir.file("promtool.out");
  int rc = std::system(
      ("/usr/bin/promtool check metrics < '" + input + "' > '" + output + "' 2>&1").c_str());
  std::ifstream out(output);
  std::stringstream text;
  text << out.rdbuf();
  INFO("promtool output:\n" << text.str() << "\nmetrics:\n" << res->body);
  REQUIRE(WIFEXITED(rc));
  CHECK(WEXITSTATUS(rc) == 0);
}

TEST_CASE("healthz follows the event-loop heartbeat", "[http][server]") {
  Fixture f;
  HttpServer server(opts("127.0.0.1:0", [](auto& o) { o.heartbeatTimeout = 30s; }), f.snapshot, f.clock);
  REQUIRE(server.start().ok());
  auto c = client(server);
  f.clock.advance(30s);  // exactly the limit: still healthy
  CHECK(c.Get("/healthz")->status == 200);
  f.clock.advance(12s);  // 42 s since start, the initial heartbeat
  auto stale = c.Get("/healthz");
  CHECK(stale->status == 503);
  CHECK(stale->body == "event loop heartbeat 42.0s old (limit 30.0s)\n");
  server.heartbeat();
  CHECK(c.Get("/healthz")->status == 200);
}

TEST_CASE("readyz lists what is not ready", "[http][server]") {
  Fixture f;
  HttpServer server(opts("127.0.0.1:0"), f.snapshot, f.clock);
  std::atomic<int> phase{0};
  server.setReadinessCheck([&]() -> std::vector<std::string> {
    if (phase == 0) return {"cluster w1: pods initial list", "cluster w1: nodes initial list"};
    if (phase == 1) throw std::runtime_error("boom");
    return {};
  });
  REQUIRE(server.start().ok());
  auto c = client(server);
  auto waiting = c.Get("/readyz");
  CHECK(waiting->status == 503);
  CHECK(waiting->body ==
        "not ready:\n- cluster w1: pods initial list\n- cluster w1: nodes initial list\n");
  phase = 1;
  auto failing = c.Get("/readyz");
  CHECK(failing->status == 503);
  CHECK(failing->body == "not ready:\n- readiness check failed: boom\n");
  phase = 2;
  CHECK(c.Get("/readyz")->status == 200);
}

TEST_CASE("API routes get query parameters and return JSON and failures stay inside",
          "[http][server][api]") {
  Fixture f;
  HttpServer server(opts("127.0.0.1:0"), f.snapshot, f.clock);
  server.addApiRoute("incidents", [](const ApiRequest& req) {
    auto cluster = req.param("cluster");
    if (cluster && *cluster == "bad") return ApiResponse::error(400, "unknown cluster \"bad\"");
    return ApiResponse::json(R"({"cluster":")" + cluster.value_or("") + R"(","n":)" +
                             std::to_string(req.params.size()) + "}");
  });
  server.addApiRoute("workloads/", [](const ApiRequest& req) {
    return ApiResponse::json(R"({"rest":")" + req.rest + R"("})");
  });
  server.addApiRoute("/workloads/special", [](const ApiRequest&) {
    return ApiResponse::json(R"({"exact":true})");
  });
  server.addApiRoute("boom", [](const ApiRequest&) -> ApiResponse {
    throw std::runtime_error("handler bug");
  });
  REQUIRE(server.start().ok());
  auto c = client(server);

  auto ok = c.Get("/api/v1/incidents?cluster=w%2D1&since=2026-05-01T00:00:00Z");
  REQUIRE(ok);
  CHECK(ok->status == 200);
  CHECK(ok->get_header_value("Content-Type") == "application/json; charset=utf-8");
  CHECK(ok->body == R"({"cluster":"w-1","n":2})");

  auto bad = c.Get("/api/v1/incidents?cluster=bad");
  CHECK(bad->status == 400);
  CHECK(bad->body == R"({"error":"unknown cluster \"bad\""})");

  CHECK(c.Get("/api/v1/workloads/ns/name")->body == R"({"rest":"ns/name"})");
  CHECK(c.Get("/api/v1/workloads/special")->body == R"({"exact":true})");

  auto unknown = c.Get("/api/v1/nothing");
  CHECK(unknown->status == 404);
  CHECK(unknown->body == R"({"error":"no such API path: /api/v1/nothing"})");

  auto boom = c.Get("/api/v1/boom");
  CHECK(boom->status == 500);
  CHECK(boom->body == R"({"error":"internal error"})");

  auto index = c.Get("/api/v1/");
  CHECK(index->status == 200);
  CHECK(index->body == R"({"routes":["/api/v1/boom","/api/v1/incidents",)"
                       R"("/api/v1/workloads/special","/api/v1/workloads/..."]})");
  CHECK(c.Delete("/api/v1/incidents")->status == 405);
}

TEST_CASE("a bearer token guards /api/v1 only and follows the token file", "[http][server][auth]") {
  Fixture f;
  TempDir dir;
  std::string token_file = dir.write("token", "first-token-123\n");
  HttpServer server(opts("127.0.0.1:0", [&](auto& o) { o.apiBearerTokenFile = token_file; }), f.snapshot,
                    f.clock);
  server.addApiRoute("incidents", [](const ApiRequest&) { return ApiResponse::json("[]"); });
  REQUIRE(server.start().ok());
  auto c = client(server);

  auto anonymous = c.Get("/api/v1/incidents");
  CHECK(anonymous->status == 401);
  CHECK(anonymous->get_header_value("WWW-Authenticate") == "Bearer realm=\"firstwork\"");
  // Unknown API paths are not revealed to unauthenticated callers either.
  CHECK(c.Get("/api/v1/nothing")->status == 401);
  CHECK(c.Get("/api/v1/incidents", {{"Authorization", "Bearer wrong-token-123"}})->status == 401);
  CHECK(c.Get("/api/v1/incidents", {{"Authorization", "Bearer first-token-123"}})->status == 200);
  CHECK(c.Get("/api/v1/incidents", {{"Authorization", "bearer  first-token-123"}})->status == 200);
  CHECK(c.Get("/metrics")->status == 200);
  CHECK(c.Get("/healthz")->status == 200);

  // Rotation: a new file content is picked up after the 1 s re-check interval.
  dir.write("token", "second-token-456-longer\n");
  f.clock.advance(2s);
  CHECK(c.Get("/api/v1/incidents", {{"Authorization", "Bearer first-token-123"}})->status == 401);
  CHECK(c.Get("/api/v1/incidents", {{"Authorization", "Bearer second-token-456-longer"}})
            ->status == 200);

  // Fail closed: a vanished token file refuses everything.
  std::filesystem::remove(token_file);
  f.clock.advance(2s);
  CHECK(c.Get("/api/v1/incidents", {{"Authorization", "Bearer second-token-456-longer"}})
            ->status == 401);
}

TEST_CASE("an empty or missing token file stops the start", "[http][server][auth]") {
  Fixture f;
  TempDir dir;
  HttpServer empty(opts("127.0.0.1:0", [&](auto& o) { o.apiBearerTokenFile = dir.write("t", "\n"); }),
                   f.snapshot, f.clock);
  auto status = empty.start();
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().find("unreadable or empty") != std::string::npos);
  HttpServer missing(opts("127.0.0.1:0", [&](auto& o) { o.apiBearerTokenFile = dir.file("none"); }),
                     f.snapshot, f.clock);
  CHECK_FALSE(missing.start().ok());
}

TEST_CASE("bad addresses and busy ports are start errors", "[http][server]") {
  Fixture f;
  HttpServer bad(opts("127.0.0.1"), f.snapshot, f.clock);
  auto status = bad.start();
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().find("invalid listen address") != std::string::npos);

  HttpServer first(opts("127.0.0.1:0"), f.snapshot, f.clock);
  REQUIRE(first.start().ok());
  HttpServer second(opts("127.0.0.1:" + std::to_string(first.port())), f.snapshot, f.clock);
  auto busy = second.start();
  REQUIRE_FALSE(busy.ok());
  CHECK(busy.error().rfind("cannot listen on 127.0.0.1:" + std::to_string(first.port()), 0) == 0);
  CHECK(busy.error().find("Address already in use") != std::string::npos);
}

TEST_CASE("IPv6 loopback addresses work", "[http][server][ipv6]") {
  // Skip where the machine has no IPv6 loopback (some CI containers).
  int probe = ::socket(AF_INET6, SOCK_STREAM, 0);
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_addr = in6addr_loopback;
  bool have_ipv6 =
      probe >= 0 && ::bind(probe, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  if (probe >= 0) ::close(probe);
  if (!have_ipv6) {
    WARN("no IPv6 loopback here; skipped");
    return;
  }
  Fixture f;
  HttpServer server(opts("[::1]:0"), f.snapshot, f.clock);
  REQUIRE(server.start().ok());
  CHECK(server.baseUrl() == "http://[::1]:" + std::to_string(server.port()));
  httplib::Client c("::1", server.port());
  c.set_address_family(AF_INET6);
  auto res = c.Get("/healthz");
  REQUIRE(res);
  CHECK(res->status == 200);
}

TEST_CASE("TLS serves with the given certificate and clients verify it", "[http][server][tls]") {
  TempDir dir;
  std::string cert = dir.file("cert.pem");
  std::string key = dir.file("key.pem");
  std::string cmd = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                    "-days 1 -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 -keyout '" +
                    key + "' -out '" + cert + "' > /dev/null 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);

  Fixture f;
  HttpServer server(opts("127.0.0.1:0", [&](auto& o) { o.tlsCertFile = cert; o.tlsKeyFile = key; }),
                    f.snapshot, f.clock);
  REQUIRE(server.start().ok());
  CHECK(server.baseUrl().rfind("https://127.0.0.1:", 0) == 0);

  httplib::SSLClient verified("127.0.0.1", server.port());
  verified.set_ca_cert_path(cert.c_str());
  verified.enable_server_certificate_verification(true);
  auto res = verified.Get("/healthz");
  REQUIRE(res);
  CHECK(res->status == 200);

  // Verification is real: a client trusting a different CA refuses the server.
  std::string other_cert = dir.file("other.pem");
  std::string other = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                      "-days 1 -subj /CN=other -keyout '" + dir.file("other.key") + "' -out '" +
                      other_cert + "' > /dev/null 2>&1";
  REQUIRE(std::system(other.c_str()) == 0);
  httplib::SSLClient wrong("127.0.0.1", server.port());
  wrong.set_ca_cert_path(other_cert.c_str());
  wrong.enable_server_certificate_verification(true);
  CHECK_FALSE(wrong.Get("/healthz"));

  HttpServer broken(opts("127.0.0.1:0", [&](auto& o) { o.tlsCertFile = key; o.tlsKeyFile = cert; }),
                    f.snapshot, f.clock);
  auto status = broken.start();
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().find("cannot load TLS certificate") != std::string::npos);
}
