#include "firstwork/http/metrics_snapshot.hpp"

#include <prometheus/counter.h>
#include <prometheus/registry.h>

#include <catch2/catch.hpp>
#include <condition_variable>
#include <deque>
#include <thread>

#include "fakes/manual_clock.hpp"

using namespace firstwork;
using namespace firstwork::http;
using namespace std::chrono_literals;

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
