#include "firstwork/store/store_thread.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/temp_dir.hpp"

using namespace firstwork;
using namespace firstwork::store;
using firstwork::testing::TempDir;

namespace {

Record upsert(std::string key, int n) {
  return Record{"incident", std::move(key), "w1", "cq", SystemTime{std::chrono::seconds{n}},
                "{\"n\":" + std::to_string(n) + "}", WriteMode::Upsert};
}

size_t countOf(Store& s, const std::string& kind) {
  Query q;
  q.kind = kind;
  q.limit = 1000000;
  auto r = s.query(q);
  REQUIRE(r.ok());
  return r->size();
}

}  // namespace

TEST_CASE("store thread: jobs run one at a time in posting order on a thread of their own", "[store][thread]") {
  StoreThread worker(makeMemoryStore());
  const auto caller = std::this_thread::get_id();
  std::vector<int> ran;  // written by the jobs only; read after drain()
  bool otherThread = true;
  bool committed = true;  // Catch's assertions are not for other threads: checked after drain()
  for (int i = 0; i < 200; ++i) {
    worker.post([&, i](Store& s) {
      otherThread = otherThread && std::this_thread::get_id() != caller;
      ran.push_back(i);
      committed = committed && s.commit({upsert("k", i)}).ok();
    });
  }
  std::string last;
  worker.post([&](Store& s) {
    Query q;
    q.kind = "incident";
    auto r = s.query(q);
    if (r.ok() && r->size() == 1) last = (*r)[0].body;
  });
  worker.drain();
  CHECK(otherThread);
  CHECK(committed);
  REQUIRE(ran.size() == 200);
  for (int i = 0; i < 200; ++i) CHECK(ran[static_cast<size_t>(i)] == i);
  // Upserts of one key in posting order: the last one stays.
  CHECK(last == "{\"n\":199}");
}

TEST_CASE("store thread: what it commits on its connection another connection reads after drain", "[store][thread]") {
  TempDir dir("firstwork-storethread");
  const auto path = (dir.path / "firstwork.db").string();
  auto reader = openSqliteStore(path);
  REQUIRE(reader.ok());
  auto writer = openSqliteStore(path);
  REQUIRE(writer.ok());
  StoreThread worker(std::move(*writer));
  // Posted from two threads at once: each thread's records, distinct keys, all land.
  bool committed = true;  // written by the jobs only (one thread); read after drain()
  auto poster = [&](const std::string& prefix) {
    for (int i = 0; i < 100; ++i)
      worker.post([&committed, prefix, i](Store& s) {
        committed = committed && s.commit({upsert(prefix + std::to_string(i), i)}).ok();
      });
  };
  std::thread a(poster, "a"), b(poster, "b");
  a.join();
  b.join();
  worker.drain();
  CHECK(committed);
  CHECK(countOf(**reader, "incident") == 200);
  auto has = (*reader)->contains("incident", "b99");
  REQUIRE(has.ok());
  CHECK(*has);
}

TEST_CASE("store thread: jobs posted before its destruction all run", "[store][thread]") {
  TempDir dir("firstwork-storethread");
  const auto path = (dir.path / "firstwork.db").string();
  bool committed = true;
  {
    auto writer = openSqliteStore(path);
    REQUIRE(writer.ok());
    StoreThread worker(std::move(*writer));
    for (int i = 0; i < 50; ++i)
      worker.post([&committed, i](Store& s) {
        committed = committed && s.commit({upsert("k" + std::to_string(i), i)}).ok();
      });
  }
  CHECK(committed);
  auto reader = openSqliteStore(path);
  REQUIRE(reader.ok());
  CHECK(countOf(**reader, "incident") == 50);
}
