#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "firstwork/store/store.hpp"
#include "support/store_v1.hpp"
#include "support/subprocess.hpp"

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

SqliteOptions options(bool readOnly, int busyTimeoutMs) {
  SqliteOptions o;
  o.readOnly = readOnly;
  o.busyTimeoutMs = busyTimeoutMs;
  return o;
}

SystemTime at(int64_t seconds) { return SystemTime{std::chrono::seconds{seconds}}; }

// A VFS over SQLite's default that fails every write to a database file (not to its WAL) while
// gFailDatabaseWrites is set, as a disk that has filled up fails the writes that need new blocks:
// a commit, which appends to the WAL only, goes on; a checkpoint, which copies the WAL's pages
// into the database file, fails with SQLITE_IOERR_WRITE. Everything else is the default VFS's.
constexpr const char* kFaultyVfs = "firstwork-test-faulty";
std::atomic<bool> gFailDatabaseWrites{false};
sqlite3_vfs* gDefaultVfs = nullptr;
const sqlite3_io_methods* gDefaultFileMethods = nullptr;
sqlite3_io_methods gFaultyFileMethods;
sqlite3_vfs gFaultyVfs;

int faultyWrite(sqlite3_file* file, const void* data, int amount, sqlite3_int64 offset) {
  if (gFailDatabaseWrites.load()) return SQLITE_IOERR_WRITE;
  return gDefaultFileMethods->xWrite(file, data, amount, offset);
}

int faultyOpen(sqlite3_vfs*, const char* name, sqlite3_file* file, int flags, int* outFlags) {
  const int rc = gDefaultVfs->xOpen(gDefaultVfs, name, file, flags, outFlags);
  if (rc != SQLITE_OK || (flags & SQLITE_OPEN_MAIN_DB) == 0 || file->pMethods == nullptr) return rc;
  if (gDefaultFileMethods == nullptr) {
    gDefaultFileMethods = file->pMethods;
    gFaultyFileMethods = *gDefaultFileMethods;
    gFaultyFileMethods.xWrite = faultyWrite;
  }
  if (file->pMethods != gDefaultFileMethods) {  // not the file type the copy was made of
    file->pMethods->xClose(file);
    file->pMethods = nullptr;
    return SQLITE_CANTOPEN;
  }
  file->pMethods = &gFaultyFileMethods;
  return SQLITE_OK;
}

void registerFaultyVfs() {
  static const bool registered = [] {
    gDefaultVfs = sqlite3_vfs_find(nullptr);
    gFaultyVfs = *gDefaultVfs;
    gFaultyVfs.zName = kFaultyVfs;
    gFaultyVfs.pNext = nullptr;
    gFaultyVfs.xOpen = faultyOpen;
    return sqlite3_vfs_register(&gFaultyVfs, /*makeDflt=*/0) == SQLITE_OK;
  }();
  REQUIRE(registered);
}

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

/// Runs `sql` on the database at `path` through a connection of its own.
void execAt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* msg = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg);
  INFO((msg ? msg : ""));
  sqlite3_free(msg);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

/// The rows of a one-column `sql` at `path`, as text.
std::vector<std::string> columnAt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
  std::vector<std::string> out;
  while (sqlite3_step(st) == SQLITE_ROW) {
    auto p = sqlite3_column_text(st, 0);
    out.emplace_back(p ? reinterpret_cast<const char*>(p) : "");
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

std::string userVersion(const std::string& path) { return columnAt(path, "PRAGMA user_version;").at(0); }
std::string tableSql(const std::string& path) {
  return columnAt(path, "SELECT sql FROM sqlite_master WHERE type='table' AND name='records';").at(0);
}

/// A version-1 store holding four records written out of time order.
void writeV1Store(const std::string& path) {
  // In WAL mode, as the build that wrote version 1 left its stores.
  execAt(path, std::string("PRAGMA journal_mode=WAL;") + testing::kStoreSchemaV1 +
                   "INSERT INTO records VALUES('observation','a','w1','cq',30000,'{\"a\":1}');"
                   "INSERT INTO records VALUES('milestone','ms/w1/u1/7/queued','w2','cq2',10000,'{\"m\":1}');"
                   "INSERT INTO records VALUES('incident','i1','w1','',20000,'{\"outcome\":\"open\"}');"
                   "INSERT INTO records VALUES('worker_connection','wc/w1','w1','',5000,'{}');");
}

/// What a store holds of the four records writeV1Store wrote: every field, kind by kind.
void checkV1Records(Store& s) {
  auto obs = s.query({"observation", "", "", {}, {}, 100, {}, {}});
  REQUIRE(obs.ok());
  REQUIRE(obs->size() == 1);
  CHECK((*obs)[0].key == "a");
  CHECK((*obs)[0].cluster == "w1");
  CHECK((*obs)[0].clusterQueue == "cq");
  CHECK((*obs)[0].time == at(30));
  CHECK((*obs)[0].body == "{\"a\":1}");
  auto ms = s.query({"milestone", "w2", "cq2", at(10), at(11), 100, "ms/w1/u1/", "/queued"});
  REQUIRE(ms.ok());
  REQUIRE(ms->size() == 1);
  CHECK((*ms)[0].body == "{\"m\":1}");
  CHECK(*s.contains("incident", "i1"));
  CHECK(*s.contains("worker_connection", "wc/w1"));
  CHECK_FALSE(*s.contains("incident", "a"));
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
  CHECK(columnAt(path, "PRAGMA journal_mode;") == std::vector<std::string>{"wal"});
  CHECK(userVersion(path) == std::to_string(kSchemaVersion));
  auto again = openSqliteStore(path);
  REQUIRE(again.ok());
  CHECK(*(*again)->contains("milestone", "m1"));
}

// SQLite's automatic checkpoint ran inside the commit that took the WAL past 1,000 pages, on the
// path of the commit a waiting scrape needs (bench/README.md, change 51). The store runs it on a
// connection and thread of its own: the commits that take the WAL past 1,000 pages wake it, none
// checkpoints inline below 20,000, and the checkpointed pages reach the database file while the
// store is still open (the writer's own close would checkpoint them otherwise).
TEST_CASE("The WAL is checkpointed on a thread of its own, not inside a commit", "[store]") {
  TempDir dir;
  auto path = (dir.path / "f.db").string();
  {
    auto s = openSqliteStore(path);
    REQUIRE(s.ok());
    auto stats = walStats(**s);
    REQUIRE(stats);
    CHECK(stats->background == 0);
    const auto before = fs::file_size(path);
    // 80 commits of 40 records of 2,000 bytes: two records a 4 KiB page, 1,600 pages of bodies
    // alone (each commit's frames also rewrite the index's pages), far under 20,000.
    const std::string body(2000, 'x');
    for (int c = 0; c < 80; ++c) {
      std::vector<Record> batch;
      for (int i = 0; i < 40; ++i) batch.push_back(rec("observation", std::to_string(c * 40 + i), c, body));
      REQUIRE((*s)->commit(batch).ok());
    }
    CHECK(testing::eventually([&] { return walStats(**s)->background >= 1; }, std::chrono::seconds(5)));
    CHECK(walStats(**s)->inlined == 0);
    CHECK(fs::file_size(path) > before + 500 * 4096);  // the checkpointed pages are in the file
  }
  auto again = openSqliteStore(path);
  REQUIRE(again.ok());
  CHECK(*(*again)->contains("observation", "0"));
  CHECK(*(*again)->contains("observation", "3199"));
  // Only a writable store that asked for it runs the thread.
  SqliteOptions inCommit;
  inCommit.checkpointInBackground = false;
  auto plain = openSqliteStore(path, inCommit);
  REQUIRE(plain.ok());
  CHECK_FALSE(walStats(**plain));
  auto readOnly = openSqliteStore(path, options(true, 100));
  REQUIRE(readOnly.ok());
  CHECK_FALSE(walStats(**readOnly));
  CHECK_FALSE(walStats(*makeMemoryStore()));
}

TEST_CASE("A failed checkpoint is counted and told, commits go on, and a later one catches up", "[store]") {
  registerFaultyVfs();
  TempDir dir;
  auto path = (dir.path / "f.db").string();
  std::mutex mu;
  std::vector<std::pair<std::string, std::thread::id>> told;  // each failure: message, thread
  auto toldFrom = [&](bool thisThread) {
    std::lock_guard lock(mu);
    return std::count_if(told.begin(), told.end(), [&](const auto& t) {
      return (t.second == std::this_thread::get_id()) == thisThread;
    });
  };
  int next = 0;  // the next record's key
  auto commitRecords = [&](Store& s, int commits, int perCommit, size_t bodyBytes) {
    const std::string body(bodyBytes, 'x');
    for (int c = 0; c < commits; ++c) {
      std::vector<Record> batch;
      for (int i = 0; i < perCommit; ++i, ++next) batch.push_back(rec("observation", std::to_string(next), next, body));
      REQUIRE(s.commit(batch).ok());  // a failing checkpoint fails no commit
    }
  };
  {
    SqliteOptions o;
    o.vfs = kFaultyVfs;
    o.checkpointFailed = [&](const std::string& error) {
      std::lock_guard lock(mu);
      told.emplace_back(error, std::this_thread::get_id());
    };
    auto opened = openSqliteStore(path, o);
    REQUIRE(opened.ok());
    Store& s = **opened;
    const auto before = fs::file_size(path);

    // The background thread's checkpoints fail: past 1,000 pages (as in the test above) every
    // commit asks for one, and each fails.
    gFailDatabaseWrites = true;
    commitRecords(s, 80, 40, 2000);
    CHECK(testing::eventually([&] { return walStats(s)->failed >= 1; }, std::chrono::seconds(5)));
    CHECK(walStats(s)->background == 0);
    CHECK(fs::file_size(path) == before);  // nothing reached the database file
    {
      std::lock_guard lock(mu);
      REQUIRE_FALSE(told.empty());
      CHECK(told[0].first.find("checkpoint of the WAL failed: disk I/O error") == 0);
    }
    CHECK(toldFrom(false) >= 1);  // on the checkpoint thread
    CHECK(toldFrom(true) == 0);   // the writer stays under its own bound

    // Once the disk takes writes again, the next commit's checkpoint copies everything over.
    gFailDatabaseWrites = false;
    commitRecords(s, 1, 40, 2000);
    CHECK(testing::eventually([&] { return walStats(s)->background >= 1; }, std::chrono::seconds(5)));
    CHECK(fs::file_size(path) > before + 1000 * 4096);

    // Failing again until the WAL passes the writer's bound of 20,000 pages (80 MB): then the
    // writer's own checkpoint fails too, inside its commit, and the commit still succeeds.
    gFailDatabaseWrites = true;
    for (int round = 0; round < 200 && toldFrom(true) == 0; ++round) commitRecords(s, 1, 100, 8000);
    CHECK(toldFrom(true) >= 1);
    CHECK(walStats(s)->inlined == 0);
    commitRecords(s, 1, 1, 100);  // and the connection commits on after it
    // And once writes succeed, the next commit's checkpoint (the writer's, the WAL being still
    // past its bound, or the thread's, if its last failing one was still running) succeeds.
    const auto done = walStats(s)->background;
    gFailDatabaseWrites = false;
    commitRecords(s, 1, 1, 100);
    CHECK(testing::eventually([&] { return walStats(s)->inlined + walStats(s)->background > done; }, std::chrono::seconds(5)));
  }
  // Every record committed while checkpoints failed is there after a reopen.
  auto again = openSqliteStore(path);
  REQUIRE(again.ok());
  CHECK(*(*again)->contains("observation", "0"));
  CHECK(*(*again)->contains("observation", "3239"));
  CHECK(*(*again)->contains("observation", std::to_string(next - 1)));
  CHECK_FALSE(*(*again)->contains("observation", std::to_string(next)));
  CHECK(walStats(**again)->failed == 0);
}

// SQLite reuses the WAL file from its start after a complete checkpoint instead of shrinking it:
// a WAL that a long reader let grow (no checkpoint copies frames past a reader's snapshot) kept
// its size on disk until the store closed. The writer's journal_size_limit cuts it back at the
// first commit after the restart.
namespace {

/// Frames in the WAL at `path`, as a PASSIVE checkpoint on a connection of its own reports them
/// (a handful once the writer has started the WAL again from its beginning); -1 on failure.
int walFrames(const std::string& path) {
  sqlite3* db = nullptr;
  int frames = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_exec(
        db, "PRAGMA wal_checkpoint(PASSIVE);",
        [](void* out, int n, char** values, char**) {
          if (n >= 2 && values[1] != nullptr) *static_cast<int*>(out) = std::atoi(values[1]);
          return 0;
        },
        &frames, nullptr);
  }
  sqlite3_close_v2(db);
  return frames;
}

/// Grows the WAL past 5 MB while a reader holds a snapshot, lets the reader go, then commits one
/// small record at a time, 10 ms apart, until the WAL file is at most `cutTo` bytes or the writer
/// has started the WAL again from its beginning (seen at two commits; at most 1,000 commits).
/// Returns the WAL file's size at the end.
uint64_t walAfterLongReader(const fs::path& dir, int64_t limit, uint64_t cutTo) {
  const auto path = (dir / "f.db").string();
  const auto wal = path + "-wal";
  SqliteOptions o;
  o.walSizeLimitBytes = limit;
  auto opened = openSqliteStore(path, o);
  REQUIRE(opened.ok());
  Store& s = **opened;
  int next = 0;
  auto commitRecords = [&](int commits, int perCommit, size_t bodyBytes) {
    const std::string body(bodyBytes, 'x');
    for (int c = 0; c < commits; ++c) {
      std::vector<Record> batch;
      for (int i = 0; i < perCommit; ++i, ++next) batch.push_back(rec("observation", std::to_string(next), next, body));
      REQUIRE(s.commit(batch).ok());
    }
  };
  commitRecords(1, 1, 100);
  // A reader's transaction (a report, an API query) holds its snapshot while 3,000 records of
  // 2,000 bytes are committed: about 6 MB of frames, which no checkpoint may copy past it.
  sqlite3* reader = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &reader, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM records;", nullptr, nullptr, nullptr) == SQLITE_OK);
  commitRecords(75, 40, 2000);
  CHECK(fs::file_size(wal) > uint64_t{5} << 20);
  CHECK(walFrames(path) > 1000);
  REQUIRE(sqlite3_exec(reader, "COMMIT;", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close_v2(reader);
  int restartedAt = 0;
  for (int round = 0; round < 1000 && fs::file_size(wal) > cutTo && restartedAt < 2; ++round) {
    commitRecords(1, 1, 100);
    const int frames = walFrames(path);
    if (frames >= 0 && frames < 100) ++restartedAt;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK((fs::file_size(wal) <= cutTo || restartedAt == 2));  // not the bound of 1,000 commits
  CHECK(walStats(s)->failed == 0);
  CHECK(*s.contains("observation", "0"));
  CHECK(*s.contains("observation", std::to_string(next - 1)));
  return fs::file_size(wal);
}

}  // namespace

TEST_CASE("A WAL grown while a reader held its frames is cut back once checkpointed", "[store]") {
  // The default is well above the WAL of normal traffic (checkpoints every 1,000 pages, 4 MiB).
  CHECK(SqliteOptions{}.walSizeLimitBytes >= int64_t{8} << 20);
  constexpr int64_t kLimit = int64_t{1} << 20;
  {
    TempDir dir;
    CHECK(walAfterLongReader(dir.path, kLimit, kLimit) <= static_cast<uint64_t>(kLimit));
  }
  {
    // Without a limit the file keeps the size it grew to, as SQLite leaves it.
    TempDir dir;
    CHECK(walAfterLongReader(dir.path, -1, kLimit) > uint64_t{5} << 20);
  }
}

TEST_CASE("A new store is created at schema version 2: records appended in write order, unique by kind and key",
          "[store]") {
  TempDir dir;
  auto path = (dir.path / "f.db").string();
  {
    auto s = openSqliteStore(path);
    REQUIRE(s.ok());
    REQUIRE((*s)->commit({rec("observation", "late", 30), rec("observation", "early", 10)}).ok());
    REQUIRE((*s)->commit({rec("milestone", "m", 20)}).ok());
    auto again = (*s)->commit({rec("observation", "early", 10, "{\"x\":1}")});
    REQUIRE(again.ok());
    CHECK(*again == std::vector<bool>{false});
  }
  CHECK(userVersion(path) == "2");
  CHECK(tableSql(path).find("WITHOUT ROWID") == std::string::npos);
  CHECK(columnAt(path, "SELECT \"unique\" FROM pragma_index_list('records') WHERE name='records_by_key';") ==
        std::vector<std::string>{"1"});
  // Rows sit in the order they were written, not by key or time.
  CHECK(columnAt(path, "SELECT key FROM records ORDER BY rowid;") ==
        std::vector<std::string>{"late", "early", "m"});
}

TEST_CASE("A version-1 store is converted to version 2 at start with every record kept", "[store]") {
  TempDir dir;
  auto path = (dir.path / "f.db").string();
  writeV1Store(path);
  std::vector<std::string> notices;
  SqliteOptions o;
  o.notice = [&](const std::string& n) { notices.push_back(n); };
  auto s = openSqliteStore(path, o);
  REQUIRE(s.ok());
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].find("store " + path + " converted from schema version 1 to 2") == 0);
  CHECK(userVersion(path) == "2");
  CHECK(tableSql(path).find("WITHOUT ROWID") == std::string::npos);
  CHECK(columnAt(path, "SELECT name FROM sqlite_master WHERE name='records_v1';").empty());
  // Copied in time order, so that later records are appended after them.
  CHECK(columnAt(path, "SELECT key FROM records ORDER BY rowid;") ==
        std::vector<std::string>{"wc/w1", "ms/w1/u1/7/queued", "i1", "a"});
  checkV1Records(**s);
  // Still one record per (kind, key): insert-once keeps, upsert replaces.
  auto w = (*s)->commit({rec("observation", "a", 30, "{\"again\":1}"),
                         rec("incident", "i1", 20, "{\"outcome\":\"recovered\"}", WriteMode::Upsert),
                         rec("observation", "b", 40)});
  REQUIRE(w.ok());
  CHECK(*w == std::vector<bool>{false, true, true});
  CHECK(columnAt(path, "SELECT count(*) FROM records;") == std::vector<std::string>{"5"});
  CHECK(columnAt(path, "SELECT key FROM records ORDER BY rowid DESC LIMIT 1;") == std::vector<std::string>{"b"});
}

TEST_CASE("A version-1 store too large to copy at start, or without room for the copy, is served as it is",
          "[store]") {
  TempDir dir;
  auto path = (dir.path / "f.db").string();
  std::vector<std::string> notices;
  SqliteOptions o;
  o.notice = [&](const std::string& n) { notices.push_back(n); };
  std::string why;
  SECTION("over the size this build converts at start") {
    o.convertLayoutUpTo = 0;
    why = "keeps schema version 1 (0 MiB): converting it to version 2, which writes about 30 % fewer "
          "bytes per record, would copy every record at start, and this build does that only up to 0 MiB";
  }
  SECTION("less free space than two copies") {
    o.freeBytes = [](const std::string& p) -> std::optional<uint64_t> {
      CHECK(p.ends_with("/f.db"));
      return uint64_t{16} << 20;
    };
    why = "keeps schema version 1: converting it to version 2 needs 16 MiB free beside it, and 16 MiB are";
  }
  SECTION("free space unknown") {
    o.freeBytes = [](const std::string&) -> std::optional<uint64_t> { return std::nullopt; };
    why = "keeps schema version 1: converting it to version 2 needs 16 MiB free beside it, and the free "
          "space cannot be read";
  }
  execAt(path, testing::kStoreSchemaV1);  // empty, so that the whole contract can run on it
  auto s = openSqliteStore(path, o);
  REQUIRE(s.ok());
  REQUIRE(notices.size() == 1);
  CHECK(notices[0] == "store " + path + " " + why);
  CHECK(userVersion(path) == "1");
  CHECK(tableSql(path).find("WITHOUT ROWID") != std::string::npos);
  // The version-1 layout keeps the whole contract.
  checkSemantics(**s);
  CHECK(userVersion(path) == "1");
}

TEST_CASE("A version-1 store whose conversion fails is rolled back, loses nothing, and is converted at the next start",
          "[store]") {
  TempDir dir;
  auto path = (dir.path / "f.db").string();
  writeV1Store(path);
  // Another writer holds the store while it opens: the conversion cannot begin.
  sqlite3* other = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &other) == SQLITE_OK);
  REQUIRE(sqlite3_exec(other, "BEGIN IMMEDIATE;", nullptr, nullptr, nullptr) == SQLITE_OK);
  std::vector<std::string> notices;
  SqliteOptions o;
  o.busyTimeoutMs = 50;
  o.notice = [&](const std::string& n) { notices.push_back(n); };
  auto s = openSqliteStore(path, o);
  REQUIRE(sqlite3_exec(other, "ROLLBACK;", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(other);
  REQUIRE(s.ok());
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].find("store " + path +
                        " keeps schema version 1: converting it to version 2 failed (rolled back, nothing lost): ") == 0);
  CHECK(notices[0].find("locked") != std::string::npos);
  CHECK(userVersion(path) == "1");
  checkV1Records(**s);
  (*s).reset();  // closed: the next start
  notices.clear();
  auto again = openSqliteStore(path, o);
  REQUIRE(again.ok());
  REQUIRE(notices.size() == 1);
  CHECK(notices[0].find("converted from schema version 1 to 2") != std::string::npos);
  CHECK(userVersion(path) == "2");
  checkV1Records(**again);
}

TEST_CASE("A read-only open reads a version-1 store without converting it", "[store]") {
  TempDir dir;
  auto path = (dir.path / "f.db").string();
  writeV1Store(path);
  std::vector<std::string> notices;
  SqliteOptions o;
  o.readOnly = true;
  o.notice = [&](const std::string& n) { notices.push_back(n); };
  auto s = openSqliteStore(path, o);
  REQUIRE(s.ok());
  checkV1Records(**s);
  CHECK(notices.empty());
  CHECK(userVersion(path) == "1");
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
  auto ro = openSqliteStore(path, options(true, 100));
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
  auto s = openSqliteStore(path, options(false, 50));
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
