#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <string>

#include "firstwork/store/store.hpp"

using namespace firstwork;
using namespace firstwork::store;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/firstwork-store-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
};

SystemTime at(int64_t seconds) { return SystemTime{std::chrono::seconds{seconds}}; }

Record rec(std::string kind, std::string key, int64_t t, std::string body = "{}",
           WriteMode mode = WriteMode::InsertOnce, std::string cluster = "w1",
           std::string cq = "cq") {
  return Record{std::move(kind), std::move(key), std::move(cluster), std::move(cq), at(t),
                std::move(body), mode};
}

void checkSemantics(Store& s) {
  auto first = s.commit({rec("observation", "a", 10), rec("observation", "b", 20)});
  REQUIRE(first.ok());
  CHECK(*first == std::vector<bool>{true, true});
  // The same facts re-derived after a restart are not new: no histogram sample twice.
  auto again = s.commit({rec("observation", "a", 10, "{\"x\":1}"), rec("observation", "c", 30)});
  REQUIRE(again.ok());
  CHECK(*again == std::vector<bool>{false, true});
  // Upsert replaces and reports a change only when the body differs.
  REQUIRE(s.commit({rec("incident", "i1", 5, "{\"outcome\":\"open\"}", WriteMode::Upsert)}).ok());
  auto same = s.commit({rec("incident", "i1", 5, "{\"outcome\":\"open\"}", WriteMode::Upsert)});
  REQUIRE(same.ok());
  CHECK(*same == std::vector<bool>{false});
  auto changed =
      s.commit({rec("incident", "i1", 5, "{\"outcome\":\"recovered\"}", WriteMode::Upsert)});
  REQUIRE(changed.ok());
  CHECK(*changed == std::vector<bool>{true});

  auto obs = s.query({"observation", "", "", {}, {}, 100, {}, {}});
  REQUIRE(obs.ok());
  REQUIRE(obs->size() == 3);
  CHECK((*obs)[0].key == "a");
  CHECK((*obs)[0].body == "{}");  // InsertOnce kept the original
  CHECK((*obs)[2].key == "c");
  auto since = s.query({"observation", "", "", at(15), at(30), 100, {}, {}});
  REQUIRE(since.ok());
  REQUIRE(since->size() == 1);  // [15, 30): only b
  CHECK((*since)[0].key == "b");
  auto inc = s.query({"incident", "w1", "cq", {}, {}, 100, {}, {}});
  REQUIRE(inc.ok());
  REQUIRE(inc->size() == 1);
  CHECK((*inc)[0].body == "{\"outcome\":\"recovered\"}");
  CHECK(s.query({"incident", "w2", "", {}, {}, 100, {}, {}})->empty());
  CHECK(*s.contains("observation", "b"));
  CHECK_FALSE(*s.contains("observation", "zz"));
  // Key prefix / suffix (restart: a cycle's milestones, evicted milestones). A prefix is not a
  // LIKE pattern: "%" and "_" in it are plain characters.
  REQUIRE(s.commit({rec("milestone", "ms/w1/u1/7/evicted", 1), rec("milestone", "ms/w1/u1/7/queued", 2),
                    rec("milestone", "ms/w1/u1/70/evicted", 3), rec("milestone", "ms/w1/u_/7/evicted", 4)})
              .ok());
  auto keys = [&](std::string prefix, std::string suffix) {
    Query q;
    q.kind = "milestone";
    q.keyPrefix = std::move(prefix);
    q.keySuffix = std::move(suffix);
    auto found = s.query(q);
    REQUIRE(found.ok());
    std::vector<std::string> out;
    for (const auto& r : found.value()) out.push_back(r.key);
    return out;
  };
  CHECK(keys("ms/w1/u1/7/", "") == std::vector<std::string>{"ms/w1/u1/7/evicted", "ms/w1/u1/7/queued"});
  CHECK(keys("", "/evicted") ==
        std::vector<std::string>{"ms/w1/u1/7/evicted", "ms/w1/u1/70/evicted", "ms/w1/u_/7/evicted"});
  CHECK(keys("ms/w1/u_/", "/evicted") == std::vector<std::string>{"ms/w1/u_/7/evicted"});
  CHECK(keys("ms/w1/u1/", "/queued") == std::vector<std::string>{"ms/w1/u1/7/queued"});
  CHECK(keys("ms/w2/", "").empty());
  // Remove deletes (kind, key) and says whether there was one; an Upsert can bring it back.
  auto removed = s.commit({rec("open_cycle", "oc/1", 3, "{}", WriteMode::Upsert),
                           rec("open_cycle", "oc/1", 3, "", WriteMode::Remove),
                           rec("open_cycle", "oc/2", 3, "", WriteMode::Remove)});
  REQUIRE(removed.ok());
  CHECK(*removed == std::vector<bool>{true, true, false});
  CHECK_FALSE(*s.contains("open_cycle", "oc/1"));
  REQUIRE(s.commit({rec("open_cycle", "oc/1", 3, "{\"a\":1}", WriteMode::Upsert)}).ok());
  CHECK(*s.contains("open_cycle", "oc/1"));
  // State of a kind pruning keeps stays however old its time.
  REQUIRE(s.commit({rec("worker_connection", "wc/w1", 2, "{}", WriteMode::Upsert)}).ok());
  // a (10), i1 (5), the four milestones (1-4) and oc/1 (3) go; wc/w1 (2) is kept.
  auto pruned = s.prune(at(20), {"worker_connection", "no_such_kind"});
  REQUIRE(pruned.ok());
  CHECK(*pruned == 7);
  CHECK_FALSE(*s.contains("observation", "a"));
  CHECK(*s.contains("observation", "b"));
  CHECK(*s.contains("worker_connection", "wc/w1"));
  auto all = s.prune(at(20), {});
  REQUIRE(all.ok());
  CHECK(*all == 1);
  CHECK_FALSE(*s.contains("worker_connection", "wc/w1"));
}

}  // namespace

TEST_CASE("The SQLite store writes each fact once, upserts incidents, filters and prunes",
          "[store]") {
  TempDir dir;
  auto s = openSqliteStore((dir.path / "f.db").string());
  REQUIRE(s.ok());
  checkSemantics(**s);
}

TEST_CASE("The memory store has the same semantics as the SQLite store", "[store]") {
  auto s = makeMemoryStore();
  checkSemantics(*s);
}

TEST_CASE("The SQLite store is in WAL mode and keeps data across reopen", "[store]") {
  TempDir dir;
  auto path = (dir.path / "f.db").string();
  {
    auto s = openSqliteStore(path);
    REQUIRE(s.ok());
    REQUIRE((*s)->commit({rec("milestone", "m1", 1, "{\"m\":\"reserved\"}")}).ok());
  }
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA journal_mode;", -1, &st, nullptr);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))) == "wal");
  sqlite3_finalize(st);
  sqlite3_prepare_v2(db, "PRAGMA user_version;", -1, &st, nullptr);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  CHECK(sqlite3_column_int(st, 0) == kSchemaVersion);
  sqlite3_finalize(st);
  sqlite3_close(db);
  auto again = openSqliteStore(path);
  REQUIRE(again.ok());
  CHECK(*(*again)->contains("milestone", "m1"));
}

TEST_CASE("A store with a newer schema than this build is refused with a clear error", "[store]") {
  TempDir dir;
  auto path = (dir.path / "f.db").string();
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_exec(db, "PRAGMA user_version=99;", nullptr, nullptr, nullptr);
  sqlite3_close(db);
  auto s = openSqliteStore(path);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().find("schema version 99 is newer") != std::string::npos);
}

TEST_CASE("A read-only store reports write errors and changes nothing", "[store]") {
  TempDir dir;
  auto path = (dir.path / "f.db").string();
  {
    auto s = openSqliteStore(path);
    REQUIRE(s.ok());
    REQUIRE((*s)->commit({rec("observation", "a", 1)}).ok());
  }
  auto ro = openSqliteStore(path, SqliteOptions{true, 100});
  REQUIRE(ro.ok());
  auto w = (*ro)->commit({rec("observation", "b", 2), rec("observation", "c", 3)});
  REQUIRE_FALSE(w.ok());
  CHECK(w.error().find("store ") == 0);
  CHECK(*(*ro)->contains("observation", "a"));
  CHECK_FALSE(*(*ro)->contains("observation", "b"));
}

TEST_CASE("The SQLite store's kept statements carry no state from one commit to the next",
          "[store]") {
  // The write statements are prepared once and reused: a commit that failed (another writer
  // holds the lock) must leave them usable, and a Remove (two bindings) after an Upsert (six)
  // must not see the earlier bindings.
  TempDir dir;
  auto path = (dir.path / "f.db").string();
  auto s = openSqliteStore(path, SqliteOptions{false, 50});
  REQUIRE(s.ok());
  Store& st = **s;
  REQUIRE(st.commit({rec("open_cycle", "c1", 1, "{\"a\":1}", WriteMode::Upsert)}).ok());

  sqlite3* other = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &other) == SQLITE_OK);
  REQUIRE(sqlite3_exec(other, "BEGIN IMMEDIATE;", nullptr, nullptr, nullptr) == SQLITE_OK);
  auto blocked = st.commit({rec("milestone", "m1", 2)});
  CHECK_FALSE(blocked.ok());
  REQUIRE(sqlite3_exec(other, "ROLLBACK;", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(other);

  // One transaction: insert, upsert (changed body), remove, insert again of the removed key.
  auto mixed = st.commit({rec("milestone", "m1", 2), rec("open_cycle", "c1", 1, "{\"a\":2}", WriteMode::Upsert),
                          rec("open_cycle", "c1", 0, "", WriteMode::Remove),
                          rec("open_cycle", "c2", 3, "{\"b\":1}", WriteMode::Upsert),
                          rec("milestone", "m1", 2, "{\"again\":1}")});
  REQUIRE(mixed.ok());
  CHECK(*mixed == std::vector<bool>{true, true, true, true, false});
  // And again in separate transactions, alternating the statements.
  for (int i = 0; i < 3; ++i) {
    auto up = st.commit({rec("open_cycle", "c1", 10 + i, "{\"i\":" + std::to_string(i) + "}", WriteMode::Upsert)});
    REQUIRE(up.ok());
    CHECK(*up == std::vector<bool>{true});
    auto rm = st.commit({rec("open_cycle", "c1", 0, "", WriteMode::Remove)});
    REQUIRE(rm.ok());
    CHECK(*rm == std::vector<bool>{true});
    CHECK_FALSE(*st.contains("open_cycle", "c1"));
    CHECK(*st.contains("open_cycle", "c2"));
  }
  auto cycles = st.query({"open_cycle", "", "", {}, {}, 100, {}, {}});
  REQUIRE(cycles.ok());
  REQUIRE(cycles->size() == 1);
  CHECK((*cycles)[0].key == "c2");
  CHECK((*cycles)[0].body == "{\"b\":1}");
  CHECK((*cycles)[0].cluster == "w1");
  CHECK((*cycles)[0].time == at(3));
  auto ms = st.query({"milestone", "", "", {}, {}, 100, {}, {}});
  REQUIRE(ms.ok());
  REQUIRE(ms->size() == 1);
  CHECK((*ms)[0].body == "{}");  // InsertOnce kept the first body
}

TEST_CASE("An unopenable store path is an error naming the path", "[store]") {
  auto s = openSqliteStore("/nonexistent-dir-firstwork/x/f.db");
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().find("/nonexistent-dir-firstwork/x/f.db") != std::string::npos);
}

TEST_CASE("Every commit acknowledged before a SIGKILL survives it", "[store]") {
  TempDir dir;
  auto path = (dir.path / "f.db").string();
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    close(fds[0]);
    auto s = openSqliteStore(path);
    if (!s.ok()) _exit(3);
    for (int i = 0;; ++i) {
      std::vector<Record> batch;
      for (int j = 0; j < 5; ++j)
        batch.push_back(rec("observation", std::to_string(i) + "-" + std::to_string(j), i));
      if (!(*s)->commit(batch).ok()) _exit(4);
      // Acknowledge only after commit() returned.
      if (write(fds[1], &i, sizeof i) != sizeof i) _exit(5);
    }
  }
  close(fds[1]);
  int acked = -1, v;
  while (acked < 200 && read(fds[0], &v, sizeof v) == sizeof v) acked = v;
  kill(child, SIGKILL);
  // Drain what the child acknowledged before it died.
  while (read(fds[0], &v, sizeof v) == sizeof v) acked = v;
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  REQUIRE(acked >= 200);
  auto s = openSqliteStore(path);
  REQUIRE(s.ok());
  for (int i = 0; i <= acked; ++i)
    for (int j = 0; j < 5; ++j)
      REQUIRE(*(*s)->contains("observation", std::to_string(i) + "-" + std::to_string(j)));
  // Transactions are all-or-nothing: the batch in flight is either whole or absent.
  int n = static_cast<int>((*s)->query({"observation", "", "", {}, {}, 1000000, {}, {}})->size());
  CHECK(n % 5 == 0);
}
