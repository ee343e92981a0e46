// The kube client over HTTP/2. The API test server (cpp-httplib) speaks HTTP/1.1 only, so a
// real HTTP/2 server is put in front of it: nghttpx (Debian nghttp2-proxy) terminates TLS with a
// certificate made here, offers h2 by ALPN and forwards each stream to the ApiServer over plain
// HTTP/1.1. What the client negotiated is not assumed: nghttpx's access log records, for every
// request, the ALPN protocol and HTTP version of the client side and the client's port (one
// port = one TCP/TLS connection), written as soon as the response head is in so open watches
// are logged too. A request forced to HTTP/1.1 through the same proxy shows that the log does
// tell the two apart.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <csignal>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/kube/kube_client.hpp"
#include "firstwork/sim/api_server.hpp"
#include "converge.hpp"
#include "kube_test_util.hpp"
#include "recording.hpp"
#include "support/net.hpp"
#include "support/subprocess.hpp"

using namespace firstwork;
using namespace firstwork::kube;
using namespace std::chrono_literals;
using firstwork::testing::RecordingObserver;
using firstwork::testing::RecordingSink;
using firstwork::testing::runUntil;
using firstwork::testing::Subprocess;
using firstwork::testing::TempDir;
using firstwork::testing::podJson;
using firstwork::testing::serverSet;
using firstwork::testing::storeSet;
using firstwork::testing::UidRv;

namespace {

/// nghttpx's path, or "" when nghttp2-proxy is not installed (then the tests skip).
std::string nghttpxBinary() {
  for (const char* p : {"/usr/sbin/nghttpx", "/usr/bin/nghttpx"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return {};
}

#define FW_REQUIRE_NGHTTPX(var)                                                             \
  const std::string var = nghttpxBinary();                                                  \
  if (var.empty()) {                                                                        \
    WARN(                                                                                   \
        "skipped: nghttpx (Debian package nghttp2-proxy) is not installed at /usr/sbin or " \
        "/usr/bin; scripts/install-deps.sh installs it");                                   \
    return;                                                                                 \
  }

/// Runs a command to completion; fails the test with its output unless it exits 0.
void runTool(const std::vector<std::string>& argv, const std::string& logPath) {
  Subprocess p(argv, logPath);
  auto rc = p.wait(30000ms);
  INFO(argv[0] << " " << argv[1] << ": " << p.output());
  REQUIRE(rc.has_value());
  REQUIRE(*rc == 0);
}

/// A CA and a server certificate it signed for IP 127.0.0.1 / DNS localhost (EC P-256), made
/// with the openssl CLI. Our own config file, so the system openssl.cnf does not matter.
struct TlsFiles {
  std::string caPem;
  std::string keyPath;
  std::string certPath;
};

TlsFiles makeCertificates(const TempDir& dir) {
  const std::string openssl = "/usr/bin/openssl";
  REQUIRE(::access(openssl.c_str(), X_OK) == 0);
  std::string cnf = dir.write("openssl.cnf",
                              "[req]\n"
                              "distinguished_name = dn\n"
                              "prompt = no\n"
                              "[dn]\n"
                              "CN = firstwork h2 test\n"
                              "[v3_ca]\n"
                              "basicConstraints = critical,CA:TRUE\n"
                              "keyUsage = critical,keyCertSign,cRLSign\n"
                              "subjectKeyIdentifier = hash\n"
                              "[v3_server]\n"
                              "basicConstraints = critical,CA:FALSE\n"
                              "keyUsage = critical,digitalSignature\n"
                              "extendedKeyUsage = serverAuth\n"
                              "subjectAltName = IP:127.0.0.1,DNS:localhost\n"
                              "authorityKeyIdentifier = keyid\n");
  std::string log = dir.file("openssl.log");
  TlsFiles t;
  t.keyPath = dir.file("server.key");
  t.certPath = dir.file("server.crt");
  // clang-format off
  runTool({openssl, "req", "-x509", "-config", cnf, "-extensions", "v3_ca", "-newkey", "ec",
           "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", dir.file("ca.key"),
           "-out", dir.file("ca.crt"), "-days", "2", "-subj", "/CN=firstwork h2 test CA"},
          log);
  runTool({openssl, "req", "-new", "-config", cnf, "-newkey", "ec", "-pkeyopt",
           "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", t.keyPath, "-out",
           dir.file("server.csr"), "-subj", "/CN=127.0.0.1"},
          log);
  runTool({openssl, "x509", "-req", "-in", dir.file("server.csr"), "-CA", dir.file("ca.crt"),
           "-CAkey", dir.file("ca.key"), "-set_serial", "2", "-days", "2", "-extfile", cnf,
           "-extensions", "v3_server", "-out", t.certPath},
          log);
  // clang-format on
  t.caPem = dir.read("ca.crt");
  REQUIRE(t.caPem.find("BEGIN CERTIFICATE") != std::string::npos);
  return t;
}

bool acceptsConnections(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

/// One line of nghttpx's access log, in the format given below.
struct AccessEntry {
  std::string clientPort;  // $remote_port: the client side of one TCP connection
  std::string alpn;        // $alpn: "h2" or "http/1.1"
  std::string version;     // $protocol_version: "HTTP/2", "HTTP/1.1"
  std::string method;
  std::string status;
  std::string path;  // with query
  bool watch() const { return path.find("watch=true") != std::string::npos; }
};

/// nghttpx as the HTTP/2 TLS frontend of one ApiServer.
class Nghttpx {
 public:
  Nghttpx(const std::string& binary, const TempDir& dir, const TlsFiles& tls, int backendPort)
      : accessLog_(dir.file("nghttpx-access.log")) {
    // freeLoopbackPort() can race with another process taking the port: try a few.
    for (int attempt = 0; attempt < 3 && !proc_; ++attempt) {
      port_ = firstwork::testing::freeLoopbackPort();
      REQUIRE(port_ > 0);
      // clang-format off
      std::vector<std::string> argv{
          binary,
          // Not the packaged /etc/nghttpx/nghttpx.conf (plain-HTTP frontend on :3000, syslog).
          "--conf=/dev/null",
          "--frontend=127.0.0.1," + std::to_string(port_),  // TLS (the default), ALPN h2
          "--backend=127.0.0.1," + std::to_string(backendPort),  // plain HTTP/1.1
          "--workers=1", "--no-ocsp", "--log-level=NOTICE",
          "--errorlog-file=" + dir.file("nghttpx-error.log"),
          "--accesslog-file=" + accessLog_,
          // Logged when the response head arrives, so a watch is in the log while it is open.
          "--accesslog-write-early",
          "--accesslog-format=$remote_port $alpn $protocol_version $method $status $path",
          // Watches are long requests: no read timeout on the backend or the h2 stream.
          "--backend-read-timeout=1h", "--stream-read-timeout=0",
          "--frontend-http2-read-timeout=1h",
          tls.keyPath, tls.certPath};
      // clang-format on
      auto proc = std::make_unique<Subprocess>(argv, dir.file("nghttpx.out"));
      // Its own "Listening on" line, not just an open port: another process may hold the port
      // (then nghttpx exits and the next attempt takes another).
      const std::string listening = "Listening on 127.0.0.1:" + std::to_string(port_) + ", tls";
      bool up = firstwork::testing::eventually(
          [&] {
            if (!proc->running()) return true;
            return dir.read("nghttpx-error.log").find(listening) != std::string::npos &&
                   acceptsConnections(port_);
          },
          10000ms);
      if (up && proc->running()) {
        proc_ = std::move(proc);
      } else {
        output_ = proc->output() + dir.read("nghttpx-error.log");
      }
    }
    INFO("nghttpx did not start: " << output_);
    REQUIRE(proc_);
  }
  ~Nghttpx() {
    if (proc_) {
      // SIGQUIT is nghttpx's graceful stop: the master waits for its worker process (after
      // SIGTERM the worker is left to init). The client is gone by now, so it stops at once;
      // the Subprocess destructor SIGKILLs it if not.
      proc_->signal(SIGQUIT);
      proc_->wait(5000ms);
    }
  }
  Nghttpx(const Nghttpx&) = delete;
  Nghttpx& operator=(const Nghttpx&) = delete;

  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_); }

  std::vector<AccessEntry> accessLog() const {
    std::vector<AccessEntry> out;
    std::ifstream in(accessLog_);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ss(line);
      AccessEntry e;
      if (ss >> e.clientPort >> e.alpn >> e.version >> e.method >> e.status >> e.path) {
        out.push_back(e);
      }
    }
    return out;
  }

 private:
  std::string accessLog_;
  int port_ = -1;
  std::unique_ptr<Subprocess> proc_;
  std::string output_;
};

KubeClientOptions h2Options() {
  auto o = firstwork::testing::fastOptions();
  o.transport.http2 = true;  // the default, stated: this file is about it
  return o;
}

/// ApiServer (plain HTTP) ← nghttpx (TLS, h2) ← KubeClient with the test CA.
struct H2Fixture {
  explicit H2Fixture(const std::string& nghttpx) : server(serverOptions()) {
    server.start();
    tls = makeCertificates(dir);
    proxy = std::make_unique<Nghttpx>(nghttpx, dir, tls, server.port());
    config.server = proxy->url();
    config.caPem = tls.caPem;  // verification stays on: the client trusts only this CA
    config.token = server.token();
    config.source = "http2 test";
    client = std::make_unique<KubeClient>(io, clock, "c1", config, h2Options(), &observer);
  }

  static sim::ApiServerOptions serverOptions() {
    sim::ApiServerOptions o;
    o.tls = false;
    o.bookmarkInterval = 100ms;
    o.tooLargeResourceVersionWait = 100ms;
    o.name = "behind-nghttpx";
    return o;
  }

  bool converged(const Reflector& r, const RecordingSink& s, const std::string& resource) {
    auto want = serverSet(server, resource);
    return storeSet(r) == want && s.mirror == want;
  }

  /// Waits until nghttpx has logged `n` requests (the log is written as heads arrive).
  std::vector<AccessEntry> logWith(size_t n) {
    std::vector<AccessEntry> log;
    bool ok = runUntil(io, [&] {
      log = proxy->accessLog();
      return log.size() >= n;
    });
    INFO("access log entries: " << log.size());
    REQUIRE(ok);
    return log;
  }

  TempDir dir;
  sim::ApiServer server;
  TlsFiles tls;
  std::unique_ptr<Nghttpx> proxy;
  RestConfig config;
  boost::asio::io_context io;
  RealClock clock;
  RecordingObserver observer;
  RecordingSink sink;
  std::unique_ptr<KubeClient> client;  // destroyed first: no requests outlive the proxy
};

/// Every logged request came over h2 (ALPN) as HTTP/2.
void requireAllHttp2(const std::vector<AccessEntry>& log) {
  REQUIRE_FALSE(log.empty());
  for (const auto& e : log) {
    INFO(e.method << " " << e.path << " alpn=" << e.alpn << " version=" << e.version);
    CHECK(e.alpn == "h2");
    CHECK(e.version == "HTTP/2");
  }
}

std::set<std::string> connectionsOf(const std::vector<AccessEntry>& log, bool watchesOnly) {
  std::set<std::string> out;
  for (const auto& e : log) {
    if (!watchesOnly || e.watch()) out.insert(e.clientPort);
  }
  return out;
}

size_t countRequests(const std::vector<AccessEntry>& log, const std::string& prefix, bool watch) {
  size_t n = 0;
  for (const auto& e : log) n += e.path.rfind(prefix, 0) == 0 && e.watch() == watch;
  return n;
}

}  // namespace

TEST_CASE("2000 pods are listed over 4 pages and watched through nghttpx over HTTP/2",
          "[kube][http2]") {
  FW_REQUIRE_NGHTTPX(nghttpx);
  H2Fixture f(nghttpx);
  for (int i = 0; i < 2000; ++i) f.server.create("pods", podJson("p-" + std::to_string(i), 0));
  auto& r = f.client->addReflector(model::Kind::Pod, f.sink);
  f.client->start();
  REQUIRE(runUntil(
      f.io, [&] { return r.synced(); }, 15000ms));
  CHECK(r.size() == 2000);
  // 2000 pods / 500 per page (ReflectorOptions::pageSize) = 4 pages.
  CHECK(f.server.stats().listRequests == 4);
  CHECK(r.stats().listRequests == 4);
  REQUIRE(runUntil(f.io, [&] { return f.server.openWatches("pods") == 1; }));

  // After the watch is up: 5 creates, 5 updates, 5 deletes arrive as watch events.
  for (int i = 0; i < 5; ++i) {
    f.server.create("pods", podJson("late-" + std::to_string(i), 0));
    f.server.update("pods", podJson("p-" + std::to_string(100 + i), 3));
    REQUIRE(f.server.remove("pods", "team-a", "p-" + std::to_string(200 + i)));
  }
  REQUIRE(runUntil(f.io, [&] { return f.converged(r, f.sink, "pods"); }));
  CHECK(r.size() == 2000);                    // 2000 + 5 created − 5 deleted
  CHECK(f.server.stats().listRequests == 4);  // carried by the watch, no relist
  CHECK(f.observer.watchEvents["ADDED"] == 5);
  CHECK(f.observer.watchEvents["MODIFIED"] == 5);
  CHECK(f.observer.watchEvents["DELETED"] == 5);
  CHECK(f.observer.decodeErrors == 0);
  CHECK(f.sink.violations == 0);
  CHECK(f.client->connection().connected() == true);

  // The 4 pages and the open watch, all on the client side as h2 / HTTP/2.
  auto log = f.logWith(5);
  requireAllHttp2(log);
  CHECK(countRequests(log, "/api/v1/pods?", false) == 4);
  CHECK(countRequests(log, "/api/v1/pods?", true) >= 1);  // more only if a stall restarted it
  for (const auto& e : log) CHECK(e.status == "200");
  // One reflector's requests are sequential: each reuses the one h2 connection.
  CHECK(connectionsOf(log, false).size() == 1);

  // The same proxy, asked with HTTP/1.1 only, logs http/1.1: the fields above are measured.
  StaticCredentials creds(f.server.token());
  TransportOptions h1;
  h1.http2 = false;
  CurlTransport plain(f.io, f.clock, f.config, creds, h1);
  std::optional<HttpResult> got;
  RequestCallbacks cb;
  cb.onDone = [&](HttpResult res) { got = std::move(res); };
  plain.start(HttpRequest{"/version", false}, std::move(cb));
  REQUIRE(runUntil(f.io, [&] { return got.has_value(); }));
  CHECK(got->error.empty());
  CHECK(got->head.status == 200);
  // Found by path, not as the last entry: a watch the stall watchdog restarted (seen under TSan)
  // is logged when it ends, which can be after this request.
  std::optional<AccessEntry> version;
  REQUIRE(runUntil(f.io, [&] {
    for (const auto& e : f.proxy->accessLog())
      if (e.path == "/version") version = e;
    return version.has_value();
  }));
  CHECK(version->alpn == "http/1.1");
  CHECK(version->version == "HTTP/1.1");
}

TEST_CASE("a stream cut mid-event is recovered over HTTP/2 on the same connection",
          "[kube][http2]") {
  FW_REQUIRE_NGHTTPX(nghttpx);
  H2Fixture f(nghttpx);
  for (int i = 0; i < 200; ++i) f.server.create("pods", podJson("p-" + std::to_string(i), 0));
  auto& r = f.client->addReflector(model::Kind::Pod, f.sink);
  f.client->start();
  REQUIRE(runUntil(f.io, [&] { return r.synced() && f.server.openWatches("pods") == 1; }));

  // Objects change from another thread while the loop runs; after 50 of 150 changes the
  // server cuts every stream halfway through an event. nghttpx loses its HTTP/1.1 backend
  // connection mid-body and resets only that h2 stream (RST_STREAM); the TLS connection stays.
  std::atomic<bool> done{false};
  std::thread mutator([&] {
    std::mt19937 rng(12345);
    std::vector<std::string> alive;
    for (int i = 0; i < 200; ++i) alive.push_back("p-" + std::to_string(i));
    int created = 0;
    for (int i = 0; i < 150; ++i) {
      if (i == 50) f.server.cutStreamsMidEvent();
      int op = static_cast<int>(rng() % 3);
      if (op == 0 || alive.empty()) {
        std::string name = "m-" + std::to_string(created++);
        f.server.create("pods", podJson(name, 0));
        alive.push_back(name);
      } else if (op == 1) {
        f.server.update("pods", podJson(alive[rng() % alive.size()], i + 1));
      } else {
        size_t k = rng() % alive.size();
        f.server.remove("pods", "team-a", alive[k]);
        alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
    done = true;
  });
  bool finished = runUntil(
      f.io, [&] { return done.load(); }, 15000ms);
  mutator.join();
  REQUIRE(finished);
  REQUIRE(runUntil(
      f.io, [&] { return f.converged(r, f.sink, "pods") && f.server.openWatches("pods") == 1; }));
  CHECK(f.observer.restarts["transport_error"] >= 1);
  CHECK(f.sink.violations == 0);
  CHECK(f.observer.decodeErrors == 0);
  CHECK(r.stats().listRequests == 1);  // resumed from the last RV: no relist

  // 1 LIST page + the first watch + at least one watch after the cut.
  auto log = f.logWith(3);
  requireAllHttp2(log);
  CHECK(countRequests(log, "/api/v1/pods?", true) >= 2);
  // The reset hit one stream, not the connection: the re-watch went over the same one.
  CHECK(connectionsOf(log, false).size() == 1);
}

TEST_CASE("ten watches of one client are multiplexed over HTTP/2", "[kube][http2]") {
  FW_REQUIRE_NGHTTPX(nghttpx);
  H2Fixture f(nghttpx);
  // Every resource firstwork watches, plus a second pods reflector: 10 watches.
  struct Watched {
    model::Kind kind;
    std::string resource;
    bool namespaced;
  };
  const std::vector<Watched> watched{
      {model::Kind::Workload, "workloads", true},
      {model::Kind::MultiKueueCluster, "multikueueclusters", false},
      {model::Kind::ClusterQueue, "clusterqueues", false},
      {model::Kind::AdmissionCheck, "admissionchecks", false},
      {model::Kind::MultiKueueConfig, "multikueueconfigs", false},
      {model::Kind::Pod, "pods", true},
      {model::Kind::ResourceClaim, "resourceclaims", true},
      {model::Kind::ResourceSlice, "resourceslices", false},
      {model::Kind::Node, "nodes", false},
      {model::Kind::Pod, "pods", true},
  };
  auto object = [](const Watched& w, const std::string& name) {
    nlohmann::json meta = {{"name", name}};
    if (w.namespaced) meta["namespace"] = "team-a";
    return nlohmann::json{{"metadata", meta}}.dump();
  };
  std::set<std::string> seeded;
  for (const auto& w : watched) {
    if (!seeded.insert(w.resource).second) continue;
    for (int i = 0; i < 3; ++i) f.server.create(w.resource, object(w, "o-" + std::to_string(i)));
  }
  std::vector<std::unique_ptr<RecordingSink>> sinks;
  std::vector<Reflector*> reflectors;
  for (const auto& w : watched) {
    sinks.push_back(std::make_unique<RecordingSink>());
    reflectors.push_back(&f.client->addReflector(w.kind, *sinks.back()));
  }
  f.client->start();
  REQUIRE(runUntil(f.io, [&] { return f.client->settled() && f.server.openWatches() == 10; }));
  for (auto* r : reflectors) {
    INFO(r->resource());
    CHECK(r->synced());
  }

  // 2 discovery GETs (kueue.x-k8s.io, resource.k8s.io) + 10 LISTs (one page each) + 10
  // watches = 22 requests, all h2.
  auto log = f.logWith(22);
  REQUIRE(log.size() == 22);
  requireAllHttp2(log);
  size_t watches = 0;
  for (const auto& e : log) watches += e.watch();
  CHECK(watches == 10);
  // Connections: curl opens a new one only while none has reported h2 yet (no PIPEWAIT).
  // Started before any answer: the kueue discovery GET (shared by its 5 reflectors), the DRA
  // discovery GET (shared by 2) and the LISTs of the 3 core reflectors (pods, pods, nodes) =
  // 5 requests, so at most 5 connections; everything later multiplexes onto an h2 one. With
  // 10 watches open at once on at most 5 connections, streams share a connection — something
  // HTTP/1.1 cannot do.
  auto conns = connectionsOf(log, false);
  auto watchConns = connectionsOf(log, true);
  INFO("connections: " << conns.size() << ", the 10 watches on " << watchConns.size());
  CHECK(conns.size() <= 5);
  CHECK(watchConns.size() < 10);

  // Every watch is cut mid-event at once: nghttpx resets all 10 streams. A change in every
  // resource made afterwards reaches every reflector through its re-opened h2 stream.
  f.server.cutStreamsMidEvent();
  for (const auto& w : seeded) {
    for (const auto& ww : watched) {
      if (ww.resource == w) {
        f.server.create(w, object(ww, "late"));
        break;
      }
    }
  }
  f.server.remove("pods", "team-a", "o-1");
  bool ok = runUntil(f.io, [&] {
    for (size_t i = 0; i < watched.size(); ++i) {
      if (!f.converged(*reflectors[i], *sinks[i], watched[i].resource)) return false;
    }
    return f.server.openWatches() == 10;
  });
  for (size_t i = 0; i < watched.size(); ++i) {
    INFO(watched[i].resource << " client=" << reflectors[i]->size()
                             << " server=" << f.server.count(watched[i].resource));
    CHECK(f.converged(*reflectors[i], *sinks[i], watched[i].resource));
  }
  REQUIRE(ok);
  CHECK(reflectors[5]->size() == 3);  // pods: 3 + 1 created − 1 deleted
  CHECK(reflectors[9]->size() == 3);
  CHECK(f.observer.restarts["transport_error"] >= 10);
  CHECK(f.observer.decodeErrors == 0);
  for (const auto& s : sinks) CHECK(s->violations == 0);

  // The 10 re-watches, h2 as well, and no new connection: the resets hit streams only.
  log = f.logWith(32);
  requireAllHttp2(log);
  watches = 0;
  for (const auto& e : log) watches += e.watch();
  CHECK(watches >= 20);  // one re-watch each (more only if a stall restarted one)
  CHECK(connectionsOf(log, false) == conns);
}
