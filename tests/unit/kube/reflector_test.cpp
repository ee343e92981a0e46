#include "firstwork/kube/reflector.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <set>
#include <string>

#include <boost/asio/io_context.hpp>

#include "fakes/fake_clock.hpp"
#include "fakes/fake_transport.hpp"
#include "firstwork/kube/api_discovery.hpp"
#include "firstwork/kube/connection_monitor.hpp"
#include "firstwork/kube/kube_client.hpp"
#include "firstwork/kube/list_decoder.hpp"
#include "kube_test_util.hpp"
#include "recording.hpp"

using namespace firstwork;
using namespace firstwork::kube;
using namespace std::chrono_literals;
using firstwork::testing::FakeClock;
using firstwork::testing::FakeTransport;
using firstwork::testing::RecordingObserver;
using firstwork::testing::RecordingSink;
using model::EventType;

namespace {

std::string pod(const std::string& name, const std::string& uid, const std::string& rv) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":"ns","uid":")" + uid + R"(","resourceVersion":")" + rv +
         R"(","creationTimestamp":"2026-05-01T10:00:00Z"},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}})";
}

std::string list(const std::string& rv, const std::vector<std::string>& items,
                 const std::string& cont = "") {
  std::string out = R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv +
                    R"(")" + (cont.empty() ? "" : R"(,"continue":")" + cont + R"(")") +
                    R"(},"items":[)";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + items[i];
  return out + "]}";
}

std::string event(const std::string& type, const std::string& object) {
  return R"({"type":")" + type + R"(","object":)" + object + "}\n";
}

std::string bookmark(const std::string& rv) {
  return R"({"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":")" +
         rv + R"("}}})" + "\n";
}

const std::string kExpiredEvent =
    R"js({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 10 (12)","reason":"Expired","code":410}})js"
    "\n";
const std::string kExpiredStatus =
    R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"The provided continue parameter is too old","reason":"Expired","code":410})";

struct Harness {
  boost::asio::io_context io;
  FakeClock clock;
  FakeTransport transport;
  RecordingSink sink;
  RecordingObserver observer;
  ConnectionMonitor monitor{clock, "c1", &observer};
  ApiDiscovery discovery{transport, clock, 5min, &monitor};
  std::unique_ptr<ListDecoder> decoder;  // before the reflector, after the loop
  std::unique_ptr<Reflector> reflector;
  size_t seen = 0;

  /// `decodeOnThread`: LIST pages are decoded on a thread of their own, as in the daemon.
  explicit Harness(model::Kind kind = model::Kind::Pod, ReflectorOptions opts = fastOptions(),
                   bool decodeOnThread = false) {
    if (decodeOnThread) decoder = makeThreadListDecoder(io, "fw-decode-test");
    Reflector::Context ctx;
    ctx.decoder = decoder.get();
    ctx.cluster = "c1";
    ctx.transport = &transport;
    ctx.discovery = &discovery;
    ctx.monitor = &monitor;
    ctx.observer = &observer;
    reflector = std::make_unique<Reflector>(io, clock, ctx, kind, sink, opts);
  }

  static ReflectorOptions fastOptions() {
    ReflectorOptions o;
    o.backoff.initial = 1ms;
    o.backoff.max = 4ms;
    o.backoff.jitter = 0;
    o.seed = 99;
    return o;
  }

  /// The next request the reflector makes (after the ones already looked at).
  FakeTransport::Request& next() {
    REQUIRE(firstwork::testing::runUntil(io, [&] { return transport.requests().size() > seen; },
                                        5000ms));
    return transport.requests()[seen++];
  }

  /// Runs the initial LIST with the given pods (one page) and opens the watch.
  FakeTransport::Request& syncWith(const std::string& rv, const std::vector<std::string>& pods) {
    reflector->start();
    auto& l = next();
    transport.respond(l, 200, list(rv, pods));
    auto& w = next();
    REQUIRE(w.request.streaming);
    transport.head(w, 200);
    return w;
  }
};

bool startsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

/// Options for a store that keeps the objects (as for most kinds) or their identities alone (as
/// the daemon's Workload and pod reflectors do): the behaviour a sink sees is the same, but for
/// what a synthetic delete carries.
ReflectorOptions storeOptions(bool keepObjects) {
  auto o = Harness::fastOptions();
  o.keepObjects = keepObjects;
  return o;
}

}  // namespace

TEST_CASE("the first LIST is paginated from resourceVersion 0 and the WATCH starts at its RV",
          "[kube][reflector]") {
  Harness h;
  h.reflector->start();
  auto& p1 = h.next();
  CHECK(p1.request.path == "/api/v1/pods?limit=500&resourceVersion=0");
  CHECK_FALSE(p1.request.streaming);
  h.transport.respond(p1, 200, list("10", {pod("a", "u1", "5"), pod("b", "u2", "6")}, "tok/1"));
  auto& p2 = h.next();
  // The continue token replaces the RV (the API rejects both); it is URL-encoded.
  CHECK(p2.request.path == "/api/v1/pods?limit=500&continue=tok%2F1");
  CHECK(h.sink.events.empty());  // page 1 waits for a handler of the loop to be decoded
  h.transport.respond(p2, 200, list("10", {pod("c", "u3", "7")}));
  firstwork::testing::drain(h.io);  // page 1 is decoded and taken, page 2 after it

  REQUIRE(h.sink.events.size() == 3);
  for (const auto& e : h.sink.events) {
    CHECK(e.type == EventType::Added);
    CHECK(e.origin == EventOrigin::InitialList);
  }
  CHECK(h.sink.synced == 1);
  CHECK(h.reflector->synced());
  CHECK(h.reflector->size() == 3);
  CHECK(h.observer.tracked == 3);

  auto& w = h.next();
  CHECK(w.request.streaming);
  CHECK(startsWith(w.request.path, "/api/v1/pods?allowWatchBookmarks=true&resourceVersion=10&timeoutSeconds="));
  auto pos = w.request.path.find("timeoutSeconds=") + 15;
  int timeout = std::stoi(w.request.path.substr(pos));
  CHECK(timeout >= 300);  // 5–10 min, as client-go
  CHECK(timeout <= 600);
  CHECK(w.request.path.substr(w.request.path.size() - 11) == "&watch=true");
  h.transport.head(w, 200);
  CHECK(h.reflector->state() == ReflectorState::Watching);
  // Up once the stream has been quiet for catchUpQuiet (nothing to replay here).
  CHECK(firstwork::testing::runUntil(h.io, [&] { return h.observer.watchUp; }, 5000ms));
}

// Found by the end-to-end drill "a recovery waits for a worker whose watches are behind": a
// watch resumed after 429s reported up at its head, the daemon judged the worker's objects
// before the replay that followed the head, and a recovery closed without its first useful work.
TEST_CASE("a resumed watch is up only once its replay is in: quiet stream or BOOKMARK",
          "[kube][reflector]") {
  auto opts = Harness::fastOptions();
  opts.catchUpQuiet = 20ms;
  Harness h(model::Kind::Pod, opts);
  auto& w = h.syncWith("10", {pod("a", "u1", "5")});
  CHECK_FALSE(h.observer.watchUp);  // the head alone says nothing about what follows
  REQUIRE(firstwork::testing::runUntil(h.io, [&] { return h.observer.watchUp; }, 5000ms));

  // A clean end (timeoutSeconds) re-watches at once: the watch stays up across it.
  h.transport.end(w);
  auto& w2 = h.next();
  CHECK(h.observer.watchUp);
  h.transport.head(w2, 200);
  CHECK(h.observer.watchUp);

  // Cut: down, and resumed from RV 10; the server replays after the head.
  h.transport.end(w2, "", "transfer closed with outstanding read data remaining");
  CHECK_FALSE(h.observer.watchUp);
  auto& w3 = h.next();
  CHECK(startsWith(w3.request.path, "/api/v1/pods?allowWatchBookmarks=true&resourceVersion=10&"));
  h.sink.events.clear();
  h.transport.head(w3, 200);
  CHECK_FALSE(h.observer.watchUp);
  h.transport.data(w3, event("MODIFIED", pod("a", "u1", "12")));
  CHECK(h.sink.events.size() == 1);
  CHECK_FALSE(h.observer.watchUp);  // more of the replay may be on its way
  REQUIRE(firstwork::testing::runUntil(h.io, [&] { return h.observer.watchUp; }, 5000ms));
  CHECK(h.reflector->state() == ReflectorState::Watching);

  // Cut again: a BOOKMARK after the replay says it is all in, without waiting for quiet.
  h.transport.end(w3, "", "transfer closed with outstanding read data remaining");
  auto& w4 = h.next();
  h.transport.head(w4, 200);
  h.transport.data(w4, event("MODIFIED", pod("a", "u1", "13")));
  CHECK_FALSE(h.observer.watchUp);
  h.transport.data(w4, bookmark("14"));
  CHECK(h.observer.watchUp);
}

TEST_CASE("a resumed watch whose stream never goes quiet is up after catchUpLimit",
          "[kube][reflector]") {
  auto opts = Harness::fastOptions();
  opts.catchUpQuiet = 5ms;
  opts.catchUpLimit = 10s;  // measured with the injected clock
  Harness h(model::Kind::Pod, opts);
  auto& w = h.syncWith("10", {pod("a", "u1", "5")});
  // Events keep coming faster than the quiet interval: each check of the timer finds new bytes.
  int rv = 11;
  auto busy = [&] {
    h.transport.data(w, event("MODIFIED", pod("a", "u1", std::to_string(rv++))));
    h.io.run_for(std::chrono::milliseconds(1));
    h.io.restart();
  };
  for (int i = 0; i < 30 && !h.observer.watchUp; ++i) busy();
  h.clock.advance(11s);
  bool up = false;
  for (int i = 0; i < 5000 && !up; ++i) {
    busy();
    up = h.observer.watchUp;
  }
  CHECK(up);
}

TEST_CASE("watch events update the store and a clean end resumes from the last RV (bookmarks included)",
          "[kube][reflector]") {
  const bool keepObjects = GENERATE(true, false);
  CAPTURE(keepObjects);
  Harness h(model::Kind::Pod, storeOptions(keepObjects));
  auto& w = h.syncWith("10", {pod("a", "u1", "5"), pod("b", "u2", "6")});
  h.sink.events.clear();
  // One chunk holding two events and half of a third; the rest in the next chunk.
  std::string stream = event("ADDED", pod("c", "u3", "11")) + event("MODIFIED", pod("a", "u1", "12")) +
                       event("DELETED", pod("b", "u2", "13")) + bookmark("20");
  h.transport.data(w, stream.substr(0, 150));
  h.transport.data(w, stream.substr(150));
  REQUIRE(h.sink.events.size() == 3);
  CHECK(h.sink.events[0].type == EventType::Added);
  CHECK(h.sink.events[0].origin == EventOrigin::Watch);
  CHECK(h.sink.events[1].type == EventType::Modified);
  CHECK(h.sink.events[1].previousRv == "5");
  CHECK(h.sink.events[2].type == EventType::Deleted);
  CHECK(h.sink.events[2].previousRv == "6");
  CHECK(h.reflector->resourceVersion() == "20");
  CHECK(h.reflector->size() == 2);
  CHECK(h.observer.tracked == 2);
  CHECK((h.reflector->find("u3") != nullptr) == keepObjects);
  CHECK(h.observer.watchEvents["ADDED"] == 1);
  CHECK(h.observer.watchEvents["MODIFIED"] == 1);
  CHECK(h.observer.watchEvents["DELETED"] == 1);
  CHECK(h.observer.watchEvents["BOOKMARK"] == 1);

  // A duplicate of what we hold (same RV) is not an event, nor is the delete of one not held.
  h.transport.data(w, event("MODIFIED", pod("a", "u1", "12")) +
                          event("DELETED", pod("b", "u2", "14")) + bookmark("20"));
  CHECK(h.sink.events.size() == 3);
  CHECK(h.sink.violations == 0);

  h.transport.end(w);  // timeoutSeconds reached
  auto& w2 = h.next();
  CHECK(startsWith(w2.request.path, "/api/v1/pods?allowWatchBookmarks=true&resourceVersion=20&"));
  CHECK(h.reflector->stats().restarts_for(RestartReason::StreamEnd) == 1);
  CHECK(h.reflector->stats().listRequests == 1);  // no relist
}

TEST_CASE("ERROR 410 relists at the last RV and emits synthetic events for the difference",
          "[kube][reflector]") {
  const bool keepObjects = GENERATE(true, false);
  CAPTURE(keepObjects);
  Harness h(model::Kind::Pod, storeOptions(keepObjects));
  auto& w = h.syncWith("10", {pod("a", "u1", "5"), pod("b", "u2", "6"), pod("c", "u3", "7")});
  h.sink.events.clear();
  h.transport.data(w, bookmark("15") + kExpiredEvent);
  CHECK(w.cancelled);
  CHECK_FALSE(h.observer.watchUp);
  auto& l = h.next();
  CHECK(l.request.path == "/api/v1/pods?limit=500&resourceVersion=15");
  // Server now: a modified (rv 30), c unchanged, d new; b is gone.
  h.transport.respond(l, 200, list("40", {pod("a", "u1", "30"), pod("c", "u3", "7"), pod("d", "u4", "35")}));
  REQUIRE(h.sink.events.size() == 3);
  CHECK(h.sink.events[0].type == EventType::Deleted);
  CHECK(h.sink.events[0].uid == "u2");
  CHECK(h.sink.events[0].origin == EventOrigin::Relist);
  // Its last state: the object held, or, from a store that keeps none, its uid alone.
  CHECK(h.sink.events[0].finalStateUnknown == !keepObjects);
  CHECK(h.sink.events[0].name == (keepObjects ? "b" : ""));
  // Its namespace and name as their hash (a sink keeping records by name finds it so).
  CHECK(h.sink.events[0].nameHash == (keepObjects ? 0 : model::hashOf({"ns", "b"})));
  CHECK(h.sink.events[0].rv == "6");
  CHECK_FALSE(h.sink.events[1].finalStateUnknown);
  CHECK(h.sink.events[1].type == EventType::Modified);
  CHECK(h.sink.events[1].uid == "u1");
  CHECK(h.sink.events[1].previousRv == "5");
  CHECK(h.sink.events[2].type == EventType::Added);
  CHECK(h.sink.events[2].uid == "u4");
  CHECK(h.sink.violations == 0);
  CHECK(h.reflector->size() == 3);
  CHECK(h.sink.synced == 1);  // synced is reported once
  CHECK(h.reflector->stats().restarts_for(RestartReason::Expired) == 1);
  CHECK(h.observer.restarts["expired"] == 1);
  CHECK(h.observer.events[{static_cast<int>(EventType::Deleted), true}] == 1);
  auto& w2 = h.next();
  CHECK(startsWith(w2.request.path, "/api/v1/pods?allowWatchBookmarks=true&resourceVersion=40&"));
}

TEST_CASE("the store holds one object per uid: a replaced one is released, an unchanged one kept",
          "[kube][reflector]") {
  // The store's keys view the uid inside the object each entry holds (no copy of the key): every
  // replacement must move its key to the new object before the old one can be freed. Under ASan a
  // key left on a freed object fails the lookups below.
  Harness h;
  auto& w = h.syncWith("10", {pod("a", "u1", "5"), pod("b", "u2", "6"), pod("c", "u3", "7")});
  std::weak_ptr<const model::Object> a5 = h.reflector->find("u1");
  REQUIRE_FALSE(a5.expired());
  h.transport.data(w, event("MODIFIED", pod("a", "u1", "12")));
  CHECK(a5.expired());  // nothing holds the replaced version
  auto a12 = h.reflector->find("u1");
  REQUIRE(a12 != nullptr);
  CHECK(model::metaOf(*a12).resourceVersion == "12");
  const auto* b6 = h.reflector->find("u2").get();
  // A relist where a is unchanged, b changed, c gone and d new.
  h.transport.data(w, kExpiredEvent);
  auto& l = h.next();
  h.transport.respond(l, 200, list("40", {pod("a", "u1", "12"), pod("b", "u2", "30"), pod("d", "u4", "35")}));
  CHECK(h.reflector->size() == 3);
  CHECK(h.reflector->find("u1") == a12);  // the object the sink already knows, not the listed copy
  auto b30 = h.reflector->find("u2");
  REQUIRE(b30 != nullptr);
  CHECK(b30.get() != b6);
  CHECK(model::metaOf(*b30).resourceVersion == "30");
  CHECK(h.reflector->find("u3") == nullptr);
  REQUIRE(h.reflector->find("u4") != nullptr);
  CHECK(model::metaOf(*h.reflector->find("u4")).name == "d");
  a12.reset();
  b30.reset();
  // Every key still finds its own object, after further replacements and a delete.
  auto& w2 = h.next();
  h.transport.head(w2, 200);
  h.transport.data(w2, event("MODIFIED", pod("a", "u1", "41")) + event("MODIFIED", pod("b", "u2", "42")) +
                           event("DELETED", pod("d", "u4", "43")));
  size_t held = 0;
  h.reflector->forEach([&](const model::Object& o) {
    const auto& m = model::metaOf(o);
    CHECK(h.reflector->find(m.uid).get() == &o);
    ++held;
  });
  CHECK(held == 2);
  CHECK(model::metaOf(*h.reflector->find("u1")).resourceVersion == "41");
  CHECK(model::metaOf(*h.reflector->find("u2")).resourceVersion == "42");
  CHECK(h.sink.violations == 0);
}

TEST_CASE("a LIST refused at the last RV falls back to a quorum read", "[kube][reflector]") {
  Harness h;
  auto& w = h.syncWith("10", {pod("a", "u1", "5")});
  h.transport.end(w);  // clean end
  auto& w2 = h.next();
  h.transport.respond(w2, 410, kExpiredStatus);  // HTTP 410 on the watch itself
  auto& l = h.next();
  CHECK(l.request.path == "/api/v1/pods?limit=500&resourceVersion=10");
  // kube-apiserver: too large RV ⇒ 504 Timeout with cause ResourceVersionTooLarge.
  h.transport.respond(
      l, 504,
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"Too large resource version","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}]},"code":504})");
  auto& l2 = h.next();
  CHECK(l2.request.path == "/api/v1/pods?limit=500");  // RV unset: consistent read
  h.transport.respond(l2, 200, list("50", {pod("a", "u1", "5")}));
  auto& w3 = h.next();
  CHECK(startsWith(w3.request.path, "/api/v1/pods?allowWatchBookmarks=true&resourceVersion=50&"));
}

TEST_CASE("an expired continue token restarts the LIST and a second expiry reads it whole",
          "[kube][reflector]") {
  Harness h;
  h.reflector->start();
  auto& p1 = h.next();
  h.transport.respond(p1, 200, list("10", {pod("a", "u1", "5")}, "c1"));
  auto& p2 = h.next();
  h.transport.respond(p2, 410, kExpiredStatus);
  auto& again = h.next();
  CHECK(again.request.path == "/api/v1/pods?limit=500&resourceVersion=0");
  h.transport.respond(again, 200, list("12", {pod("a", "u1", "5")}, "c2"));
  auto& p2b = h.next();
  CHECK(p2b.request.path == "/api/v1/pods?limit=500&continue=c2");
  h.transport.respond(p2b, 410, kExpiredStatus);
  auto& whole = h.next();
  CHECK(whole.request.path == "/api/v1/pods?resourceVersion=0");
  h.transport.respond(whole, 200, list("14", {pod("a", "u1", "5"), pod("b", "u2", "13")}));
  // Items of abandoned attempts are not duplicated.
  CHECK(h.sink.events.size() == 2);
  CHECK(h.reflector->size() == 2);
  CHECK(h.reflector->stats().restarts_for(RestartReason::Expired) == 2);
}

TEST_CASE("the next LIST page is asked for before a page is decoded, and pages are taken in order",
          "[kube][reflector]") {
  Harness h;
  h.reflector->start();
  auto& p1 = h.next();
  // Page 1 holds an item that does not decode: counted when the page is decoded.
  h.transport.respond(p1, 200, list("10", {pod("a", "u1", "5"), R"({"metadata":{"name":7}})"}, "t1"));
  // Page 2 is asked for at once (read from page 1's head); page 1 waits for a handler of the loop.
  REQUIRE(h.transport.requests().size() == 2);
  CHECK(h.transport.requests()[1].request.path == "/api/v1/pods?limit=500&continue=t1");
  CHECK(h.reflector->stats().decodeErrors == 0);
  h.io.restart();
  h.io.poll();
  CHECK(h.reflector->stats().decodeErrors == 1);  // page 1 is decoded and taken now
  CHECK(h.sink.events.size() == 1);
  auto& p2 = h.next();
  h.transport.respond(p2, 200, list("10", {pod("b", "u2", "6")}, "t2"));
  auto& p3 = h.next();
  CHECK(p3.request.path == "/api/v1/pods?limit=500&continue=t2");
  // Page 3 comes before page 2 was decoded: it waits behind it.
  h.transport.respond(p3, 200, list("10", {pod("c", "u3", "7")}));
  CHECK(h.sink.events.size() == 1);
  CHECK(h.transport.requests().size() == 3);
  h.io.restart();
  h.io.poll();
  REQUIRE(h.sink.events.size() == 3);
  CHECK(h.sink.events[0].name == "a");
  CHECK(h.sink.events[1].name == "b");
  CHECK(h.sink.events[2].name == "c");
  CHECK(h.reflector->synced());
  CHECK(h.reflector->stats().listRequests == 3);
  REQUIRE(h.transport.requests().size() == 4);
  CHECK(h.transport.requests()[3].request.streaming);
}

TEST_CASE("a LIST page is received in a decoded page's buffer, the buffers go with the LIST",
          "[kube][reflector]") {
  Harness h;
  h.reflector->start();
  auto& p1 = h.next();
  const std::string body1 = list("10", {pod("a", "u1", "5"), pod("b", "u2", "6")}, "t1");
  h.transport.respond(p1, 200, body1);
  auto& p2 = h.next();
  const size_t none = std::string().capacity();  // an empty string's own (inline) room
  CHECK(p2.request.bodyBuffer.capacity() == none);  // asked for before page 1 was decoded
  h.io.restart();
  h.io.poll();  // page 1 is decoded and taken: its body is kept for a page to come
  CHECK(h.reflector->spareListBufferBytes() >= body1.size());
  h.transport.respond(p2, 200, list("10", {pod("c", "u3", "7")}, "t2"));
  auto& p3 = h.next();
  CHECK(p3.request.bodyBuffer.empty());
  CHECK(p3.request.bodyBuffer.capacity() >= body1.size());
  CHECK(h.reflector->stats().listBuffersReused == 1);
  h.transport.respond(p3, 200, list("10", {pod("d", "u4", "8")}));
  auto& w = h.next();
  REQUIRE(w.request.streaming);
  CHECK(h.reflector->synced());
  REQUIRE(h.sink.events.size() == 4);
  firstwork::testing::drain(h.io);
  CHECK(h.reflector->spareListBufferBytes() == 0);  // none held while the watch runs
  // A relist after the watch expired starts without buffers: they went when the LIST completed.
  h.transport.head(w, 200);
  h.transport.data(w, kExpiredEvent);
  auto& relist = h.next();
  REQUIRE_FALSE(relist.request.streaming);
  CHECK(relist.request.bodyBuffer.capacity() == none);
  CHECK(h.reflector->stats().listBuffersReused == 1);
}

TEST_CASE("the first LIST hands each page's objects over as the page is taken",
          "[kube][reflector]") {
  Harness h;
  h.reflector->start();
  auto& p1 = h.next();
  h.transport.respond(p1, 200, list("10", {pod("a", "u1", "5"), pod("b", "u2", "6")}, "t1"));
  firstwork::testing::drain(h.io);  // page 1 is decoded and taken
  REQUIRE(h.sink.events.size() == 2);
  CHECK(h.sink.events[0].name == "a");
  CHECK(h.sink.events[1].name == "b");
  for (const auto& e : h.sink.events) {
    CHECK(e.type == EventType::Added);
    CHECK(e.origin == EventOrigin::InitialList);
  }
  CHECK(h.reflector->size() == 2);
  CHECK(h.observer.tracked == 2);
  CHECK(h.sink.synced == 0);  // synced only once the whole LIST is in
  CHECK_FALSE(h.reflector->synced());
  auto& p2 = h.next();
  h.transport.respond(p2, 200, list("10", {pod("c", "u3", "7")}));
  REQUIRE(h.sink.events.size() == 3);
  CHECK(h.sink.events[2].name == "c");
  CHECK(h.sink.synced == 1);
  CHECK(h.reflector->synced());
  CHECK(h.sink.violations == 0);
}

TEST_CASE("a first LIST started over after some of its objects were handed over reconciles them",
          "[kube][reflector]") {
  const bool keepObjects = GENERATE(true, false);
  CAPTURE(keepObjects);
  Harness h(model::Kind::Pod, storeOptions(keepObjects));
  h.reflector->start();
  auto& p1 = h.next();
  h.transport.respond(p1, 200, list("10", {pod("a", "u1", "5"), pod("b", "u2", "6")}, "t1"));
  firstwork::testing::drain(h.io);
  REQUIRE(h.sink.events.size() == 2);
  // Page 2's token expired: the LIST starts over, and says a is gone, b changed, c is new.
  auto& p2 = h.next();
  h.transport.respond(p2, 410, kExpiredStatus);
  auto& again = h.next();
  CHECK(again.request.path == "/api/v1/pods?limit=500&resourceVersion=0");
  h.transport.respond(again, 200, list("12", {pod("b", "u2", "8"), pod("c", "u3", "9")}));
  REQUIRE(h.sink.events.size() == 5);
  CHECK(h.sink.events[2].type == EventType::Deleted);
  CHECK(h.sink.events[2].uid == "u1");
  CHECK(h.sink.events[2].name == (keepObjects ? "a" : ""));
  CHECK(h.sink.events[3].type == EventType::Modified);
  CHECK(h.sink.events[3].name == "b");
  CHECK(h.sink.events[3].previousRv == "6");
  CHECK(h.sink.events[4].type == EventType::Added);
  CHECK(h.sink.events[4].name == "c");
  CHECK(h.sink.violations == 0);
  CHECK(h.reflector->size() == 2);
  CHECK(h.sink.synced == 1);
  CHECK(h.reflector->synced());
}

TEST_CASE("with two pages waiting to be decoded the next is not asked for ahead, but once they are taken",
          "[kube][reflector]") {
  Harness h;
  h.reflector->start();
  auto& p1 = h.next();
  h.transport.respond(p1, 200, list("10", {pod("a", "u1", "5")}, "t1"));
  auto& p2 = h.next();
  h.transport.respond(p2, 200, list("10", {pod("b", "u2", "6")}, "t2"));
  auto& p3 = h.next();  // asked for from page 2's head: one page (1) waited before it
  CHECK(p3.request.path == "/api/v1/pods?limit=500&continue=t2");
  h.transport.respond(p3, 200, list("10", {pod("c", "u3", "7")}, "t3"));
  // Pages 1 and 2 wait: page 4 is not asked for from page 3's head ...
  CHECK(h.transport.requests().size() == 3);
  CHECK(h.reflector->stats().listRequests == 3);
  // ... but once page 3 is decoded and taken, from its token.
  h.io.restart();
  h.io.poll();
  auto& p4 = h.next();
  CHECK(p4.request.path == "/api/v1/pods?limit=500&continue=t3");
  h.transport.respond(p4, 200, list("10", {pod("d", "u4", "8")}));
  auto& w = h.next();
  CHECK(w.request.streaming);
  REQUIRE(h.sink.events.size() == 4);
  CHECK(h.sink.events[3].name == "d");
  CHECK(h.reflector->stats().listRequests == 4);
}

TEST_CASE("a failed page response drops the pages before it that wait to be decoded",
          "[kube][reflector]") {
  Harness h;
  h.reflector->start();
  auto& p1 = h.next();
  h.transport.respond(p1, 200, list("10", {pod("a", "u1", "5")}, "t1"));
  auto& p2 = h.next();
  // Page 2 fails before page 1 was decoded: the LIST is retried, and page 1, once decoded, is
  // not taken (it would ask for page 2 again, and its item would count twice).
  h.transport.respond(p2, 500, R"({"kind":"Status","code":500})");
  auto& again = h.next();
  CHECK(again.request.path == "/api/v1/pods?limit=500&resourceVersion=0");
  h.io.restart();
  h.io.poll();
  CHECK(h.transport.requests().size() == 3);
  h.transport.respond(again, 200, list("12", {pod("b", "u2", "6")}));
  auto& w = h.next();
  CHECK(w.request.streaming);
  REQUIRE(h.sink.events.size() == 1);
  CHECK(h.sink.events[0].name == "b");
  CHECK(h.reflector->size() == 1);
}

TEST_CASE("LIST pages decoded on a thread of their own are taken in order on the loop",
          "[kube][reflector]") {
  Harness h(model::Kind::Pod, Harness::fastOptions(), /*decodeOnThread=*/true);
  h.reflector->start();
  // 30 pages of 20 pods: pages arrive while others are decoded.
  constexpr int kPages = 30;
  for (int p = 0; p < kPages; ++p) {
    auto& r = h.next();
    CHECK(r.request.path == (p == 0 ? std::string("/api/v1/pods?limit=500&resourceVersion=0")
                                    : fmt::format("/api/v1/pods?limit=500&continue=t{}", p)));
    std::vector<std::string> pods;
    for (int i = 0; i < 20; ++i) {
      const std::string n = fmt::format("p{}-{}", p, i);
      pods.push_back(pod(n, "u" + n, "5"));
    }
    h.transport.respond(r, 200, list("10", pods, p + 1 < kPages ? fmt::format("t{}", p + 1) : ""));
  }
  auto& w = h.next();
  CHECK(w.request.streaming);
  CHECK(w.request.path.find("resourceVersion=10") != std::string::npos);
  CHECK(h.reflector->synced());
  CHECK(h.reflector->stats().listRequests == kPages);
  REQUIRE(h.sink.events.size() == kPages * 20);
  for (int p = 0; p < kPages; ++p) {
    for (int i = 0; i < 20; ++i) {
      INFO("page " << p << " item " << i);
      CHECK(h.sink.events[p * 20 + i].name == fmt::format("p{}-{}", p, i));
    }
  }
}

TEST_CASE("a page found bad after the next was asked for: that request is dropped, the LIST retried",
          "[kube][reflector]") {
  // Its head reads well (the next page is asked for), its items are not a list.
  const std::string badBody =
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"10","continue":"t1"},"items":{}})";
  const bool nextComesFirst = GENERATE(false, true);
  const bool decodeOnThread = GENERATE(false, true);
  Harness h(model::Kind::Pod, Harness::fastOptions(), decodeOnThread);
  h.reflector->start();
  auto& p1 = h.next();
  h.transport.respond(p1, 200, badBody);
  auto& p2 = h.next();
  CHECK(p2.request.path == "/api/v1/pods?limit=500&continue=t1");
  if (nextComesFirst) {
    // Page 2 comes before page 1 was decoded: it waits behind page 1, and is dropped with it.
    h.transport.respond(p2, 200, list("10", {pod("b", "u2", "6")}));
    CHECK_FALSE(p2.cancelled);  // it had finished
  }
  auto& again = h.next();
  CHECK(again.request.path == "/api/v1/pods?limit=500&resourceVersion=0");
  if (!nextComesFirst) CHECK(p2.cancelled);
  CHECK(h.reflector->stats().restarts_for(RestartReason::DecodeError) == 1);
  CHECK(h.sink.events.empty());
  CHECK_FALSE(h.reflector->synced());
  h.transport.respond(again, 200, list("12", {pod("a", "u1", "5")}));
  REQUIRE(firstwork::testing::runUntil(h.io, [&] { return h.reflector->synced(); }));
  CHECK(h.sink.events.size() == 1);
}

TEST_CASE("a page whose body ends the LIST while its head asked for more: the body decides",
          "[kube][reflector]") {
  // Two metadata objects (a hostile or broken server): the head reads the first, the decode
  // keeps the last, whose continue token is empty.
  const std::string body =
      R"({"kind":"PodList","metadata":{"resourceVersion":"10","continue":"t1"},"items":[)" +
      pod("a", "u1", "5") + R"(],"metadata":{"resourceVersion":"10","continue":""}})";
  Harness h;
  h.reflector->start();
  auto& p1 = h.next();
  h.transport.respond(p1, 200, body);
  auto& p2 = h.next();
  CHECK(p2.request.path == "/api/v1/pods?limit=500&continue=t1");
  auto& w = h.next();  // the LIST is complete: the watch follows
  CHECK(w.request.streaming);
  CHECK(p2.cancelled);
  REQUIRE(h.sink.events.size() == 1);
  CHECK(h.reflector->synced());
}

TEST_CASE("a malformed line re-watches from the last good RV", "[kube][reflector]") {
  Harness h;
  auto& w = h.syncWith("10", {pod("a", "u1", "5")});
  h.transport.data(w, event("ADDED", pod("b", "u2", "11")) + "{\"type\":\"MODIFIED\",\"obj\n" +
                          event("ADDED", pod("c", "u3", "12")));
  CHECK(w.cancelled);
  CHECK(h.reflector->size() == 2);  // b applied, nothing after the bad line
  auto& w2 = h.next();
  CHECK(startsWith(w2.request.path, "/api/v1/pods?allowWatchBookmarks=true&resourceVersion=11&"));
  CHECK(h.reflector->stats().restarts_for(RestartReason::DecodeError) == 1);
  CHECK(h.observer.restarts["decode_error"] == 1);
}

TEST_CASE("an event whose object cannot be decoded is skipped and counted and its RV kept",
          "[kube][reflector]") {
  Harness h;
  auto& w = h.syncWith("10", {pod("a", "u1", "5")});
  std::string bad =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","namespace":"ns","uid":"u9","resourceVersion":"12","creationTimestamp":"not a time"}})";
  h.transport.data(w, event("ADDED", bad) + event("ADDED", pod("b", "u2", "13")));
  CHECK_FALSE(w.cancelled);
  CHECK(h.reflector->size() == 2);
  CHECK(h.reflector->find("u9") == nullptr);
  CHECK(h.reflector->stats().decodeErrors == 1);
  CHECK(h.observer.decodeErrors == 1);
  CHECK(h.reflector->resourceVersion() == "13");
  h.transport.data(w, event("ADDED", bad));
  CHECK(h.reflector->resourceVersion() == "12");  // the undecodable event still moves the RV
}

TEST_CASE("a watch line over the size limit relists instead of meeting the line again",
          "[kube][reflector]") {
  auto opts = Harness::fastOptions();
  opts.maxLineBytes = 1024;
  Harness h(model::Kind::Pod, opts);
  auto& w = h.syncWith("10", {pod("a", "u1", "5")});
  h.transport.data(w, std::string(600, ' '));
  h.transport.data(w, std::string(600, ' '));
  CHECK(w.cancelled);
  auto& l = h.next();
  CHECK_FALSE(l.request.streaming);  // a LIST, from the last RV
  CHECK(l.request.path.find("resourceVersion=10") != std::string::npos);
  CHECK(h.reflector->stats().restarts_for(RestartReason::TooLarge) == 1);
}

TEST_CASE("the same malformed line at the same place twice relists past it", "[kube][reflector]") {
  Harness h(model::Kind::Pod, Harness::fastOptions());
  auto& w = h.syncWith("10", {pod("a", "u1", "5")});
  // A glitch first: re-watch from the last good RV.
  h.transport.data(w, "{\"type\":\"ADDED\",\"object\":{\"metad\n");
  auto& w2 = h.next();
  CHECK(w2.request.streaming);
  CHECK(w2.request.path.find("resourceVersion=10") != std::string::npos);
  // The server sends exactly that again where the stream resumes: relist instead of looping.
  h.transport.data(w2, "{\"type\":\"ADDED\",\"object\":{\"metad\n");
  auto& l = h.next();
  CHECK_FALSE(l.request.streaming);
  CHECK(h.reflector->stats().restarts_for(RestartReason::DecodeError) == 2);
}

TEST_CASE("failures are retried with the reason counted and Retry-After honoured",
          "[kube][reflector]") {
  auto opts = Harness::fastOptions();
  Harness h(model::Kind::Pod, opts);
  h.reflector->start();
  auto& l1 = h.next();
  h.transport.respond(l1, 500, R"({"kind":"Status","code":500,"message":"boom"})");
  auto& l2 = h.next();
  CHECK(l2.request.path == "/api/v1/pods?limit=500&resourceVersion=0");
  ResponseHead ra;
  ra.retryAfter = 1s;
  auto t0 = std::chrono::steady_clock::now();
  h.transport.respond(l2, 429, R"({"kind":"Status","code":429})", ra);
  auto& l3 = h.next();
  // The backoff is at most 4 ms here, so only Retry-After explains a wait of ≥ 1 s.
  CHECK(std::chrono::steady_clock::now() - t0 >= 1s);
  h.transport.fail(l3, "Connection refused");
  auto& l4 = h.next();
  h.transport.respond(l4, 401, R"({"kind":"Status","code":401})");
  auto& l5 = h.next();
  h.transport.respond(l5, 200, list("10", {}));
  CHECK(h.reflector->synced());
  const auto& s = h.reflector->stats();
  CHECK(s.restarts_for(RestartReason::HttpError) == 1);
  CHECK(s.restarts_for(RestartReason::Throttled) == 1);
  CHECK(s.restarts_for(RestartReason::TransportError) == 1);
  CHECK(s.restarts_for(RestartReason::Unauthorized) == 1);
  // Connection view: refused ⇒ disconnected, the next answer ⇒ connected again.
  REQUIRE(h.monitor.history().size() >= 2);
  CHECK_FALSE(h.monitor.history()[h.monitor.history().size() - 2].connected);
  CHECK(h.monitor.history().back().connected);
}

TEST_CASE("a cut stream resumes from the last RV without a relist", "[kube][reflector]") {
  Harness h;
  auto& w = h.syncWith("10", {pod("a", "u1", "5")});
  std::string e = event("ADDED", pod("b", "u2", "11"));
  h.transport.data(w, e + e.substr(0, 40));  // cut in the middle of the second event
  h.transport.end(w, "", "transfer closed with outstanding read data remaining");
  auto& w2 = h.next();
  CHECK(startsWith(w2.request.path, "/api/v1/pods?allowWatchBookmarks=true&resourceVersion=11&"));
  CHECK(h.reflector->stats().restarts_for(RestartReason::TransportError) == 1);
  CHECK(h.reflector->stats().listRequests == 1);
  // A cut after an answer is not a disconnection.
  CHECK(h.monitor.connected() == true);
}

TEST_CASE("a silent watch is restarted by the stall watchdog", "[kube][reflector]") {
  auto opts = Harness::fastOptions();
  opts.stallTimeout = 50ms;
  Harness h(model::Kind::Pod, opts);
  auto& w = h.syncWith("10", {pod("a", "u1", "5")});
  h.transport.data(w, bookmark("11"));
  // The watchdog measures idleness with the injected clock; let it look silent.
  h.clock.advance(1s);
  REQUIRE(firstwork::testing::runUntil(h.io, [&] { return w.cancelled; }, 5000ms));
  auto& w2 = h.next();
  CHECK(startsWith(w2.request.path, "/api/v1/pods?allowWatchBookmarks=true&resourceVersion=11&"));
  CHECK(h.reflector->stats().restarts_for(RestartReason::Stall) == 1);
  CHECK(h.monitor.connected() == false);
}

TEST_CASE("a watch silent from its start is replaced by a relist", "[kube][reflector]") {
  // A server restored with a lower RV base accepts a watch from our (now future) RV and sends
  // nothing, not even bookmarks: re-watching would hang again.
  auto opts = Harness::fastOptions();
  opts.stallTimeout = 50ms;
  Harness h(model::Kind::Pod, opts);
  auto& w = h.syncWith("10", {pod("a", "u1", "5")});
  h.clock.advance(1s);
  REQUIRE(firstwork::testing::runUntil(h.io, [&] { return w.cancelled; }, 5000ms));
  auto& l = h.next();
  CHECK(l.request.path == "/api/v1/pods?limit=500&resourceVersion=10");
  CHECK(h.reflector->stats().restarts_for(RestartReason::Stall) == 1);
}

TEST_CASE("API versions are discovered in preference order",
          "[kube][reflector][discovery]") {
  Harness h(model::Kind::Workload);
  h.reflector->start();
  auto& d = h.next();
  CHECK(d.request.path == "/apis/kueue.x-k8s.io");
  h.transport.respond(
      d, 200,
      R"({"kind":"APIGroup","apiVersion":"v1","name":"kueue.x-k8s.io","versions":[{"groupVersion":"kueue.x-k8s.io/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"kueue.x-k8s.io/v1beta1","version":"v1beta1"}})");
  auto& l = h.next();
  CHECK(l.request.path == "/apis/kueue.x-k8s.io/v1beta1/workloads?limit=500&resourceVersion=0");
  CHECK(h.reflector->version() == "v1beta1");

  Harness h2(model::Kind::ResourceSlice);
  h2.reflector->start();
  auto& d2 = h2.next();
  CHECK(d2.request.path == "/apis/resource.k8s.io");
  h2.transport.respond(
      d2, 200,
      R"({"kind":"APIGroup","name":"resource.k8s.io","versions":[{"version":"v1beta1"},{"version":"v1"},{"version":"v1beta2"}]})");
  auto& l2 = h2.next();
  CHECK(l2.request.path == "/apis/resource.k8s.io/v1/resourceslices?limit=500&resourceVersion=0");
}

TEST_CASE("decode options reach LIST pages, on the loop or a decoder's thread, and watch events",
          "[kube][reflector]") {
  auto slice = [](const std::string& uid, const std::string& rv) {
    return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"s-)" +
           uid + R"(","uid":")" + uid + R"(","resourceVersion":")" + rv +
           R"("},"spec":{"driver":"gpu.nvidia.com","pool":{"name":"n","generation":1,)"
           R"("resourceSliceCount":1},"nodeName":"n","devices":[{"name":"gpu-0","attributes":{)"
           R"("type":{"string":"gpu"},"uuid":{"string":"GPU-1"},)"
           R"("productName":{"string":"T4"}}}]}})";
  };
  auto attributes = [](const model::Object& o) {
    std::vector<std::string> n;
    for (const auto& a : std::get<model::ResourceSlice>(o).devices.at(0).attributes)
      n.push_back(a.name.str());
    return n;
  };
  for (bool onThread : {false, true}) {
    INFO((onThread ? "decoded on a thread" : "decoded on the loop"));
    auto opts = Harness::fastOptions();
    auto keep = std::make_shared<model::DecodeOptions>();
    keep->deviceAttributes = std::vector<std::string>{"type"};
    opts.decode = keep;
    Harness h(model::Kind::ResourceSlice, opts, onThread);
    h.reflector->start();
    h.transport.respond(
        h.next(), 200,
        R"({"kind":"APIGroup","name":"resource.k8s.io","versions":[{"version":"v1"}]})");
    auto& l = h.next();
    h.transport.respond(l, 200, list("10", {slice("u1", "5")}));
    auto& w = h.next();
    REQUIRE(w.request.streaming);
    h.transport.head(w, 200);
    REQUIRE(h.reflector->find("u1"));
    CHECK(attributes(*h.reflector->find("u1")) == std::vector<std::string>{"type"});
    h.transport.data(w, event("ADDED", slice("u2", "11")));
    REQUIRE(h.reflector->find("u2"));
    CHECK(attributes(*h.reflector->find("u2")) == std::vector<std::string>{"type"});
  }
  // Without options every attribute is kept.
  Harness h(model::Kind::ResourceSlice);
  h.reflector->start();
  h.transport.respond(
      h.next(), 200,
      R"({"kind":"APIGroup","name":"resource.k8s.io","versions":[{"version":"v1"}]})");
  h.transport.respond(h.next(), 200, list("10", {slice("u1", "5")}));
  h.transport.head(h.next(), 200);
  REQUIRE(h.reflector->find("u1"));
  CHECK(attributes(*h.reflector->find("u1")) ==
        std::vector<std::string>{"type", "uuid", "productName"});
}

TEST_CASE("a group the server does not serve is reported once and re-checked rarely",
          "[kube][reflector][discovery]") {
  auto opts = Harness::fastOptions();
  opts.unavailableRecheck = 30ms;
  Harness h(model::Kind::ResourceClaim, opts);
  h.reflector->start();
  auto& d = h.next();
  // Read before the 404 arms the re-check timer: read after it, a slow moment between the two
  // (a sanitizer build on a loaded machine) shortened the interval this test measures.
  const auto t0 = std::chrono::steady_clock::now();
  h.transport.respond(d, 404, R"({"kind":"Status","code":404,"reason":"NotFound"})");
  CHECK(h.reflector->unavailable());
  CHECK(h.reflector->settled());  // does not block readiness
  CHECK_FALSE(h.reflector->synced());
  // Re-checked after the interval (not in a hot loop: exactly one request per interval).
  auto& d2 = h.next();
  CHECK(std::chrono::steady_clock::now() - t0 >= 25ms);
  CHECK(d2.request.path == "/apis/resource.k8s.io");
  // Served, but only a version we do not understand: still unavailable.
  h.transport.respond(d2, 200, R"({"kind":"APIGroup","versions":[{"version":"v1alpha3"}]})");
  CHECK(h.reflector->unavailable());
  auto& d3 = h.next();
  h.transport.respond(d3, 200, R"({"kind":"APIGroup","versions":[{"version":"v1beta2"}]})");
  auto& l = h.next();
  CHECK(l.request.path == "/apis/resource.k8s.io/v1beta2/resourceclaims?limit=500&resourceVersion=0");
  int unavailableStates = 0;
  for (auto s : h.observer.states) unavailableStates += s == ReflectorState::Unavailable;
  CHECK(unavailableStates == 1);  // one transition, though checked three times
}

TEST_CASE("a resource that goes away takes its objects with it, as synthetic deletes",
          "[kube][reflector][discovery]") {
  const bool keepObjects = GENERATE(true, false);
  CAPTURE(keepObjects);
  auto opts = storeOptions(keepObjects);
  opts.unavailableRecheck = 10min;
  Harness h(model::Kind::ResourceClaim, opts);
  auto claim = [](const std::string& name, const std::string& uid, const std::string& rv) {
    return R"({"apiVersion":"resource.k8s.io/v1beta2","kind":"ResourceClaim","metadata":{"name":")" +
           name + R"(","namespace":"ns","uid":")" + uid + R"(","resourceVersion":")" + rv +
           R"(","creationTimestamp":"2026-05-01T10:00:00Z"},"spec":{}})";
  };
  h.reflector->start();
  auto& d = h.next();
  h.transport.respond(d, 200, R"({"kind":"APIGroup","versions":[{"version":"v1beta2"}]})");
  auto& l = h.next();
  h.transport.respond(l, 200, list("10", {claim("a", "u1", "5"), claim("b", "u2", "6")}));
  auto& w = h.next();
  REQUIRE(w.request.streaming);
  REQUIRE(h.sink.events.size() == 2);
  CHECK(h.observer.tracked == 2);
  // The CRD is removed: the watch gets 404, and discovery finds the group gone.
  h.transport.respond(w, 404, R"({"kind":"Status","code":404,"reason":"NotFound"})");
  auto& d2 = h.next();
  CHECK(d2.request.path == "/apis/resource.k8s.io");
  h.transport.respond(d2, 404, R"({"kind":"Status","code":404,"reason":"NotFound"})");
  REQUIRE(h.reflector->unavailable());
  REQUIRE(h.sink.events.size() == 4);
  std::set<std::string> gone;
  for (size_t i = 2; i < 4; ++i) {
    const auto& e = h.sink.events[i];
    CHECK(e.type == EventType::Deleted);
    CHECK(e.origin == EventOrigin::Relist);
    CHECK(e.finalStateUnknown == !keepObjects);
    CHECK(e.name.empty() == !keepObjects);
    if (!keepObjects) {
      CHECK(e.nameHash == model::hashOf({"ns", e.uid == "u1" ? "a" : "b"}));
    }
    gone.insert(e.uid + "@" + e.rv);
  }
  CHECK(gone == std::set<std::string>{"u1@5", "u2@6"});
  CHECK(h.reflector->size() == 0);
  CHECK(h.observer.tracked == 0);
  CHECK(h.sink.violations == 0);
  CHECK(h.sink.mirror.empty());
}

TEST_CASE("stop() silences the reflector", "[kube][reflector]") {
  Harness h;
  auto& w = h.syncWith("10", {pod("a", "u1", "5")});
  h.reflector->stop();
  CHECK(w.cancelled);
  CHECK(h.reflector->state() == ReflectorState::Stopped);
  size_t before = h.sink.events.size();
  h.transport.data(w, event("ADDED", pod("b", "u2", "11")));  // ignored: cancelled
  firstwork::testing::drain(h.io);
  CHECK(h.sink.events.size() == before);
  CHECK(h.transport.requests().size() == 2);
}

TEST_CASE("the connection monitor reports clock skew and transitions once", "[kube][connection]") {
  FakeClock clock;
  RecordingObserver observer;
  ConnectionMonitor m(clock, "w1", &observer);
  CHECK_FALSE(m.connected().has_value());
  ResponseHead h;
  h.status = 200;
  h.date = clock.systemNow() + 5s;  // server clock 5 s ahead
  m.onResponse(h);
  CHECK(observer.skew == Approx(5.0));
  CHECK(m.connected() == true);
  m.onResponse(h);  // still connected: no second event
  CHECK(observer.connections.size() == 1);
  clock.advance(30s);
  m.onBytes();  // last contact at +30 s
  SystemTime contact = clock.systemNow();
  clock.advance(10s);
  m.onUnreachable("Connection refused");
  m.onUnreachable("Connection refused");
  REQUIRE(observer.connections.size() == 2);
  CHECK_FALSE(observer.connections[1].connected);
  CHECK(observer.connections[1].lastContact == contact);
  CHECK(observer.connections[1].at == contact + 10s);
  CHECK(observer.connections[1].detail == "Connection refused");
  h.status = 503;  // a 5xx (perhaps from a proxy) does not prove the server is back
  h.date.reset();
  m.onResponse(h);
  CHECK(m.connected() == false);
  h.status = 401;
  m.onResponse(h);
  CHECK(m.connected() == true);
}

TEST_CASE("a KubeClient's reflectors decode their LIST pages with the decoder it is given",
          "[kube][client]") {
  boost::asio::io_context io;
  FakeClock clock;
  // Counts the pages it is given and decodes them on a thread of its own.
  struct CountingDecoder final : ListDecoder {
    explicit CountingDecoder(boost::asio::io_context& io)
        : inner(makeThreadListDecoder(io, "fw-decode-test")) {}
    void decode(std::string body, model::Kind kind,
                std::shared_ptr<const model::DecodeOptions> options, Done done) override {
      ++pages;
      inner->decode(std::move(body), kind, std::move(options), std::move(done));
    }
    void releaseBuffers(size_t keepBytes, std::function<void(size_t)> released) override {
      inner->releaseBuffers(keepBytes, std::move(released));
    }
    int pages = 0;
    std::unique_ptr<ListDecoder> inner;
  } decoder(io);
  auto transport = std::make_unique<FakeTransport>();
  FakeTransport& t = *transport;
  RecordingSink pods;
  KubeClientOptions opts;
  opts.listDecoder = &decoder;
  KubeClient client(io, clock, "w1", std::move(transport), opts);
  client.addReflector(model::Kind::Pod, pods);
  client.start();
  REQUIRE(firstwork::testing::runUntil(io, [&] { return t.requests().size() == 1; }));
  t.respond(t.requests()[0], 200, list("3", {pod("a", "u1", "2")}, "t1"));
  REQUIRE(firstwork::testing::runUntil(io, [&] { return t.requests().size() == 2; }));
  t.respond(t.requests()[1], 200, list("3", {pod("b", "u2", "2")}));
  REQUIRE(firstwork::testing::runUntil(io, [&] { return client.settled(); }));
  CHECK(decoder.pages == 2);
  CHECK(pods.events.size() == 2);
  client.stop();
}

TEST_CASE("a KubeClient can run on a transport of the caller's", "[kube][client]") {
  boost::asio::io_context io;
  FakeClock clock;
  auto transport = std::make_unique<FakeTransport>();
  FakeTransport& t = *transport;
  RecordingSink pods;
  RecordingSink claims;
  KubeClient client(io, clock, "w1", std::move(transport));
  client.addReflector(model::Kind::Pod, pods);
  client.addReflector(model::Kind::ResourceClaim, claims);
  client.start();
  CHECK_FALSE(client.settled());
  REQUIRE(firstwork::testing::runUntil(io, [&] { return t.requests().size() == 2; }));
  t.respond(t.requests()[0], 200, list("3", {pod("a", "u1", "2")}));
  t.respond(t.requests()[1], 404, R"({"kind":"Status","code":404})");  // no DRA here
  CHECK(client.settled());  // pods synced, claims unavailable
  CHECK(client.reflector(model::Kind::Pod)->synced());
  CHECK(client.reflector(model::Kind::ResourceClaim)->unavailable());
  CHECK(client.connection().connected() == true);
  CHECK(client.config().server == "https://fake.invalid:6443");
  client.stop();
}

TEST_CASE("two LIST items claiming one uid: the first is kept, the other counted",
          "[kube][reflector][hostile]") {
  const bool keepObjects = GENERATE(true, false);
  CAPTURE(keepObjects);
  Harness h(model::Kind::Pod, storeOptions(keepObjects));
  auto& w =
      h.syncWith("10", {pod("a", "u1", "5"), pod("impostor", "u1", "6"), pod("b", "u2", "7")});
  CHECK(h.reflector->size() == 2);
  REQUIRE(h.sink.events.size() == 2);
  CHECK(h.sink.events[0].name == "a");
  CHECK(h.sink.events[1].name == "b");
  if (keepObjects) {
    REQUIRE(h.reflector->find("u1") != nullptr);
    CHECK(model::metaOf(*h.reflector->find("u1")).name == "a");
  }
  CHECK(h.reflector->stats().decodeErrors == 1);
  CHECK(h.observer.decodeErrors == 1);
  // On the watch too, by name or namespace: whether the store keeps the objects or not.
  h.transport.data(w, event("MODIFIED", pod("impostor", "u1", "11")) +
                          event("DELETED", pod("impostor", "u1", "12")) +
                          event("MODIFIED", pod("a", "u1", "13")));
  REQUIRE(h.sink.events.size() == 3);
  CHECK(h.sink.events[2].name == "a");
  CHECK(h.sink.events[2].rv == "13");
  CHECK(h.reflector->stats().decodeErrors == 3);
  CHECK(h.sink.violations == 0);
}

TEST_CASE("a store without the objects tells uids that are UUIDs apart as the server writes them",
          "[kube][reflector]") {
  // The daemon's Workload and pod stores pack a canonical UUID into its 128 bits
  // (model::UidKey): a relist must still find each, and tell the one gone by its uid.
  const std::string u1 = "0f9e8d7c-6b5a-4938-8271-605f4e3d2c1b";
  const std::string u2 = "0f9e8d7c-6b5a-4938-8271-605f4e3d2c1c";  // one digit apart
  const std::string u3 = "0F9E8D7C-6B5A-4938-8271-605F4E3D2C1B";  // u1 upper case: another uid
  Harness h(model::Kind::Pod, storeOptions(false));
  auto& w = h.syncWith("10", {pod("a", u1, "5"), pod("b", u2, "6"), pod("c", u3, "7")});
  CHECK(h.reflector->size() == 3);
  h.transport.data(w, event("MODIFIED", pod("a", u1, "11")) + event("MODIFIED", pod("b", u2, "6")));
  REQUIRE(h.sink.events.size() == 4);  // b's is a duplicate
  h.transport.data(w, kExpiredEvent);
  auto& l = h.next();
  h.transport.respond(l, 200, list("40", {pod("a", u1, "11"), pod("c", u3, "30")}));
  REQUIRE(h.sink.events.size() == 6);
  CHECK(h.sink.events[4].type == EventType::Deleted);
  CHECK(h.sink.events[4].uid == u2);
  CHECK(h.sink.events[4].rv == "6");
  CHECK(h.sink.events[4].finalStateUnknown);
  CHECK(h.sink.events[5].type == EventType::Modified);
  CHECK(h.sink.events[5].uid == u3);
  CHECK(h.sink.violations == 0);
  CHECK(h.reflector->size() == 2);
}
