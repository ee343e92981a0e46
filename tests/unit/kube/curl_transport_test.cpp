// CurlTransport against the Kubernetes API test server over real HTTP and HTTPS sockets.
#include "firstwork/kube/curl_transport.hpp"

#include <catch2/catch.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <fstream>
#include <thread>
#include <nlohmann/json.hpp>

#include "fakes/fake_clock.hpp"
#include "firstwork/sim/api_server.hpp"
#include "kube_test_util.hpp"

using namespace firstwork;
using namespace firstwork::kube;
using namespace std::chrono_literals;
using firstwork::testing::runUntil;
using firstwork::testing::TempDir;

namespace {

sim::ApiServerOptions opts(bool tls) {
  sim::ApiServerOptions o;
  o.tls = tls;
  o.bookmarkInterval = 100ms;
  return o;
}

RestConfig configFor(const sim::ApiServer& server) {
  auto rc = loadKubeconfigFromString(server.kubeconfig("t"), "", "/tmp");
  REQUIRE(rc.ok());
  return *rc;
}

HttpResult get(boost::asio::io_context& io, KubeTransport& t, HttpRequest request) {
  std::optional<HttpResult> out;
  RequestCallbacks cb;
  cb.onDone = [&](HttpResult r) { out = std::move(r); };
  t.start(std::move(request), std::move(cb));
  REQUIRE(runUntil(io, [&] { return out.has_value(); }));
  return std::move(*out);
}

HttpResult get(boost::asio::io_context& io, KubeTransport& t, const std::string& path) {
  return get(io, t, HttpRequest{path, false});
}

std::string podJson(const std::string& name) {
  return nlohmann::json{{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata", {{"name", name}, {"namespace", "default"}}}}
      .dump();
}

}  // namespace

TEST_CASE("GET over HTTP and over HTTPS with the cluster CA from the kubeconfig",
          "[kube][transport][integration]") {
  bool tls = GENERATE(false, true);
  sim::ApiServer server(opts(tls));
  server.start();
  server.create("pods", podJson("a"));
  boost::asio::io_context io;
  RealClock clock;
  auto rc = configFor(server);
  CHECK(rc.caPem.empty() == !tls);
  StaticCredentials creds(rc.token);
  CurlTransport t(io, clock, rc, creds);
  auto r = get(io, t, "/api/v1/pods");
  CHECK(r.error.empty());
  CHECK(r.head.status == 200);
  CHECK(r.body.find("\"name\":\"a\"") != std::string::npos);
  CHECK(t.active() == 0);
}

TEST_CASE("a response body is reserved once: for its Content-Length, else for the request's hint, or received in the request's buffer",
          "[kube][transport][integration]") {
  sim::ApiServer server(opts(false));
  server.start();
  for (int i = 0; i < 20; ++i) server.create("pods", podJson("p" + std::to_string(i)));
  boost::asio::io_context io;
  RealClock clock;
  auto rc = configFor(server);
  StaticCredentials creds(rc.token);
  CurlTransport t(io, clock, rc, creds);
  constexpr size_t kPadding = 64;  // what the decoder appends in place (SIMDJSON_PADDING)
  // A LIST page announces its length: reserved for it and the padding, whatever the hint says.
  auto list = get(io, t, HttpRequest{"/api/v1/pods", false, size_t{8} << 20});
  REQUIRE(list.head.status == 200);
  CHECK(list.body.find("\"name\":\"p19\"") != std::string::npos);
  CHECK(list.body.capacity() >= list.body.size() + kPadding);
  CHECK(list.body.capacity() < (size_t{8} << 20));
  // A chunked body (here a watch read to its end) announces nothing: the hint sizes it.
  auto chunked = get(io, t, HttpRequest{"/api/v1/pods?watch=1&timeoutSeconds=1", false, size_t{1} << 20});
  REQUIRE(chunked.head.status == 200);
  CHECK(chunked.body.find("\"name\":\"p0\"") != std::string::npos);
  CHECK(chunked.body.capacity() >= (size_t{1} << 20) + kPadding);

  // A request that brings a buffer (a spent LIST page's) is received in it.
  // Large enough for the page and the decoder's padding: written in place, what it held dropped.
  HttpRequest request{"/api/v1/pods", false};
  request.bodyBuffer = std::string(size_t{1} << 20, 'x');
  const void* buffer = request.bodyBuffer.data();
  auto inPlace = get(io, t, std::move(request));
  REQUIRE(inPlace.head.status == 200);
  CHECK(static_cast<const void*>(inPlace.body.data()) == buffer);
  CHECK(inPlace.body.rfind("{", 0) == 0);
  CHECK(inPlace.body.find('x') == std::string::npos);
  CHECK(inPlace.body.find("\"name\":\"p19\"") != std::string::npos);
  // Too small for the page: grown once for it, as without a buffer.
  HttpRequest small{"/api/v1/pods", false};
  small.bodyBuffer.reserve(64);
  auto grown = get(io, t, std::move(small));
  REQUIRE(grown.head.status == 200);
  CHECK(grown.body.find("\"name\":\"p19\"") != std::string::npos);
  CHECK(grown.body.capacity() >= grown.body.size() + kPadding);
}

TEST_CASE("TLS is verified against the CA and the server name and tls-server-name works",
          "[kube][transport][integration]") {
  sim::ApiServer server(opts(true));
  server.start();
  boost::asio::io_context io;
  RealClock clock;
  auto rc = configFor(server);
  StaticCredentials creds(rc.token);

  SECTION("no CA configured: the system trust store does not know the test CA") {
    rc.caPem.clear();
    CurlTransport t(io, clock, rc, creds);
    auto r = get(io, t, "/api");
    CHECK(r.head.status == 0);
    CHECK_FALSE(r.error.empty());
  }
  SECTION("tls-server-name that the certificate does not name") {
    rc.tlsServerName = "wrong.example.invalid";
    CurlTransport t(io, clock, rc, creds);
    auto r = get(io, t, "/api");
    CHECK(r.head.status == 0);
    CHECK_FALSE(r.error.empty());
  }
  SECTION("tls-server-name that the certificate names, while connecting to 127.0.0.1") {
    rc.tlsServerName = "localhost";
    CurlTransport t(io, clock, rc, creds);
    auto r = get(io, t, "/api");
    CHECK(r.error.empty());
    CHECK(r.head.status == 200);
  }
  SECTION("insecure-skip-tls-verify connects without a CA") {
    rc.caPem.clear();
    rc.insecureSkipTlsVerify = true;
    CurlTransport t(io, clock, rc, creds);
    auto r = get(io, t, "/api");
    CHECK(r.head.status == 200);
  }
}

TEST_CASE("a 401 invalidates the credentials that were used", "[kube][transport][integration]") {
  sim::ApiServer server(opts(false));
  server.start();
  boost::asio::io_context io;
  testing::FakeClock clock;
  TempDir dir;
  auto rc = configFor(server);
  TokenFileCredentials creds(clock, dir.write("token", "wrong"));
  CurlTransport t(io, clock, rc, creds);
  auto r = get(io, t, "/api/v1/pods");
  CHECK(r.head.status == 401);
  CHECK(creds.reads() == 1);
  dir.write("token", server.token());
  // No time has passed: only the 401 can make the next request re-read the file.
  auto r2 = get(io, t, "/api/v1/pods");
  CHECK(r2.head.status == 200);
  CHECK(creds.reads() == 2);
}

TEST_CASE("a streaming request delivers bytes as they come and can be cancelled",
          "[kube][transport][integration]") {
  sim::ApiServer server(opts(false));
  server.start();
  boost::asio::io_context io;
  RealClock clock;
  auto rc = configFor(server);
  StaticCredentials creds(rc.token);
  CurlTransport t(io, clock, rc, creds);
  std::string received;
  long status = 0;
  bool done = false;
  RequestCallbacks cb;
  cb.onHead = [&](const ResponseHead& h) { status = h.status; };
  cb.onData = [&](std::string_view d) { received.append(d); };
  cb.onDone = [&](HttpResult) { done = true; };
  auto id = t.start(HttpRequest{"/api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion=" +
                                    std::to_string(server.currentResourceVersion()),
                                true},
                    std::move(cb));
  REQUIRE(runUntil(io, [&] { return status == 200 && server.openWatches("pods") == 1; }));
  server.create("pods", podJson("streamed"));
  REQUIRE(runUntil(io, [&] { return received.find("\"streamed\"") != std::string::npos; }));
  t.cancel(id);
  REQUIRE(runUntil(io, [&] { return t.active() == 0; }));
  CHECK_FALSE(done);  // cancelled requests do not report
  REQUIRE(runUntil(io, [&] { return server.openWatches("pods") == 0; }));
}

namespace {

sim::ApiServerOptions quietOpts() {
  auto o = opts(false);
  o.bookmarkInterval = 60s;  // only the test's events on the stream
  return o;
}

/// A pods watch through a transport with the given options, open (head received) on return.
struct CoalescingWatch {
  sim::ApiServer& server;
  boost::asio::io_context io;
  RealClock clock;
  RestConfig rc;
  StaticCredentials creds;
  CurlTransport t;
  std::string received;
  long status = 0;

  CoalescingWatch(sim::ApiServer& s, TransportOptions to)
      : server(s), rc(configFor(s)), creds(rc.token), t(io, clock, rc, creds, std::move(to)) {
    RequestCallbacks cb;
    cb.onHead = [this](const ResponseHead& h) { status = h.status; };
    cb.onData = [this](std::string_view d) { received.append(d); };
    t.start(HttpRequest{"/api/v1/pods?watch=true&resourceVersion=" + std::to_string(server.currentResourceVersion()),
                        true},
            std::move(cb));
    REQUIRE(runUntil(io, [&] { return status == 200 && server.openWatches("pods") == 1; }));
  }
  size_t count(const std::string& name) const {
    size_t n = 0;
    for (auto p = received.find(name); p != std::string::npos; p = received.find(name, p + 1)) ++n;
    return n;
  }
  /// 20 events 5 ms apart, written while the loop runs; true when all came.
  bool trickle() {
    std::thread writer([&] {
      for (int i = 0; i < 20; ++i) {
        server.create("pods", podJson("trickle-" + std::to_string(i)));
        std::this_thread::sleep_for(5ms);
      }
    });
    const bool all = runUntil(io, [&] { return count("\"trickle-") == 20; });
    writer.join();
    return all;
  }
};

std::string bigPodJson(const std::string& name, size_t annotationBytes) {
  return nlohmann::json{{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata",
                         {{"name", name},
                          {"namespace", "default"},
                          {"annotations", {{"example.com/padding", std::string(annotationBytes, 'x')}}}}}}
      .dump();
}

}  // namespace

TEST_CASE("a trickling stream is read in batches, one read per coalescing interval",
          "[kube][transport][integration]") {
  sim::ApiServer server(quietOpts());
  server.start();
  TransportOptions to;
  to.readCoalesce = 300ms;
  CoalescingWatch w(server, to);
  const auto before = w.t.stats();
  // Without coalescing each event is a wakeup and a read of its own; with a 300 ms interval the
  // socket is parked after the second read, and the rest wait in it for the interval's end.
  REQUIRE(w.trickle());
  const auto after = w.t.stats();
  CHECK(after.parks > before.parks);
  // 100 ms of writing spans one or two interval ends; a slow machine may spread it over a few.
  CHECK(after.readActions - before.readActions <= 6);
}

TEST_CASE("a busy stream read at each interval's end stays out of the reactor between reads",
          "[kube][transport][integration]") {
  sim::ApiServer server(quietOpts());
  server.start();
  TransportOptions to;
  to.readCoalesce = 20ms;  // busy while read again within 200 ms
  CoalescingWatch w(server, to);
  const auto before = w.t.stats();
  // 20 events 5 ms apart: about one read per 20 ms interval, each finding data at the park's end
  // and parking again. Putting the socket back into the reactor for each of those reads (and
  // taking it out again at once) cost two epoll_ctl calls a read; it goes back only once the
  // stream has been quiet for ten intervals, here after the trickle at most (or after a stall
  // of the writer longer than 200 ms on a loaded machine).
  REQUIRE(w.trickle());
  const auto after = w.t.stats();
  const uint64_t reads = after.readActions - before.readActions;
  const uint64_t parks = after.parks - before.parks;
  const uint64_t again = after.watchedAgain - before.watchedAgain;
  INFO("reads " << reads << ", parks " << parks << ", watched again " << again);
  REQUIRE(parks >= 3);  // the case under test happened: reads at a park's end that parked again
  CHECK(again * 3 <= parks);
  // And the stream is read again once it has gone quiet: a late event still arrives.
  std::this_thread::sleep_for(300ms);
  server.create("pods", podJson("late"));
  REQUIRE(runUntil(w.io, [&] { return w.count("\"late\"") == 1; }, 5s));
}

TEST_CASE("parked sockets are looked at together: one poll at each interval's end for all of them",
          "[kube][transport][integration]") {
  sim::ApiServer server(quietOpts());
  server.start();
  TransportOptions to;
  to.readCoalesce = 20ms;  // busy while read again within 200 ms
  CoalescingWatch w(server, to);
  // A second pods watch on the same transport (its own socket over HTTP/1.1): every event of the
  // trickle comes on both, so both are parked, and their parks end at the same instants.
  std::string second;
  long secondStatus = 0;
  RequestCallbacks cb;
  cb.onHead = [&](const ResponseHead& h) { secondStatus = h.status; };
  cb.onData = [&](std::string_view d) { second.append(d); };
  w.t.start(HttpRequest{"/api/v1/pods?watch=true&resourceVersion=" +
                            std::to_string(server.currentResourceVersion()),
                        true},
            std::move(cb));
  REQUIRE(runUntil(w.io, [&] { return secondStatus == 200 && server.openWatches("pods") == 2; }));
  const auto before = w.t.stats();
  REQUIRE(w.trickle());
  REQUIRE(runUntil(w.io, [&] { return second.find("\"trickle-19\"") != std::string::npos; }));
  // The two stay parked while quiet, looked at every 20 ms until 200 ms have passed.
  const auto quietEnd = std::chrono::steady_clock::now() + 250ms;
  runUntil(w.io, [&] { return std::chrono::steady_clock::now() >= quietEnd; });
  const auto after = w.t.stats();
  const uint64_t looks = after.parkLooks - before.parkLooks;
  const uint64_t lookedAt = after.parkedLookedAt - before.parkedLookedAt;
  INFO("looks " << looks << ", parked sockets looked at " << lookedAt);
  REQUIRE(looks >= 3);  // the case under test happened: parks ended and were looked at
  // Looked at one by one, each socket would take a look (a system call) of its own: the ratio
  // would be 1. Together it is 2 at every interval end where both are parked, which is nearly all.
  CHECK(lookedAt * 2 >= looks * 3);
  CHECK(lookedAt <= looks * 2);
}

TEST_CASE("a parked stream's waiting events are read on demand, before its park ends",
          "[kube][transport][integration]") {
  sim::ApiServer server(quietOpts());
  server.start();
  TransportOptions to;
  to.readCoalesce = 60s;  // a park that outlasts the test: only readHeldStreams reads early
  CoalescingWatch w(server, to);
  // The first event is read at once and parks the socket (read again soon after the head).
  server.create("pods", podJson("first"));
  REQUIRE(runUntil(w.io, [&] { return w.count("\"first\"") == 1; }));
  REQUIRE(w.t.stats().parks == 1);
  auto runFor = [&](std::chrono::milliseconds d) {
    const auto until = std::chrono::steady_clock::now() + d;
    runUntil(w.io, [&] { return std::chrono::steady_clock::now() >= until; });
  };
  // curl's own timers of the connection's start (the first 200 ms) run its transfers, which read
  // their sockets whether parked or not: let them pass.
  runFor(500ms);
  // Nothing waits: the socket is looked at and stays parked.
  CHECK(w.t.readHeldStreams() == 0);
  CHECK(w.t.stats().readEarly == 0);
  // An event waits in the kernel for the park's end, a minute away, and is read by the call
  // itself; the socket is parked again, so the next one waits too. The loop is not run in
  // between: a timer of curl's that came due would run the transfer, which reads its socket
  // parked or not (a loaded machine delays the connection's start timers past any fixed wait,
  // which made this test flaky under ASan), and the event would not be left for the call.
  for (const std::string name : {"second", "third"}) {
    server.create("pods", podJson(name));
    REQUIRE(w.count('"' + name + '"') == 0);
    // The server's thread sends it when it gets to it: ask until it is there.
    size_t read = 0;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (read == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
      read = w.t.readHeldStreams();
    }
    CHECK(read == 1);
    CHECK(w.count('"' + name + '"') == 1);
  }
  const auto after = w.t.stats();
  CHECK(after.readEarly == 2);
  CHECK(after.parks == 3);
}

TEST_CASE("nothing is parked while a request that is not a stream is in flight",
          "[kube][transport][integration]") {
  auto o = quietOpts();
  o.tooLargeResourceVersionWait = 5s;  // holds the LIST below in flight
  sim::ApiServer server(o);
  server.start();
  TransportOptions to;
  to.readCoalesce = 300ms;
  CoalescingWatch w(server, to);
  // A LIST from a resourceVersion the server has not reached: it waits (5 s), as a slow page of
  // a sync would. The trickle that batches in the test above is read as it comes meanwhile.
  bool listed = false;
  RequestCallbacks lc;
  lc.onDone = [&](HttpResult) { listed = true; };
  w.t.start(HttpRequest{"/api/v1/pods?resourceVersion=" + std::to_string(server.currentResourceVersion() + 1000),
                        false},
            std::move(lc));
  REQUIRE(w.trickle());
  CHECK_FALSE(listed);  // still in flight: what follows is about that time
  CHECK(w.t.stats().parks == 0);
}

TEST_CASE("a socket read only now and then is read at once, and coalescing can be turned off",
          "[kube][transport][integration]") {
  sim::ApiServer server(quietOpts());
  server.start();
  SECTION("coalescing on: the first read after a quiet spell is not held back") {
    TransportOptions to;
    to.readCoalesce = 60s;  // a parked socket would time the wait below out
    to.readBufferBytes = 16u << 10;
    CoalescingWatch w(server, to);
    // The response head was the socket's first read: it is watched, not parked, and ~50 KB
    // (more than the 16 KiB buffer) comes in one action that reads until the socket is empty.
    CHECK(w.t.stats().parks == 0);
    for (int i = 0; i < 5; ++i) server.create("pods", bigPodJson("backlog-" + std::to_string(i), 10000));
    std::this_thread::sleep_for(300ms);  // all of it in the socket before the loop runs
    REQUIRE(runUntil(w.io, [&] { return w.count("\"backlog-") == 5; }, 5s));
  }
  SECTION("coalescing off: every readable socket is read at once") {
    TransportOptions to;
    to.readCoalesce = 0ms;
    CoalescingWatch w(server, to);
    REQUIRE(w.trickle());
    CHECK(w.t.stats().parks == 0);
  }
}

TEST_CASE("a request on a kept-alive connection goes out before the loop's next handler",
          "[kube][transport][integration]") {
  // A reflector asks for the next LIST page, then decodes the page it has, in a handler it posted:
  // the server must have the request by then, to prepare the page while the loop decodes.
  sim::ApiServer server(opts(false));
  server.start();
  server.create("pods", podJson("a"));
  boost::asio::io_context io;
  RealClock clock;
  auto rc = configFor(server);
  StaticCredentials creds(rc.token);
  CurlTransport t(io, clock, rc, creds);
  REQUIRE(get(io, t, "/api/v1/pods").head.status == 200);  // the connection, kept alive
  const uint64_t before = server.stats().listRequests;
  bool done = false;
  std::optional<bool> seenWhileBusy;
  boost::asio::post(io, [&] {
    RequestCallbacks cb;
    cb.onDone = [&](HttpResult r) { done = r.head.status == 200; };
    t.start(HttpRequest{"/api/v1/pods", false}, std::move(cb));
    boost::asio::post(io, [&] {
      // The loop is busy here (as with a decode): the request must already be with the server.
      const auto until = std::chrono::steady_clock::now() + 5s;
      while (server.stats().listRequests == before && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(1ms);
      }
      seenWhileBusy = server.stats().listRequests == before + 1;
    });
  });
  // Both: a fast server's answer may even be read in the same turn that sent the request.
  REQUIRE(runUntil(io, [&] { return done && seenWhileBusy.has_value(); }));
  CHECK(*seenWhileBusy);
}

TEST_CASE("a refused connection is a transport error without status", "[kube][transport]") {
  boost::asio::io_context io;
  RealClock clock;
  RestConfig rc;
  rc.server = "http://127.0.0.1:1";  // nothing listens on port 1
  StaticCredentials creds;
  CurlTransport t(io, clock, rc, creds);
  auto r = get(io, t, "/api");
  CHECK(r.head.status == 0);
  CHECK_FALSE(r.error.empty());
}

TEST_CASE("one loop thread drives a hundred concurrent watches", "[kube][transport][integration]") {
  // 20 workers × 5 resources: every stream on the test thread, no thread per request.
  auto o = opts(false);
  sim::ApiServer server(o);
  server.start();
  boost::asio::io_context io;
  RealClock clock;
  auto rc = configFor(server);
  StaticCredentials creds(rc.token);
  CurlTransport t(io, clock, rc, creds);
  const std::string paths[] = {"/api/v1/pods", "/api/v1/nodes", "/apis/kueue.x-k8s.io/v1beta2/workloads",
                               "/apis/resource.k8s.io/v1/resourceclaims",
                               "/apis/resource.k8s.io/v1/resourceslices"};
  int heads = 0;
  size_t bytes = 0;
  for (int i = 0; i < 100; ++i) {
    RequestCallbacks cb;
    cb.onHead = [&](const ResponseHead& h) { heads += h.status == 200; };
    cb.onData = [&](std::string_view d) { bytes += d.size(); };
    t.start(HttpRequest{paths[i % 5] + "?watch=true&allowWatchBookmarks=true&resourceVersion=" +
                            std::to_string(server.currentResourceVersion()),
                        true},
            std::move(cb));
  }
  bool all = runUntil(io, [&] { return heads == 100 && server.openWatches() == 100; }, 20000ms);
  INFO("heads=" << heads << " open=" << server.openWatches() << " active=" << t.active());
  REQUIRE(all);
  // Bookmarks flow on all of them (100 ms interval).
  size_t before = bytes;
  REQUIRE(runUntil(io, [&] { return bytes > before + 100 * 50; }, 10000ms));
  CHECK(t.active() == 100);
}

TEST_CASE("proxy-url and client certificates reach curl", "[kube][transport][integration]") {
  sim::ApiServer server(opts(true));
  server.start();
  boost::asio::io_context io;
  RealClock clock;
  auto rc = configFor(server);
  StaticCredentials creds(rc.token);
  SECTION("a proxy that does not listen makes the request fail although the server is up") {
    rc.proxyUrl = "http://127.0.0.1:1";
    CurlTransport t(io, clock, rc, creds);
    auto r = get(io, t, "/api");
    CHECK(r.head.status == 0);
    CHECK_FALSE(r.error.empty());
  }
  SECTION("a client certificate that is not PEM is refused before anything is sent") {
    rc.clientCertPem = "not a certificate";
    rc.clientKeyPem = "not a key";
    CurlTransport t(io, clock, rc, creds);
    auto r = get(io, t, "/api");
    CHECK(r.head.status == 0);
    CHECK_FALSE(r.error.empty());
  }
}
