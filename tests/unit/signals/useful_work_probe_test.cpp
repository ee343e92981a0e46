#include "firstwork/signals/useful_work_probe.hpp"

#include <netinet/in.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "firstwork/http/httplib.hpp"
#include "firstwork/metrics/self_metrics.hpp"
#include "fakes/manual_clock.hpp"
#include "support/process_threads.hpp"

extern char** environ;

using namespace firstwork;
using namespace firstwork::signals;
using namespace std::chrono_literals;

namespace {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "fw-probe-XXXXXX").string();
    path = mkdtemp(templ.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(path / name) << content;
    return file(name);
  }
};

// A port nobody listens on right now: bind port 0, read it back, close.
int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  socklen_t len = sizeof(addr);
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Serves canned responses on 127.0.0.1:0 from a background thread.
class FakeServer {
 public:
  explicit FakeServer(std::unique_ptr<httplib::Server> server = std::make_unique<httplib::Server>())
      : server_(std::move(server)) {}
  ~FakeServer() {
    server_->stop();
    if (thread_.joinable()) thread_.join();
  }
  httplib::Server& server() { return *server_; }
  void start() {
    port_ = server_->bind_to_any_port("127.0.0.1");
    REQUIRE(port_ > 0);
    thread_ = std::thread([this] { server_->listen_after_bind(); });
    auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!server_->is_running() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
    REQUIRE(server_->is_running());
  }
  int port() const { return port_; }

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

const char* kVectorP = R"({"status":"success","data":{"resultType":"vector","result":[
  {"metric":{"namespace":"ns","pod":"p"},"value":[1777629600.5,"5"]},
  {"metric":{"namespace":"ns","pod":"idle"},"value":[1777629600.5,"0"]}]}})";

ProbeOptions optionsFor(const std::string& url, const std::string& query = "training_steps_total") {
  ProbeOptions o;
  o.url = url;
  o.query = query;
  o.timeout = 20s;
  return o;
}

std::string serialize(const prometheus::Registry& registry) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry.Collect());
  return out.str();
}

}  // namespace

TEST_CASE("the probe sends the query and token, reports each pod once, and forgets on request",
          "[signals][probe]") {
  // Declared before the server, so the server's threads are joined (its destructor) before what
  // its handler writes goes away (TSan: the last request's write raced the strings' destruction).
  std::atomic<int> requests{0};
  std::string seen_query, seen_auth;
  std::mutex mu;
  FakeServer fake;
  fake.server().Get("/prom/api/v1/query", [&](const httplib::Request& req, httplib::Response& res) {
    ++requests;
    std::lock_guard lock(mu);
    seen_query = req.get_param_value("query");
    seen_auth = req.get_header_value("Authorization");
    res.set_content(kVectorP, "application/json");
  });
  fake.start();
  TempDir dir;
  prometheus::Registry registry;
  metrics::SelfMetrics self(registry, metrics::SelfMetrics::defaultLagBuckets(), "v", "r");
  testing::ManualClock clock;
  std::vector<UsefulWorkSignal> received;
  auto options = optionsFor("http://127.0.0.1:" + std::to_string(fake.port()) + "/prom/",
                            R"(sum by (namespace, pod) (rate(x{a="b c"}[1m])) > 0)");
  options.bearerTokenFile = dir.write("token", "tok-abcdef123\n");
  UsefulWorkProbe probe(options, clock,
                        [&](std::vector<UsefulWorkSignal> s) {
                          received.insert(received.end(), s.begin(), s.end());
                        },
                        &self);
  CHECK(probe.queryUrl() ==
        "http://127.0.0.1:" + std::to_string(fake.port()) +
            "/prom/api/v1/query?query=sum%20by%20%28namespace%2C%20pod%29%20%28rate%28x%7Ba%3D%22b"
            "%20c%22%7D%5B1m%5D%29%29%20%3E%200");

  PollOutcome first = probe.pollOnce();
  CHECK(first.result == "ok");
  CHECK(first.series == 2);
  CHECK(first.newSignals == 1);
  {
    std::lock_guard lock(mu);
    CHECK(seen_query == R"(sum by (namespace, pod) (rate(x{a="b c"}[1m])) > 0)");
    CHECK(seen_auth == "Bearer tok-abcdef123");
  }
  // 1777629600.5 s = 2026-05-01T10:00:00.500Z
  REQUIRE(received.size() == 1);
  CHECK(received[0].podNamespace == "ns");
  CHECK(received[0].podName == "p");
  CHECK(received[0].at == SystemTime{} + 1777629600500ms);

  CHECK(probe.pollOnce().newSignals == 0);  // already reported
  CHECK(received.size() == 1);
  probe.forget("ns", "p");
  CHECK(probe.pollOnce().newSignals == 1);
  CHECK(received.size() == 2);
  ProbeStats stats = probe.stats();
  CHECK(stats.polls == 3);
  CHECK(stats.failures == 0);
  CHECK(stats.signals == 2);
  CHECK(stats.trackedPods == 1);
  CHECK(serialize(registry).find(R"(firstwork_useful_work_queries_total{result="ok"} 3)") !=
        std::string::npos);
}

TEST_CASE("probe errors are classified and counted, never thrown", "[signals][probe]") {
  FakeServer fake;
  std::atomic<int> requests{0};
  fake.server().Get("/bad/api/v1/query", [&](const httplib::Request&, httplib::Response& res) {
    ++requests;
    res.status = 400;
    res.set_content(R"({"status":"error","errorType":"bad_data","error":"1:5: parse error"})",
                    "application/json");
  });
  fake.server().Get("/html/api/v1/query", [&](const httplib::Request&, httplib::Response& res) {
    ++requests;
    res.set_content("<html>proxy login</html>", "text/html");
  });
  fake.server().Get("/moved/api/v1/query", [&](const httplib::Request&, httplib::Response& res) {
    ++requests;
    res.set_redirect("http://127.0.0.1:1/elsewhere");
  });
  fake.server().Get("/big/api/v1/query", [&](const httplib::Request&, httplib::Response& res) {
    ++requests;
    res.set_content(std::string(4096, ' '), "application/json");
  });
  fake.start();
  std::string base = "http://127.0.0.1:" + std::to_string(fake.port());
  prometheus::Registry registry;
  metrics::SelfMetrics self(registry, metrics::SelfMetrics::defaultLagBuckets(), "v", "r");
  testing::ManualClock clock;
  auto poll = [&](ProbeOptions o) { return UsefulWorkProbe(o, clock, {}, &self).pollOnce(); };

  auto bad = poll(optionsFor(base + "/bad"));
  CHECK(bad.result == "http_error");
  CHECK(bad.error == "HTTP 400: Prometheus query failed (bad_data): 1:5: parse error");

  auto html = poll(optionsFor(base + "/html"));
  CHECK(html.result == "parse_error");
  CHECK(html.error.rfind("response is not JSON", 0) == 0);

  auto moved = poll(optionsFor(base + "/moved"));  // redirects are not followed
  CHECK(moved.result == "http_error");
  CHECK(moved.error.rfind("HTTP 302", 0) == 0);

  auto big_options = optionsFor(base + "/big");
  big_options.maxResponseBytes = 1024;
  auto big = poll(big_options);
  CHECK(big.result == "transport_error");
  CHECK(big.error == "response larger than 1024 bytes");

  auto refused = poll(optionsFor("http://127.0.0.1:" + std::to_string(freePort())));
  CHECK(refused.result == "transport_error");
  CHECK_FALSE(refused.error.empty());

  int before = requests;
  auto no_token_options = optionsFor(base + "/bad");
  no_token_options.bearerTokenFile = "/nonexistent/token";
  auto no_token = poll(no_token_options);
  CHECK(no_token.result == "bad_token");
  CHECK(requests == before);  // nothing was sent without the token

  std::string text = serialize(registry);
  CHECK(text.find(R"(firstwork_useful_work_queries_total{result="http_error"} 2)") !=
        std::string::npos);
  CHECK(text.find(R"(firstwork_useful_work_queries_total{result="parse_error"} 1)") !=
        std::string::npos);
  CHECK(text.find(R"(firstwork_useful_work_queries_total{result="transport_error"} 2)") !=
        std::string::npos);
  CHECK(text.find(R"(firstwork_useful_work_queries_total{result="bad_token"} 1)") !=
        std::string::npos);
}

TEST_CASE("the probe verifies TLS, with the configured CA", "[signals][probe][tls]") {
  TempDir dir;
  std::string cert = dir.file("cert.pem");
  std::string key = dir.file("key.pem");
  std::string cmd = "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                    "-days 1 -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1 -keyout '" +
                    key + "' -out '" + cert + "' > /dev/null 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  FakeServer fake(std::make_unique<httplib::SSLServer>(cert.c_str(), key.c_str()));
  REQUIRE(fake.server().is_valid());
  fake.server().Get("/api/v1/query", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(kVectorP, "application/json");
  });
  fake.start();
  testing::ManualClock clock;
  auto options = optionsFor("https://127.0.0.1:" + std::to_string(fake.port()));
  auto untrusted = UsefulWorkProbe(options, clock, {}).pollOnce();
  CHECK(untrusted.result == "transport_error");  // self-signed, not in the system CAs
  options.caFile = cert;
  auto trusted = UsefulWorkProbe(options, clock, {}).pollOnce();
  CHECK(trusted.result == "ok");
  CHECK(trusted.newSignals == 1);
}

TEST_CASE("reported pods absent from results are forgotten after forgetAfter", "[signals][probe]") {
  FakeServer fake;
  std::atomic<bool> empty{false};
  fake.server().Get("/api/v1/query", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(empty ? R"({"status":"success","data":{"resultType":"vector","result":[]}})"
                          : kVectorP,
                    "application/json");
  });
  fake.start();
  testing::ManualClock clock;
  auto options = optionsFor("http://127.0.0.1:" + std::to_string(fake.port()));
  options.forgetAfter = 1h;
  UsefulWorkProbe probe(options, clock, {});
  CHECK(probe.pollOnce().newSignals == 1);
  empty = true;
  clock.advance(1h);  // exactly forgetAfter since last seen: still kept
  probe.pollOnce();
  CHECK(probe.stats().trackedPods == 1);
  clock.advance(1s);
  probe.pollOnce();
  CHECK(probe.stats().trackedPods == 0);
  empty = false;
  CHECK(probe.pollOnce().newSignals == 1);
}

TEST_CASE("start polls in the background and stop interrupts a hanging request",
          "[signals][probe]") {
  // Declared before the server: its handler thread may still read them while the server stops
  // (ASan found them destroyed under a handler that was still polling `release`).
  std::atomic<int> requests{0};
  std::atomic<bool> release{false};
  FakeServer fake;
  fake.server().Get("/api/v1/query", [&](const httplib::Request&, httplib::Response& res) {
    if (++requests >= 2) {
      // The second request hangs until the test releases it (bounded so the server can stop).
      auto deadline = std::chrono::steady_clock::now() + 30s;
      while (!release && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(1ms);
      }
    }
    res.set_content(kVectorP, "application/json");
  });
  fake.start();
  testing::ManualClock clock;
  auto options = optionsFor("http://127.0.0.1:" + std::to_string(fake.port()));
  options.interval = 1s;
  options.timeout = 60s;
  std::atomic<int> callbacks{0};
  UsefulWorkProbe probe(options, clock, [&](std::vector<UsefulWorkSignal>) { ++callbacks; });
  probe.start();
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (requests < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(5ms);
  }
  REQUIRE(requests >= 2);
  // Its thread is named for the process list (top -H, perf).
  const auto names = testing::threadNames();
  CHECK(std::count(names.begin(), names.end(), "fw-probe") == 1);
  probe.stop();  // must not wait for the 60 s timeout: the transfer is aborted
  release = true;
  CHECK(callbacks == 1);
  ProbeStats stats = probe.stats();
  CHECK(stats.polls == 2);
  CHECK(stats.failures == 0);  // an aborted poll is not a failure
}

TEST_CASE("the probe sees a pod's useful work in a real Prometheus", "[signals][probe][prometheus]") {
  // A tiny exporter for Prometheus to scrape.
  FakeServer exporter;
  exporter.server().Get("/metrics", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        "# HELP training_steps_total Training steps done.\n"
        "# TYPE training_steps_total counter\n"
        "training_steps_total{namespace=\"ns\",pod=\"p\"} 5\n"
        "training_steps_total{namespace=\"ns\",pod=\"idle\"} 0\n",
        "text/plain; version=0.0.4");
  });
  exporter.start();

  TempDir dir;
  std::string config = dir.write("prometheus.yml",
                                 "global:\n"
                                 "  scrape_interval: 1s\n"
                                 "  evaluation_interval: 1s\n"
                                 "scrape_configs:\n"
                                 "  - job_name: trainer\n"
                                 "    static_configs:\n"
                                 "      - targets: ['127.0.0.1:" +
                                     std::to_string(exporter.port()) + "']\n");
  int port = freePort();
  std::vector<std::string> args{"/usr/bin/prometheus",
                                "--config.file=" + config,
                                "--storage.tsdb.path=" + dir.file("data"),
                                "--web.listen-address=127.0.0.1:" + std::to_string(port),
                                "--log.level=warn"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  std::string log_path = dir.file("prometheus.log");
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&actions);
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      ::kill(pid, SIGTERM);
      auto deadline = std::chrono::steady_clock::now() + 10s;
      int status = 0;
      while (::waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
          ::kill(pid, SIGKILL);
          ::waitpid(pid, &status, 0);
          break;
        }
        std::this_thread::sleep_for(10ms);
      }
    }
  } reaper{pid};

  RealClock clock;
  SystemTime started = clock.systemNow();
  std::string url = "http://127.0.0.1:" + std::to_string(port);
  std::vector<UsefulWorkSignal> signals;
  UsefulWorkProbe probe(optionsFor(url), clock, [&](std::vector<UsefulWorkSignal> s) {
    signals.insert(signals.end(), s.begin(), s.end());
  });
  // Bounded wait for Prometheus to start and scrape once; poll, do not sleep a fixed time.
  PollOutcome outcome;
  auto deadline = std::chrono::steady_clock::now() + 90s;
  while (signals.empty() && std::chrono::steady_clock::now() < deadline) {
    outcome = probe.pollOnce();
    if (signals.empty()) std::this_thread::sleep_for(200ms);
  }
  std::ifstream log_file(log_path);
  std::stringstream log_text;
  log_text << log_file.rdbuf();
  INFO("last outcome: " << outcome.result << " " << outcome.error << "\nprometheus log:\n"
                        << log_text.str());
  REQUIRE(signals.size() == 1);
  CHECK(signals[0].podNamespace == "ns");
  CHECK(signals[0].podName == "p");
  CHECK(signals[0].value == 5.0);
  // An instant query's sample carries the evaluation time: after the test began, not later than
  // now (both with a second of slack for Prometheus' millisecond rounding).
  CHECK(signals[0].at >= started - 1s);
  CHECK(signals[0].at <= clock.systemNow() + 1s);

  // A range query narrows the time to the first scraped sample, which is no later.
  std::vector<UsefulWorkSignal> ranged;
  UsefulWorkProbe range_probe(optionsFor(url, "training_steps_total[5m]"), clock,
                              [&](std::vector<UsefulWorkSignal> s) { ranged = std::move(s); });
  PollOutcome range_outcome = range_probe.pollOnce();
  INFO(range_outcome.error);
  CHECK(range_outcome.result == "ok");
  REQUIRE(ranged.size() == 1);
  CHECK(ranged[0].podName == "p");
  CHECK(ranged[0].at <= signals[0].at);
  CHECK(ranged[0].at >= started - 1s);
}
