#include "firstwork/http/metrics_snapshot.hpp"

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include <catch2/catch.hpp>
#include <condition_variable>
#include <deque>
#include <future>
#include <thread>

#include "fakes/manual_clock.hpp"

using namespace firstwork;
using namespace firstwork::http;
using namespace std::chrono_literals;
using Freshness = MetricsSnapshot::Freshness;

namespace {

struct Fixture {
  prometheus::Registry registry;
  prometheus::Counter& counter = prometheus::BuildCounter()
                                     .Name("firstwork_test_total")
                                     .Help("test")
                                     .Register(registry)
                                     .Add({});
  testing::ManualClock clock;
};

// A stand-in for the event loop: runs posted jobs on its own thread.
class Loop {
 public:
  Loop() : thread_([this] { run(); }) {}
  ~Loop() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void post(std::function<void()> job) {
    {
      std::lock_guard lock(mu_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_all();
  }
  std::thread::id id() const { return thread_.get_id(); }

 private:
  void run() {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [&] { return done_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      auto job = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      job();
      lock.lock();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

TEST_CASE("without a loop, scrapes render on their own thread and reuse fresh copies",
          "[http][snapshot]") {
  Fixture f;
  MetricsSnapshot snapshot(f.registry, f.clock, {.freshness = 1000ms, .waitForLoop = 500ms});
  CHECK(snapshot.current() == nullptr);
  f.counter.Increment(2);
  auto first = snapshot.scrape();
  CHECK(first->find("firstwork_test_total 2") != std::string::npos);
  f.counter.Increment();
  // Within the freshness window the same rendering is served.
  f.clock.advance(999ms);
  CHECK(snapshot.scrape() == first);
  CHECK(snapshot.renderCount() == 1);
  f.clock.advance(1ms);
  CHECK(snapshot.scrape()->find("firstwork_test_total 3") != std::string::npos);
  CHECK(snapshot.renderCount() == 2);
  CHECK(snapshot.inlineRenderCount() == 2);
}

TEST_CASE("with a loop, the loop renders and the scrape serves its rendering",
          "[http][snapshot]") {
  Fixture f;
  // A generous wait: the loop thread answers in microseconds, the bound only guards a hang.
  MetricsSnapshot snapshot(f.registry, f.clock, {.freshness = 1000ms, .waitForLoop = 60'000ms});
  Loop loop;
  std::atomic<int> requests{0};
  std::thread::id rendered_on;
  snapshot.setRefreshRequester([&] {
    ++requests;
    loop.post([&] {
      rendered_on = std::this_thread::get_id();
      snapshot.refresh();
    });
  });
  f.counter.Increment(7);
  auto text = snapshot.scrape();
  CHECK(text->find("firstwork_test_total 7") != std::string::npos);
  CHECK(requests == 1);
  CHECK(rendered_on == loop.id());
  CHECK(snapshot.inlineRenderCount() == 0);
  CHECK(snapshot.scrape() == text);  // fresh: no second request
  CHECK(requests == 1);
}

TEST_CASE("the loop brings the figures up to date before it renders, and only the loop does",
          "[http][snapshot]") {
  Fixture f;
  MetricsSnapshot snapshot(f.registry, f.clock, {.freshness = 1000ms, .waitForLoop = 60'000ms});
  Loop loop;
  std::vector<std::thread::id> preparedOn;  // written on the loop, read after it answered
  // What the daemon does there: the work its pacer holds back, applied before the rendering.
  snapshot.setBeforeLoopRendering([&](uint64_t) {
    preparedOn.push_back(std::this_thread::get_id());
    f.counter.Increment(5);
    return Freshness::Current;
  });
  snapshot.setRefreshRequester([&] { loop.post([&] { snapshot.refreshIfWanted(true); }); });
  f.counter.Increment(1);
  CHECK(snapshot.scrape()->find("firstwork_test_total 6") != std::string::npos);
  REQUIRE(preparedOn.size() == 1);
  CHECK(preparedOn[0] == loop.id());
  CHECK(snapshot.renderCount() == 1);

  // A loop that does not answer: the scrape thread renders what there is, without the hook.
  MetricsSnapshot stuck(f.registry, f.clock, {.freshness = 1000ms, .waitForLoop = 20ms});
  int prepared = 0;
  stuck.setBeforeLoopRendering([&](uint64_t) {
    ++prepared;
    return Freshness::Current;
  });
  stuck.setRefreshRequester([] {});
  CHECK(stuck.scrape()->find("firstwork_test_total 6") != std::string::npos);
  CHECK(stuck.inlineRenderCount() == 1);
  CHECK(prepared == 0);
}

TEST_CASE("a hook that answers the scrape itself is not followed by a second rendering",
          "[http][snapshot]") {
  Fixture f;
  MetricsSnapshot snapshot(f.registry, f.clock,
                           {.freshness = 1000ms, .waitForLoop = 60'000ms, .answerBetweenEventsAfter = 0ms});
  Loop loop;
  int depth = 0;
  bool innerAnswered = false, outerAnswered = false;
  // The daemon's step answers a waiting scrape between its halves (refreshIfWanted inside it),
  // and the hook may run that step.
  snapshot.setBeforeLoopRendering([&](uint64_t) {
    if (++depth == 1) {
      f.counter.Increment(2);
      innerAnswered = snapshot.refreshIfWanted();
    }
    return Freshness::Current;
  });
  snapshot.setRefreshRequester([&] { loop.post([&] { outerAnswered = snapshot.refreshIfWanted(true); }); });
  auto text = snapshot.scrape();
  std::promise<void> drained;
  loop.post([&] { drained.set_value(); });
  drained.get_future().wait();
  CHECK(text->find("firstwork_test_total 2") != std::string::npos);
  CHECK(depth == 2);  // the inner check prepared too (the daemon's hook then only applies gauges)
  CHECK(innerAnswered);
  CHECK(outerAnswered);  // answered, by the rendering inside the hook
  CHECK(snapshot.renderCount() == 1);
  CHECK_FALSE(snapshot.refreshIfWanted(true));  // nothing waits any more
}

TEST_CASE("a hook whose figures are not in yet holds the rendering until the loop asks again",
          "[http][snapshot]") {
  Fixture f;
  MetricsSnapshot snapshot(f.registry, f.clock, {.freshness = 1000ms, .waitForLoop = 60'000ms});
  Loop loop;
  auto drain = [&] {
    std::promise<void> done;
    loop.post([&] { done.set_value(); });
    done.get_future().wait();
  };
  std::vector<uint64_t> requests;  // what the hook was called for, on the loop
  bool ready = false;              // the loop's: the daemon's store has committed the step
  snapshot.setBeforeLoopRendering([&](uint64_t request) {
    requests.push_back(request);
    return ready ? std::optional(Freshness::Current) : std::nullopt;
  });
  std::atomic<bool> asked{false};
  snapshot.setRefreshRequester([&] {
    loop.post([&] { snapshot.refreshIfWanted(true); });
    asked = true;
  });
  auto scraped = std::async(std::launch::async, [&] { return snapshot.scrape(); });
  while (!asked) std::this_thread::sleep_for(1ms);
  drain();
  // The posted refresh asked the hook, which said wait: nothing rendered, the scrape waits.
  REQUIRE(requests.size() == 1);
  CHECK(snapshot.renderCount() == 0);
  CHECK(scraped.wait_for(20ms) == std::future_status::timeout);
  // The commit returns: the loop asks again, for the same request, and renders.
  f.counter.Increment(3);
  bool rendered = false;
  loop.post([&] {
    ready = true;
    rendered = snapshot.refreshIfWanted(true);
  });
  CHECK(scraped.get()->find("firstwork_test_total 3") != std::string::npos);
  drain();
  CHECK(rendered);
  REQUIRE(requests.size() == 2);
  CHECK(requests[1] == requests[0]);
  CHECK(snapshot.renderCount() == 1);
  CHECK(snapshot.inlineRenderCount() == 0);
  // The next scrape (past the rendering's freshness) is another request.
  f.clock.advance(2s);
  snapshot.scrape();
  drain();
  REQUIRE(requests.size() == 3);
  CHECK(requests[2] != requests[0]);
}

TEST_CASE("each rendering made for a scrape counts itself with how current its figures are",
          "[http][snapshot]") {
  Fixture f;
  // What the daemon registers: a counter per freshness, incremented before the rendering.
  auto& family = prometheus::BuildCounter().Name("firstwork_renderings_total").Help("t").Register(f.registry);
  auto counted = [&](Freshness x) -> prometheus::Counter& {
    return family.Add({{"freshness", std::string(MetricsSnapshot::freshnessName(x))}});
  };
  auto line = [](Freshness x, int n) {
    return "firstwork_renderings_total{freshness=\"" + std::string(MetricsSnapshot::freshnessName(x)) +
           "\"} " + std::to_string(n) + "\n";
  };
  std::vector<std::thread::id> countedOn;
  auto counter = [&](Freshness x) {
    countedOn.push_back(std::this_thread::get_id());
    counted(x).Increment();
  };

  // On the loop: what the hook said. The rendering already shows its own count.
  MetricsSnapshot snapshot(f.registry, f.clock, {.freshness = 1000ms, .waitForLoop = 60'000ms});
  Loop loop;
  std::optional<Freshness> answer = Freshness::Uncommitted;
  snapshot.setBeforeLoopRendering([&](uint64_t) { return answer; });
  snapshot.setRenderingCounter(counter);
  snapshot.setRefreshRequester([&] { loop.post([&] { snapshot.refreshIfWanted(true); }); });
  auto text = snapshot.scrape();
  CHECK(text->find(line(Freshness::Uncommitted, 1)) != std::string::npos);
  REQUIRE(countedOn.size() == 1);
  CHECK(countedOn[0] == loop.id());
  CHECK(snapshot.scrape() == text);  // shared while fresh: no rendering, nothing counted
  CHECK(countedOn.size() == 1);
  f.clock.advance(2s);
  answer = Freshness::Current;
  CHECK(snapshot.scrape()->find(line(Freshness::Current, 1)) != std::string::npos);
  CHECK(countedOn.size() == 2);

  // A hook that says wait renders nothing and counts nothing; the scrape thread's fallback
  // rendering then counts itself stale.
  MetricsSnapshot stuck(f.registry, f.clock, {.freshness = 1000ms, .waitForLoop = 20ms});
  stuck.setBeforeLoopRendering([&](uint64_t) { return std::optional<Freshness>{}; });
  stuck.setRenderingCounter(counter);
  stuck.setRefreshRequester([&] { loop.post([&] { stuck.refreshIfWanted(true); }); });
  auto fallback = stuck.scrape();
  std::promise<void> drained;  // the posted refresh has run (and counted nothing) before `stuck` goes
  loop.post([&] { drained.set_value(); });
  drained.get_future().wait();
  CHECK(fallback->find(line(Freshness::Stale, 1)) != std::string::npos);
  CHECK(stuck.inlineRenderCount() == 1);
  REQUIRE(countedOn.size() == 3);
  CHECK(countedOn[2] == std::this_thread::get_id());

  // Without a loop to ask, the scrape thread's rendering is as current as it gets.
  MetricsSnapshot alone(f.registry, f.clock);
  alone.setRenderingCounter(counter);
  CHECK(alone.scrape()->find(line(Freshness::Current, 2)) != std::string::npos);
  CHECK(countedOn.size() == 4);
  // refresh() is no scrape's rendering.
  alone.refresh();
  CHECK(countedOn.size() == 4);
}

TEST_CASE("a loop that does not answer in time falls back to rendering on the scrape thread",
          "[http][snapshot]") {
  Fixture f;
  MetricsSnapshot snapshot(f.registry, f.clock, {.freshness = 1000ms, .waitForLoop = 20ms});
  int requests = 0;
  snapshot.setRefreshRequester([&] { ++requests; });  // posts nothing: a stuck loop
  f.counter.Increment(4);
  auto text = snapshot.scrape();
  CHECK(text->find("firstwork_test_total 4") != std::string::npos);
  CHECK(requests == 1);
  CHECK(snapshot.inlineRenderCount() == 1);
  // The stale flag was cleared, so a later scrape asks the loop again.
  f.clock.advance(2s);
  snapshot.scrape();
  CHECK(requests == 2);
}

TEST_CASE("a loop busy in one long handler answers a scrape that waited between two of its events",
          "[http][snapshot]") {
  Fixture f;
  // Generous: the answer comes within one event's work, the bound only guards a hang.
  MetricsSnapshot snapshot(f.registry, f.clock,
                           {.freshness = 1000ms, .waitForLoop = 60'000ms, .answerBetweenEventsAfter = 50ms});
  CHECK_FALSE(snapshot.refreshIfWanted());  // no scrape waits: nothing rendered
  CHECK_FALSE(snapshot.refreshIfWanted(true));
  CHECK(snapshot.renderCount() == 0);
  Loop loop;
  std::atomic<bool> scraped{false}, handlerStarted{false};
  std::atomic<int64_t> askedAt{0};
  // The loop thread's own: the manual clock's time when the check answered, and how many checks
  // did not answer while the scrape waited.
  int64_t answeredAt = 0;
  int checksLeftAlone = 0;
  // The handler the loop is in when the scrape arrives: a flood of events, each followed by the
  // check, and each 10 ms of the manual clock once the scrape has asked (the clock stands still
  // until then, so the scrape's time of asking is the requester's); it ends once the scrape has
  // its answer (or after 10 s, which fails the test below).
  loop.post([&] {
    handlerStarted = true;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!scraped && std::chrono::steady_clock::now() < deadline) {
      f.counter.Increment();  // one event's work
      const bool waiting = askedAt != 0;
      if (waiting) f.clock.advance(10ms);
      if (snapshot.refreshIfWanted()) {
        answeredAt = f.clock.monotonicNow().time_since_epoch().count();
        break;
      }
      if (waiting) ++checksLeftAlone;
      std::this_thread::sleep_for(1ms);
    }
  });
  // The posted refresh waits behind that handler; it finds the scrape answered and renders nothing.
  snapshot.setRefreshRequester([&] {
    askedAt = f.clock.monotonicNow().time_since_epoch().count();
    loop.post([&] { snapshot.refreshIfWanted(true); });
  });
  while (!handlerStarted) std::this_thread::sleep_for(1ms);
  auto text = snapshot.scrape();
  scraped = true;
  CHECK(text->find("firstwork_test_total ") != std::string::npos);
  std::promise<void> drained;
  loop.post([&] { drained.set_value(); });
  drained.get_future().wait();
  REQUIRE(answeredAt != 0);  // answered inside the handler
  // Not before it had waited 50 ms: the checks after 10, 20, 30 and 40 ms left it to the posted
  // refresh, the one after 50 ms answered.
  CHECK(answeredAt - askedAt == std::chrono::nanoseconds(50ms).count());
  CHECK(checksLeftAlone == 4);
  CHECK(snapshot.renderCount() == 1);
  CHECK(snapshot.inlineRenderCount() == 0);
  CHECK_FALSE(snapshot.refreshIfWanted(true));
}

TEST_CASE("after a scrape gave up on the loop, the loop's check renders nothing", "[http][snapshot]") {
  Fixture f;
  MetricsSnapshot snapshot(f.registry, f.clock, {.freshness = 1000ms, .waitForLoop = 20ms});
  snapshot.setRefreshRequester([] {});  // posts nothing: a loop stuck in one handler
  snapshot.scrape();  // waits 20 ms, then renders on its own thread
  CHECK(snapshot.inlineRenderCount() == 1);
  CHECK_FALSE(snapshot.refreshIfWanted());
  CHECK(snapshot.renderCount() == 1);
}

TEST_CASE("a requester that throws is treated like a loop that never answers",
          "[http][snapshot]") {
  Fixture f;
  MetricsSnapshot snapshot(f.registry, f.clock, {.freshness = 1000ms, .waitForLoop = 1ms});
  snapshot.setRefreshRequester([] { throw std::runtime_error("loop stopped"); });
  CHECK(snapshot.scrape()->find("firstwork_test_total 0") != std::string::npos);
}

namespace {
// A registry whose rendering takes `cost` of the manual clock's time.
class CostlyRegistry : public prometheus::Collectable {
 public:
  CostlyRegistry(const prometheus::Registry& inner, testing::ManualClock& clock)
      : inner_(inner), clock_(clock) {}
  std::vector<prometheus::MetricFamily> Collect() const override {
    clock_.advance(cost);
    return inner_.Collect();
  }
  std::chrono::milliseconds cost{0};

 private:
  const prometheus::Registry& inner_;
  testing::ManualClock& clock_;
};
}  // namespace

TEST_CASE("a rendering that costs more stays fresh longer (renderCostMultiple)", "[http][snapshot]") {
  Fixture f;
  CostlyRegistry costly(f.registry, f.clock);
  MetricsSnapshot snapshot(costly, f.clock,
                           {.freshness = 20ms, .waitForLoop = 500ms, .renderCostMultiple = 4});
  costly.cost = 5ms;  // 4 × 5 ms = 20 ms: the floor rules
  snapshot.scrape();
  f.clock.advance(19ms);
  snapshot.scrape();
  CHECK(snapshot.renderCount() == 1);
  f.clock.advance(1ms);
  snapshot.scrape();  // 20 ms old: rendered again, this time at 30 ms
  CHECK(snapshot.renderCount() == 2);
  costly.cost = 30ms;
  f.clock.advance(20ms);
  snapshot.scrape();  // still priced at 5 ms: rendered, and this one cost 30 ms
  CHECK(snapshot.renderCount() == 3);
  // 4 × 30 ms: the rendering is served for 120 ms, not 20.
  f.clock.advance(119ms);
  f.counter.Increment();
  CHECK(snapshot.scrape()->find("firstwork_test_total 0") != std::string::npos);
  CHECK(snapshot.renderCount() == 3);
  f.clock.advance(1ms);
  CHECK(snapshot.scrape()->find("firstwork_test_total 1") != std::string::npos);
  CHECK(snapshot.renderCount() == 4);
}
