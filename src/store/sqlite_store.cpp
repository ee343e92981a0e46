#include <fcntl.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>

#include "firstwork/core/thread_name.hpp"
#include "firstwork/store/store.hpp"

namespace firstwork::store {
namespace {

/// The operating system's reason behind SQLite's last error (e.g. "No space left on device",
/// "Read-only file system"), which SQLite's own message leaves out; "" when there is none.
std::string systemError(sqlite3* db);

/// Why `path` cannot be opened, asked of the OS directly: SQLite's open error ("unable to open
/// database file") does not say whether the volume is read-only, full, or the directory missing.
std::string openError(const std::string& path, bool readOnly) {
  int fd = ::open(path.c_str(), readOnly ? O_RDONLY : (O_RDWR | O_CREAT | O_EXCL), 0600);
  if (fd >= 0) {
    ::close(fd);
    if (!readOnly) ::unlink(path.c_str());  // created by this probe only
    return {};
  }
  if (errno == EEXIST) fd = ::open(path.c_str(), O_RDWR);
  if (fd >= 0) {
    ::close(fd);
    return {};
  }
  return fmt::format(" ({})", std::strerror(errno));
}

std::string systemError(sqlite3* db) {
  int e = db ? sqlite3_system_errno(db) : 0;
  return e == 0 ? std::string() : fmt::format(" ({})", std::strerror(e));
}


int64_t toMillis(SystemTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
SystemTime fromMillis(int64_t ms) {
  return SystemTime{std::chrono::duration_cast<SystemTime::duration>(std::chrono::milliseconds{ms})};
}

// Schema versions. Both hold the same columns and are read and written by the same statements;
// they differ in layout, which decides what a write costs:
//   1: `records` WITHOUT ROWID, its primary key (kind, key) the table itself, so each record's
//      body sat in a B-tree ordered by key: keys begin with a workload's uid, so every record
//      landed on a random leaf page, which was written to the WAL and again by the checkpoint.
//   2: `records` a rowid table, rows appended in write order (bodies share the pages a step
//      fills), with a unique index on (kind, key): only that index's small entries go to random
//      pages. 30 % fewer bytes to storage per event and fewer, smaller pages (bench/README.md,
//      change 40).
// A new store is created at the current version; an older one is converted at start when that is
// cheap (convertV1ToV2), and otherwise served in its own layout.
constexpr std::string_view kTableV2 =
    "CREATE TABLE records ("
    "  id INTEGER PRIMARY KEY,"
    "  kind TEXT NOT NULL,"
    "  key TEXT NOT NULL,"
    "  cluster TEXT NOT NULL,"
    "  cluster_queue TEXT NOT NULL,"
    "  time_ms INTEGER NOT NULL,"
    "  body TEXT NOT NULL);";
constexpr std::string_view kIndexesV2 =
    "CREATE UNIQUE INDEX records_by_key ON records(kind, key);"
    "CREATE INDEX records_by_time ON records(kind, time_ms);"
    "CREATE INDEX records_by_cluster ON records(kind, cluster, time_ms);";
std::string createV2() { return std::string(kTableV2) + std::string(kIndexesV2); }
// Copies every record into the version-2 table in time order (the rows are then where later
// appends continue) and indexes them once copied; the old table goes, and its pages stay in the
// file as free pages, which new records reuse.
std::string convertV1ToV2() {
  return "ALTER TABLE records RENAME TO records_v1;"
         "DROP INDEX records_by_time;"
         "DROP INDEX records_by_cluster;" +
         std::string(kTableV2) +
         "INSERT INTO records(kind,key,cluster,cluster_queue,time_ms,body)"
         "  SELECT kind,key,cluster,cluster_queue,time_ms,body FROM records_v1"
         "  ORDER BY time_ms, kind, key;"
         "DROP TABLE records_v1;" +
         std::string(kIndexesV2);
}
static_assert(kSchemaVersion == 2 && kOldestSchemaVersion == 1);

/// Bytes free to an unprivileged writer on the file system holding `path`'s directory.
std::optional<uint64_t> freeBytesBeside(const std::string& path) {
  std::string dir = path;
  const auto slash = dir.rfind('/');
  dir = slash == std::string::npos ? "." : slash == 0 ? "/" : dir.substr(0, slash);
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return std::nullopt;
  return static_cast<uint64_t>(st.f_bavail) * static_cast<uint64_t>(st.f_frsize);
}

/// RAII for prepared statements.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { rc_ = sqlite3_prepare_v2(db, sql, -1, &s_, nullptr); }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return rc_ == SQLITE_OK; }
  sqlite3_stmt* get() { return s_; }
  /// Binds `v` without copying it (SQLITE_STATIC): every caller keeps `v` alive until the
  /// statement is reset or finalized, which clears the binding.
  void text(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
  }
  void integer(int i, int64_t v) { sqlite3_bind_int64(s_, i, v); }
  int step() { return sqlite3_step(s_); }
  void reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  std::string column(int i) {
    auto p = sqlite3_column_text(s_, i);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           static_cast<size_t>(sqlite3_column_bytes(s_, i)))
             : std::string();
  }

 private:
  sqlite3_stmt* s_ = nullptr;
  int rc_ = SQLITE_ERROR;
};

/// Runs the WAL's checkpoints on a connection and a thread of its own. SQLite's automatic
/// checkpoint runs inside the commit that takes the WAL past 1,000 pages, so that commit also
/// copies the WAL's pages into the database and syncs it: 6.5 % of the daemon's CPU through
/// benchmark 6a at the full estate, on the path of the commit a waiting scrape needs (the
/// rendering past its bound, bench/README.md, change 51). A PASSIVE checkpoint on another
/// connection blocks neither the writer nor readers. The writer's WAL hook asks for one when the
/// WAL has passed kPages, and checkpoints itself only past kInlinePages (this thread fell behind,
/// or readers hold the WAL's frames), which bounds the WAL as SQLite's default would.
/// A failed checkpoint (of either) is counted and told (SqliteOptions::checkpointFailed); another
/// connection's checkpoint running at the same time is not a failure.
class Checkpointer {
 public:
  static constexpr int kPages = 1000;  // SQLite's own wal_autocheckpoint
  static constexpr int kInlinePages = 20000;

  ~Checkpointer() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
    sqlite3_close_v2(db_);
  }

  explicit Checkpointer(std::function<void(const std::string&)> failed) : failed_(std::move(failed)) {}

  /// Opens the second connection; false when it cannot (the writer then checkpoints itself).
  bool start(const std::string& path, const std::string& vfs) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                        vfs.empty() ? nullptr : vfs.c_str()) != SQLITE_OK ||
        sqlite3_exec(db_, "PRAGMA synchronous=FULL;", nullptr, nullptr, nullptr) != SQLITE_OK) {
      sqlite3_close_v2(db_);
      db_ = nullptr;
      return false;
    }
    thread_ = std::thread([this] { run(); });
    return true;
  }

  void wanted() {
    {
      std::lock_guard lock(mu_);
      wanted_ = true;
    }
    cv_.notify_one();
  }

  WalStats stats() const { return {background_.load(), inline_.load(), failed_count_.load()}; }

  /// The writer's own checkpoint past kInlinePages, on its connection (from its WAL hook).
  void checkpointInline(sqlite3* db, const char* name) {
    const int rc = sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    if (rc == SQLITE_OK) inline_.fetch_add(1);
    else failedWith(db, rc);
  }

 private:
  void run() {
    nameThisThread("fw-checkpoint");
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || wanted_; });
      if (stop_) return;
      wanted_ = false;
      lock.unlock();
      // PASSIVE: as many frames as no reader still needs, without waiting; a busy or failed one
      // is tried again at the next request (the WAL keeps every frame until then).
      const int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
      if (rc == SQLITE_OK) background_.fetch_add(1);
      else failedWith(db_, rc);
      lock.lock();
    }
  }

  /// SQLITE_BUSY: the other connection's checkpoint was running; that one does the work.
  void failedWith(sqlite3* db, int rc) {
    if (rc == SQLITE_BUSY) return;
    failed_count_.fetch_add(1);
    if (failed_)
      failed_(fmt::format("checkpoint of the WAL failed: {} ({})", sqlite3_errmsg(db), sqlite3_errstr(rc)));
  }

  sqlite3* db_ = nullptr;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool wanted_ = false;
  std::atomic<uint64_t> background_{0};
  std::atomic<uint64_t> inline_{0};
  std::atomic<uint64_t> failed_count_{0};
  std::function<void(const std::string&)> failed_;
};

class SqliteStore final : public Store {
 public:
  SqliteStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  ~SqliteStore() override {
    checkpointer_.reset();  // its connection closes first: the writer's close checkpoints the rest
    // Finalized before the connection closes (close_v2 would otherwise keep it as a zombie).
    insertOnce_.reset();
    upsert_.reset();
    remove_.reset();
    contains_.reset();
    sqlite3_close_v2(db_);
  }

  Status init(const SqliteOptions& options) {
    sqlite3_busy_timeout(db_, options.busyTimeoutMs);
    if (!options.readOnly) {
      // WAL + synchronous=FULL: a committed transaction is on disk before commit() returns.
      if (auto s = exec("PRAGMA journal_mode=WAL;"); !s) return s;
      if (auto s = exec("PRAGMA synchronous=FULL;"); !s) return s;
      // Per connection: the writer's, which restarts the WAL after a complete checkpoint and
      // cuts the file back at that restart's first commit.
      if (auto s = exec(fmt::format("PRAGMA journal_size_limit={};", options.walSizeLimitBytes)); !s)
        return s;
    }
    auto version = pragmaInt("user_version");
    if (!version) return Error{version.error()};
    if (*version > kSchemaVersion)
      return makeError(fmt::format("store {}: schema version {} is newer than this build ({})",
                                   path_, *version, kSchemaVersion));
    if (*version < kOldestSchemaVersion && options.readOnly)
      return makeError(fmt::format("store {}: schema version {} needs a migration; open it once "
                                   "with `firstworkd run` first", path_, *version));
    if (options.readOnly) return Ok{};
    if (*version == 0) {
      if (auto s = create(); !s) return s;
    } else if (*version == 1) {
      convertV1(options);
    }
    if (options.checkpointInBackground) {
      auto cp = std::make_unique<Checkpointer>(options.checkpointFailed);
      if (cp->start(path_, options.vfs)) {
        checkpointer_ = std::move(cp);
        sqlite3_wal_hook(db_, &SqliteStore::walHook, this);  // replaces the automatic checkpoint
      }
    }
    return Ok{};
  }

  const Checkpointer* checkpointer() const { return checkpointer_.get(); }

  // Store
  Result<std::vector<bool>> commit(const std::vector<Record>& records) override {
    std::vector<bool> changed;
    changed.reserve(records.size());
    if (records.empty()) return changed;
    // The three write statements are prepared once per store, not per transaction: at a steady
    // few hundred events/s the daemon commits up to 20 times a second, and compiling the SQL
    // was an eighth of each commit's CPU (bench/README.md, change 13).
    Stmt* insertOnce = statement(insertOnce_,
                                 "INSERT OR IGNORE INTO records(kind,key,cluster,cluster_queue,time_ms,body) "
                                 "VALUES(?,?,?,?,?,?);");
    Stmt* upsert = statement(
        upsert_,
        "INSERT INTO records(kind,key,cluster,cluster_queue,time_ms,body) VALUES(?,?,?,?,?,?) "
        "ON CONFLICT(kind,key) DO UPDATE SET cluster=excluded.cluster, "
        "cluster_queue=excluded.cluster_queue, time_ms=excluded.time_ms, body=excluded.body "
        "WHERE records.body IS NOT excluded.body;");
    Stmt* remove = statement(remove_, "DELETE FROM records WHERE kind=?1 AND key=?2;");
    if (insertOnce == nullptr || upsert == nullptr || remove == nullptr) return error("prepare write");
    if (auto s = exec("BEGIN IMMEDIATE;"); !s) return Error{s.error()};
    for (const auto& r : records) {
      Stmt& st = r.mode == WriteMode::InsertOnce ? *insertOnce
                 : r.mode == WriteMode::Upsert   ? *upsert
                                                 : *remove;
      st.text(1, r.kind);
      st.text(2, r.key);
      if (r.mode != WriteMode::Remove) {
        st.text(3, r.cluster);
        st.text(4, r.clusterQueue);
        st.integer(5, toMillis(r.time));
        st.text(6, r.body);
      }
      const int rc = st.step();
      // Reset at once (not before the next use): a kept statement must not hold its bindings'
      // copies or stay active past the transaction.
      st.reset();
      if (rc != SQLITE_DONE) {
        auto e = error(fmt::format("write {} {}", r.kind, r.key));
        rollback();
        return e;
      }
      changed.push_back(sqlite3_changes(db_) > 0);
    }
    if (auto s = exec("COMMIT;"); !s) {
      rollback();
      return Error{s.error()};
    }
    return changed;
  }

  Result<std::vector<Record>> query(const Query& q) override {
    std::string sql =
        "SELECT kind,key,cluster,cluster_queue,time_ms,body FROM records WHERE kind=?1";
    if (!q.cluster.empty()) sql += " AND cluster=?2";
    if (!q.clusterQueue.empty()) sql += " AND cluster_queue=?3";
    if (q.since) sql += " AND time_ms>=?4";
    if (q.until) sql += " AND time_ms<?5";
    // A key range (the primary key's index) rather than LIKE, whose wildcards keys may contain.
    if (!q.keyPrefix.empty()) sql += " AND key>=?7 AND key<?7||char(1114111)";
    if (!q.keySuffix.empty()) sql += " AND substr(key,-length(?8))=?8";
    sql += " ORDER BY time_ms, key LIMIT ?6;";
    Stmt st(db_, sql.c_str());
    if (!st.ok()) return error("prepare query");
    st.text(1, q.kind);
    if (!q.cluster.empty()) st.text(2, q.cluster);
    if (!q.clusterQueue.empty()) st.text(3, q.clusterQueue);
    if (q.since) st.integer(4, toMillis(*q.since));
    if (q.until) st.integer(5, toMillis(*q.until));
    st.integer(6, static_cast<int64_t>(q.limit));
    if (!q.keyPrefix.empty()) st.text(7, q.keyPrefix);
    if (!q.keySuffix.empty()) st.text(8, q.keySuffix);
    std::vector<Record> out;
    int rc;
    while ((rc = st.step()) == SQLITE_ROW) {
      Record r;
      r.kind = st.column(0);
      r.key = st.column(1);
      r.cluster = st.column(2);
      r.clusterQueue = st.column(3);
      r.time = fromMillis(sqlite3_column_int64(st.get(), 4));
      r.body = st.column(5);
      out.push_back(std::move(r));
    }
    if (rc != SQLITE_DONE) return error("query");
    return out;
  }

  Result<bool> contains(const std::string& kind, const std::string& key) override {
    // Asked for every incident and reclaim record a step writes (the daemon's closedAlready).
    Stmt* st = statement(contains_, "SELECT 1 FROM records WHERE kind=? AND key=?;");
    if (st == nullptr) return error("prepare lookup");
    st->text(1, kind);
    st->text(2, key);
    const int rc = st->step();
    st->reset();
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return error("lookup");
  }

  Result<uint64_t> prune(SystemTime cutoff, const std::vector<std::string>& keepKinds) override {
    std::string sql = "DELETE FROM records WHERE time_ms<?";
    for (size_t i = 0; i < keepKinds.size(); ++i) sql += " AND kind<>?";
    sql += ";";
    Stmt st(db_, sql.c_str());
    if (!st.ok()) return error("prepare prune");
    st.integer(1, toMillis(cutoff));
    for (size_t i = 0; i < keepKinds.size(); ++i) st.text(static_cast<int>(i) + 2, keepKinds[i]);
    if (st.step() != SQLITE_DONE) return error("prune");
    return static_cast<uint64_t>(sqlite3_changes(db_));
  }

 private:
  /// A new store: the current layout and version in one transaction.
  Status create() {
    if (auto s = migrate(createV2(), kSchemaVersion); !s)
      return makeError(fmt::format("store {}: creating schema version {} failed: {}", path_,
                                   kSchemaVersion, s.error()));
    return Ok{};
  }

  /// Runs `sql` and sets the schema version to `version` in one transaction; rolled back on error.
  Status migrate(const std::string& sql, int version) {
    auto s = exec("BEGIN IMMEDIATE;");
    if (s) s = exec(sql);
    if (s) s = exec(fmt::format("PRAGMA user_version={};", version));
    if (s) s = exec("COMMIT;");
    if (!s) rollback();
    return s;
  }

  /// Converts a version-1 store to version 2 when that is cheap: the copy runs before the daemon
  /// answers its health checks (a liveness probe gives it about 30 s) and needs room for a second
  /// copy of the records while the first still exists. A store over `convertLayoutUpTo`, or
  /// without that room, stays at version 1, which is served as before (a notice says why); so
  /// does one whose conversion fails (rolled back: nothing is lost). Tried again at every start.
  void convertV1(const SqliteOptions& options) {
    auto notice = [&](const std::string& what) {
      if (options.notice) options.notice(what);
    };
    const auto pages = pragmaInt("page_count");
    const auto pageSize = pragmaInt("page_size");
    if (!pages || !pageSize) {
      notice(fmt::format("store {} keeps schema version 1: its size cannot be read", path_));
      return;
    }
    const uint64_t bytes = static_cast<uint64_t>(*pages) * static_cast<uint64_t>(*pageSize);
    const uint64_t mib = uint64_t{1} << 20;
    if (bytes > options.convertLayoutUpTo) {
      notice(fmt::format("store {} keeps schema version 1 ({} MiB): converting it to version 2, "
                         "which writes about 30 % fewer bytes per record, would copy every record "
                         "at start, and this build does that only up to {} MiB",
                         path_, bytes / mib, options.convertLayoutUpTo / mib));
      return;
    }
    const auto freeBytes = options.freeBytes ? options.freeBytes(path_) : freeBytesBeside(path_);
    const uint64_t needed = 2 * bytes + 16 * mib;  // the copy, and the WAL that holds it
    if (!freeBytes || *freeBytes < needed) {
      notice(fmt::format("store {} keeps schema version 1: converting it to version 2 needs {} MiB "
                         "free beside it, {}",
                         path_, needed / mib,
                         freeBytes ? fmt::format("and {} MiB are", *freeBytes / mib)
                                   : std::string("and the free space cannot be read")));
      return;
    }
    const auto started = std::chrono::steady_clock::now();
    if (auto s = migrate(convertV1ToV2(), 2); !s) {
      notice(fmt::format("store {} keeps schema version 1: converting it to version 2 failed "
                         "(rolled back, nothing lost): {}", path_, s.error()));
      return;
    }
    notice(fmt::format("store {} converted from schema version 1 to 2 ({} MiB) in {:.1f} s", path_,
                       bytes / mib,
                       std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()));
  }

  Result<int64_t> pragmaInt(const char* name) {
    Stmt st(db_, fmt::format("PRAGMA {};", name).c_str());
    if (!st.ok() || st.step() != SQLITE_ROW) return error(fmt::format("read {}", name));
    return static_cast<int64_t>(sqlite3_column_int64(st.get(), 0));
  }

  Status exec(const std::string& sql) {
    char* msg = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
      std::string m = fmt::format("store {}: {}", path_, msg ? msg : sqlite3_errmsg(db_));
      sqlite3_free(msg);
      return makeError(m);
    }
    return Ok{};
  }
  void rollback() {
    // Best effort: a failed ROLLBACK leaves SQLite to roll back on the next open.
    sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
  }
  Error error(const std::string& what) {
    return makeError(fmt::format("store {}: {}: {}{} (sqlite code {})", path_, what,
                                 sqlite3_errmsg(db_), systemError(db_), sqlite3_extended_errcode(db_)));
  }

  /// The statement kept in `slot`, prepared on first use; nullptr when it cannot be prepared
  /// (the next call tries again).
  Stmt* statement(std::unique_ptr<Stmt>& slot, const char* sql) {
    if (!slot) {
      auto st = std::make_unique<Stmt>(db_, sql);
      if (!st->ok()) return nullptr;
      slot = std::move(st);
    }
    return slot.get();
  }

  /// After every commit, with the WAL's size in pages (sqlite3_wal_hook).
  static int walHook(void* self, sqlite3* db, const char* name, int pages) {
    auto& store = *static_cast<SqliteStore*>(self);
    if (pages >= Checkpointer::kInlinePages) {
      store.checkpointer_->checkpointInline(db, name);
    } else if (pages >= Checkpointer::kPages) {
      store.checkpointer_->wanted();
    }
    return SQLITE_OK;
  }

  sqlite3* db_;
  std::string path_;
  std::unique_ptr<Checkpointer> checkpointer_;  // writable stores with checkpointInBackground
  std::unique_ptr<Stmt> insertOnce_;
  std::unique_ptr<Stmt> upsert_;
  std::unique_ptr<Stmt> remove_;
  std::unique_ptr<Stmt> contains_;
};

class MemoryStore final : public Store {
 public:
  Result<std::vector<bool>> commit(const std::vector<Record>& records) override {
    std::vector<bool> changed;
    for (const auto& r : records) {
      if (r.mode == WriteMode::Remove) {
        changed.push_back(rows_.erase({r.kind, r.key}) > 0);
        continue;
      }
      auto [it, inserted] = rows_.try_emplace({r.kind, r.key}, r);
      if (!inserted && r.mode == WriteMode::Upsert && it->second.body != r.body) {
        it->second = r;
        changed.push_back(true);
      } else {
        changed.push_back(inserted);
      }
    }
    return changed;
  }
  Result<std::vector<Record>> query(const Query& q) override {
    std::vector<Record> out;
    for (const auto& [k, r] : rows_) {
      if (r.kind != q.kind) continue;
      if (!q.cluster.empty() && r.cluster != q.cluster) continue;
      if (!q.clusterQueue.empty() && r.clusterQueue != q.clusterQueue) continue;
      if (q.since && r.time < *q.since) continue;
      if (q.until && r.time >= *q.until) continue;
      if (!r.key.starts_with(q.keyPrefix) || !r.key.ends_with(q.keySuffix)) continue;
      out.push_back(r);
    }
    std::sort(out.begin(), out.end(), [](const Record& a, const Record& b) {
      return std::tie(a.time, a.key) < std::tie(b.time, b.key);
    });
    if (out.size() > q.limit) out.resize(q.limit);
    return out;
  }
  Result<bool> contains(const std::string& kind, const std::string& key) override {
    return rows_.count({kind, key}) > 0;
  }
  Result<uint64_t> prune(SystemTime cutoff, const std::vector<std::string>& keepKinds) override {
    uint64_t n = 0;
    for (auto it = rows_.begin(); it != rows_.end();) {
      if (it->second.time < cutoff && std::find(keepKinds.begin(), keepKinds.end(),
                                                it->second.kind) == keepKinds.end()) {
        it = rows_.erase(it);
        ++n;
      } else {
        ++it;
      }
    }
    return n;
  }

 private:
  std::map<std::pair<std::string, std::string>, Record> rows_;
};

}  // namespace

Result<StorePtr> openSqliteStore(const std::string& path, const SqliteOptions& options) {
  sqlite3* db = nullptr;
  int flags = options.readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  flags |= SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, options.vfs.empty() ? nullptr : options.vfs.c_str()) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) + openError(path, options.readOnly) : "out of memory";
    sqlite3_close_v2(db);
    return makeError(fmt::format("store {}: cannot open: {}", path, msg));
  }
  auto store = std::make_unique<SqliteStore>(db, path);
  if (auto s = store->init(options); !s) return Error{s.error()};
  return StorePtr(std::move(store));
}

StorePtr makeMemoryStore() { return std::make_unique<MemoryStore>(); }

std::optional<WalStats> walStats(const Store& store) {
  const auto* sqlite = dynamic_cast<const SqliteStore*>(&store);
  if (sqlite == nullptr || sqlite->checkpointer() == nullptr) return std::nullopt;
  return sqlite->checkpointer()->stats();
}

}  // namespace firstwork::store
