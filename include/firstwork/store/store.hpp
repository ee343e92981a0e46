#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/core/result.hpp"

namespace firstwork::store {

/// How a record is written when its (kind, key) already exists.
enum class WriteMode : uint8_t {
  /// Keep the stored record; the write reports "not new". Used for facts that never change once
  /// recorded (milestones, histogram observations): a restart that re-derives them is a no-op.
  InsertOnce,
  /// Replace the stored record (e.g. an incident that goes from open to recovered).
  Upsert,
  /// Delete the stored record (kind, key) if there is one; the write reports whether there was.
  /// For state that matters only while it lasts (an admission cycle's open state).
  Remove,
};

/// One durable fact. `kind` is a small fixed vocabulary (`milestone`, `observation`, `incident`,
/// `reclaim`, ...); `key` is the stable identity the engine derives from object identities, so the
/// same fact re-derived after a restart has the same key. `body` is the JSON the API serves.
struct Record {
  std::string kind;
  std::string key;
  std::string cluster;
  std::string clusterQueue;
  SystemTime time{};  // the fact's event time (filters `since`/`until`, retention)
  std::string body;   // JSON object
  WriteMode mode = WriteMode::InsertOnce;
};

struct Query {
  std::string kind;
  std::string cluster;       // empty: any
  std::string clusterQueue;  // empty: any
  std::optional<SystemTime> since;
  std::optional<SystemTime> until;
  size_t limit = 10000;
  std::string keyPrefix;  // empty: any key
  std::string keySuffix;  // empty: any key
};

/// Durable record of milestones, observations, incidents and reclaims (seam; SQLite in
/// production, memory in unit tests). Not thread-safe: one owner thread per instance (the
/// daemon reads on its event loop and writes through a StoreThread, each with an instance of
/// its own; the report command opens its own read-only instance).
class Store {
 public:
  virtual ~Store() = default;
  /// Writes all records in one transaction (all or nothing). On success returns, per record,
  /// whether it was new (InsertOnce) or changed (Upsert). Errors (disk full, read-only file)
  /// leave the store unchanged; the caller keeps the records and retries.
  virtual Result<std::vector<bool>> commit(const std::vector<Record>& records) = 0;
  /// Records of one kind, ordered by time then key.
  virtual Result<std::vector<Record>> query(const Query& query) = 0;
  virtual Result<bool> contains(const std::string& kind, const std::string& key) = 0;
  /// Deletes records whose time is before `cutoff`, except those of the kinds in `keepKinds`
  /// (state that stays current however old its time: it is replaced or removed, never aged out);
  /// returns how many.
  virtual Result<uint64_t> prune(SystemTime cutoff, const std::vector<std::string>& keepKinds) = 0;
};

using StorePtr = std::unique_ptr<Store>;

struct SqliteOptions {
  bool readOnly = false;
  int busyTimeoutMs = 5000;
  /// A store of an older layout (schema version 1) is converted at start only up to this size:
  /// the conversion copies every record before the daemon answers its health checks.
  uint64_t convertLayoutUpTo = uint64_t{256} << 20;
  /// Told what the opening did or left undone that an operator should know (a conversion, or
  /// why none was made). Optional.
  std::function<void(const std::string&)> notice;
  /// Free bytes on the store's file system (tests); empty: asked of the OS.
  std::function<std::optional<uint64_t>(const std::string& path)> freeBytes;
  /// Checkpoints the WAL on a connection and thread of their own instead of inside the commit
  /// that takes it past 1,000 pages (the writer still does past 20,000). Writable stores only.
  bool checkpointInBackground = true;
  /// Told when one of those checkpoints fails, with SQLite's message, on the thread that ran it
  /// (the checkpoint thread, or the committing thread past the hard bound). Commits go on; the
  /// WAL keeps every frame and grows until a checkpoint succeeds (one is asked for at every
  /// commit past 1,000 pages). Optional; must be thread-safe.
  std::function<void(const std::string& error)> checkpointFailed;
  /// What the WAL file is cut back to when a checkpoint has emptied it (SQLite's
  /// journal_size_limit, writable stores). SQLite reuses the WAL file from its start rather than
  /// shrink it, so a WAL that a long reader (a report over a large store) or failing checkpoints
  /// let grow past the usual 1,000 pages (4 MiB) kept that size on disk until the store closed.
  /// Well above the usual size, so that a WAL of normal traffic is never cut; negative: no limit.
  int64_t walSizeLimitBytes = int64_t{16} << 20;
  /// The SQLite VFS every connection of the store opens its files with; empty: SQLite's default.
  /// Tests inject I/O faults through one.
  std::string vfs;
};

/// Checkpoints of a store that runs them in the background: those its thread made, those the
/// writer made itself because the WAL passed the hard bound, and those of either that failed.
struct WalStats {
  uint64_t background = 0;
  uint64_t inlined = 0;
  uint64_t failed = 0;
};

/// The schema version this build creates, and the oldest it reads and writes (see the versions in
/// src/store/sqlite_store.cpp: they hold the same records in different layouts).
inline constexpr int kSchemaVersion = 2;
inline constexpr int kOldestSchemaVersion = 1;

/// Opens (creating if needed) an SQLite store in WAL mode with synchronous=FULL, so every
/// committed transaction survives a SIGKILL or power loss. Converts an older schema forward when
/// that is cheap (SqliteOptions::convertLayoutUpTo) and otherwise serves it as it is; refuses a
/// newer schema version than this build knows.
Result<StorePtr> openSqliteStore(const std::string& path, const SqliteOptions& options = {});

/// An in-memory store with the same semantics, for unit tests.
StorePtr makeMemoryStore();

/// The background checkpoints of an SQLite store opened with checkpointInBackground; nullopt for
/// any other store (read-only, in memory, or one whose checkpoint connection could not open).
std::optional<WalStats> walStats(const Store& store);

}  // namespace firstwork::store
