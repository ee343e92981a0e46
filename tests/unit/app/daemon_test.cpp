// The daemon's start path, in process: it opens its store and restores from it before any cluster
// answers (the clusters here point at a port nobody listens on; the daemon is stopped at once).
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <future>
#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <sstream>
#include <thread>

#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include "detail/daemon_config.hpp"
#include "firstwork/app/daemon.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "firstwork/http/httplib.hpp"
#include "firstwork/log/log.hpp"
#include "firstwork/metrics/self_metrics.hpp"
#include "firstwork/records/records.hpp"
#include "firstwork/sim/api_server.hpp"
#include "firstwork/store/store.hpp"
#include "fakes/manual_clock.hpp"
#include "support/process_threads.hpp"
#include "support/store_v1.hpp"
#include "support/subprocess.hpp"
#include "support/temp_dir.hpp"

using namespace firstwork;

namespace {

config::ClusterConfig cluster(const std::string& name, config::ClusterRole role) {
  config::ClusterConfig c;
  c.name = name;
  c.role = role;
  if (role == config::ClusterRole::Worker) c.multiKueueClusterName = name;
  return c;
}

/// Kueue's view of `worker` as the daemon stores it (records::toRecords).
store::Record workerConnection(const std::string& worker, const char* since) {
  engine::Outputs out;
  engine::WorkerConnectionRecord c;
  c.worker = worker;
  c.managementCluster = "manager";
  c.known = true;
  c.active = true;
  c.since = parseRfc3339(since).value();
  c.observedAt = c.since;
  out.workerConnections.push_back(c);
  return records::toRecords(out, log::Redactor()).at(0).record;
}

/// Every log line goes to `out` while it lives.
struct LogCapture {
  std::ostringstream out;
  LogCapture() { log::logToStream(out); }
  ~LogCapture() { log::logToStderr(); }
};

/// Log lines of `text` (one JSON object each).
std::vector<nlohmann::json> logLines(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object()) lines.push_back(std::move(j));
  }
  return lines;
}

/// Starts a daemon with `options`, calls `whileRunning`, and stops it; returns its log lines.
std::vector<nlohmann::json> startAndStop(app::DaemonOptions options,
                                         const std::function<void()>& whileRunning = {}) {
  LogCapture logs;
  {
    app::Daemon daemon(std::move(options));
    auto started = daemon.start();
    REQUIRE(started.ok());
    if (whileRunning) whileRunning();
    daemon.stop();
  }
  return logLines(logs.out.str());
}

/// Options for a daemon on the store `db` whose clusters never answer (nothing listens).
app::DaemonOptions optionsFor(const std::string& db, std::vector<config::ClusterConfig> clusters) {
  app::DaemonOptions o;
  o.config.store.path = db;
  o.config.server.listen = "127.0.0.1:0";
  o.config.clusters = std::move(clusters);
  for (const auto& c : o.config.clusters) {
    kube::RestConfig rest;
    rest.server = "http://127.0.0.1:1";
    o.restConfigs.emplace(c.name, rest);
  }
  return o;
}

/// Writes `records` to the store `db` (created if absent) before a daemon opens it.
void seed(const std::string& db, const std::vector<store::Record>& records) {
  auto s = store::openSqliteStore(db);
  REQUIRE(s.ok());
  REQUIRE((*s)->commit(records).ok());
}

/// Writes `records` to a new store `db` in the layout of schema version 1 (stores written before
/// version 2: WITHOUT ROWID, keyed by kind and key), as that build left it.
void seedVersion1(const std::string& db, const std::vector<store::Record>& records) {
  sqlite3* h = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &h) == SQLITE_OK);
  REQUIRE(sqlite3_exec(h, (std::string("PRAGMA journal_mode=WAL;") + testing::kStoreSchemaV1).c_str(),
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(h, "INSERT INTO records VALUES(?,?,?,?,?,?);", -1, &st, nullptr) == SQLITE_OK);
  for (const auto& r : records) {
    sqlite3_bind_text(st, 1, r.kind.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, r.key.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, r.cluster.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 4, r.clusterQueue.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 5, std::chrono::duration_cast<std::chrono::milliseconds>(r.time.time_since_epoch()).count());
    sqlite3_bind_text(st, 6, r.body.c_str(), -1, SQLITE_TRANSIENT);
    CHECK(sqlite3_step(st) == SQLITE_DONE);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  sqlite3_close(h);
}

/// The keys of the records of `kind` in the store `db`.
std::vector<std::string> storedKeys(const std::string& db, const char* kind) {
  auto s = store::openSqliteStore(db);
  REQUIRE(s.ok());
  store::Query q;
  q.kind = kind;
  auto rows = (*s)->query(q);
  REQUIRE(rows.ok());
  std::vector<std::string> keys;
  for (const auto& r : *rows) keys.push_back(r.key);
  return keys;
}

std::string ago(std::chrono::seconds s) {
  return formatRfc3339(std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now()) - s);
}

/// One node of 8 GPUs (capacity: a GPU-seconds record when the daemon stops).
void seedNode(sim::ApiServer& s) {
  const std::string day = ago(std::chrono::hours(24));
  s.create("nodes", R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"gpu-node-0","uid":"node-uid-0",
    "creationTimestamp":")" + day + R"("},"status":{"allocatable":{"nvidia.com/gpu":"8"},
    "conditions":[{"type":"Ready","status":"True","lastTransitionTime":")" + day + R"("}]}})");
}

/// research/train-<i> (uid wl-uid-<i>), admitted 9 minutes ago: its milestones are records.
void seedWorkload(sim::ApiServer& s, int i = 0) {
  using namespace std::chrono_literals;
  const std::string n = std::to_string(i);
  s.create("workloads", R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"name":"train-)" + n + R"(",
    "namespace":"research","uid":"wl-uid-)" + n + R"(","creationTimestamp":")" + ago(600s) + R"("},
    "spec":{"queueName":"research-lq","podSets":[{"name":"main","count":1,"template":{"spec":{"containers":
      [{"name":"trainer","resources":{"requests":{"nvidia.com/gpu":"4"}}}]}}}]},
    "status":{"admission":{"clusterQueue":"train-cq"},"conditions":[
      {"type":"QuotaReserved","status":"True","reason":"QuotaReserved","lastTransitionTime":")" + ago(540s) + R"("},
      {"type":"Admitted","status":"True","reason":"Admitted","lastTransitionTime":")" + ago(540s) + R"("}]}})");
}

/// A standalone cluster "gpu-a" served by `server`, on the store `db`.
app::DaemonOptions optionsFor(const std::string& db, const sim::ApiServer& server) {
  auto o = optionsFor(db, {cluster("gpu-a", config::ClusterRole::Standalone)});
  o.restConfigs["gpu-a"].server = server.baseUrl();
  o.restConfigs["gpu-a"].token = server.token();
  o.tickInterval = std::chrono::milliseconds(100);
  return o;
}

/// Another writer holding the store's write lock (a backup, an operator's sqlite3 shell).
struct WriteLock {
  sqlite3* db = nullptr;
  explicit WriteLock(const std::string& path) {
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    // The daemon may be in a write of its own (a commit, a WAL checkpoint): wait for it as
    // another writer would, where BEGIN IMMEDIATE answered SQLITE_BUSY at once (seen once in
    // CI's ASan build, and the connection then leaked).
    sqlite3_busy_timeout(db, 10'000);
    const int rc = sqlite3_exec(db, "BEGIN IMMEDIATE;", nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) release();
    REQUIRE(rc == SQLITE_OK);
  }
  void release() {
    if (!db) return;
    sqlite3_exec(db, "ROLLBACK;", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    db = nullptr;
  }
  ~WriteLock() { release(); }
};

const nlohmann::json* findLine(const std::vector<nlohmann::json>& lines, const std::string& msg) {
  for (const auto& l : lines)
    if (l.value("msg", "") == msg) return &l;
  return nullptr;
}

}  // namespace

TEST_CASE("The daemon's threads carry names a process list shows", "[app][daemon]") {
  testing::TempDir dir("firstwork-daemon-test");
  std::vector<std::string> names;
  const auto count = [&](const char* n) { return std::count(names.begin(), names.end(), n); };
  startAndStop(optionsFor((dir.path / "fw.db").string(), {cluster("gpu-a", config::ClusterRole::Standalone)}),
               [&] {
                 // Each thread names itself when it starts, and the HTTP pool's threads start
                 // after the accept thread: start() may return before all of that has run.
                 const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
                 for (;;) {
                   names = testing::threadNames();
                   const bool all = count("fw-loop") == 1 && count("fw-store") == 1 && count("fw-checkpoint") == 1 &&
                                    count("fw-decode") == 1 && count("fw-http") >= 2;
                   if (all || std::chrono::steady_clock::now() >= deadline) break;
                   std::this_thread::sleep_for(std::chrono::milliseconds(5));
                 }
               });
  CHECK(count("fw-loop") == 1);   // the event loop
  CHECK(count("fw-store") == 1);  // the store's commits
  CHECK(count("fw-checkpoint") == 1);  // the store's WAL checkpoints
  CHECK(count("fw-decode") == 1);  // the clusters' LIST pages
  // The HTTP server's accept thread and its pool (which takes the accept thread's name).
  CHECK(count("fw-http") >= 2);
}

TEST_CASE("At start the daemon deletes the stored views of workers no longer configured",
          "[app][daemon]") {
  testing::TempDir dir("firstwork-daemon-test");
  const std::string db = (dir.path / "firstwork.db").string();
  // Another kind of record of the same cluster: not touched.
  const store::Record incident{records::kIncidentKind, "incident/old-a/multikueue/1", "old-a", "",
                               parseRfc3339("2026-05-01T08:00:00Z").value(), "{}",
                               store::WriteMode::Upsert};
  seed(db, {workerConnection("old-a", "2026-05-01T08:00:00Z"),
            workerConnection("worker-1", "2026-05-01T09:00:00Z"),
            workerConnection("old-b", "2026-05-01T10:00:00Z"),
            workerConnection("worker-2", "2026-05-01T11:00:00Z"), incident});
  app::DaemonOptions o = optionsFor(db, {cluster("manager", config::ClusterRole::Management),
                                         cluster("worker-1", config::ClusterRole::Worker),
                                         cluster("worker-2", config::ClusterRole::Worker)});
  // Shard 0 of 2 owns worker-2 but not worker-1 (FNV-1a 64 of the names: odd, even); every shard
  // watches the management cluster, so worker-1's view is kept here too.
  o.config.shard = {0, 2};
  REQUIRE_FALSE(config::shardOwnsCluster(o.config.shard, o.config.clusters[1]));
  REQUIRE(config::shardOwnsCluster(o.config.shard, o.config.clusters[2]));

  const auto lines = startAndStop(o);
  const char* const removed = "removed the stored views of workers no longer configured";
  const auto* line = findLine(lines, removed);
  REQUIRE(line);
  CHECK((*line)["level"] == "info");
  CHECK((*line)["count"] == 2);
  CHECK((*line)["workers"] == "old-a,old-b");  // in the store's order: by time

  auto stored = [&](const char* kind) { return storedKeys(db, kind); };
  CHECK(stored(records::kWorkerConnectionKind) ==
        std::vector<std::string>{"wc/worker-1", "wc/worker-2"});
  CHECK(stored(records::kIncidentKind) == std::vector<std::string>{"incident/old-a/multikueue/1"});

  // The next start finds nothing to delete, and says nothing about it.
  CHECK_FALSE(findLine(startAndStop(o), removed));
  CHECK(stored(records::kWorkerConnectionKind) ==
        std::vector<std::string>{"wc/worker-1", "wc/worker-2"});
}

// The store is locked by another writer (a backup, an operator's sqlite3 shell) while the daemon
// starts: the deletion fails after the busy timeout, is logged, and nothing is lost; the daemon
// runs on and the next start deletes them.
TEST_CASE("A failed deletion of unconfigured workers' views is logged and retried at the next start",
          "[app][daemon]") {
  testing::TempDir dir("firstwork-daemon-test");
  const std::string db = (dir.path / "firstwork.db").string();
  seed(db, {workerConnection("old-a", "2026-05-01T08:00:00Z"),
            workerConnection("worker-1", "2026-05-01T09:00:00Z")});
  const auto o = optionsFor(db, {cluster("manager", config::ClusterRole::Management),
                                 cluster("worker-1", config::ClusterRole::Worker)});
  WriteLock lock(db);
  // Released while the daemon runs: its shutdown writes are not held up as well.
  const auto locked = startAndStop(o, [&] { lock.release(); });
  const auto* failed = findLine(locked, "removing the stored views of unconfigured workers failed");
  REQUIRE(failed);
  CHECK((*failed)["level"] == "error");
  CHECK((*failed)["workers"] == "old-a");
  CHECK_FALSE((*failed).value("error", "").empty());
  const char* const removed = "removed the stored views of workers no longer configured";
  CHECK_FALSE(findLine(locked, removed));
  CHECK(storedKeys(db, records::kWorkerConnectionKind) ==
        std::vector<std::string>{"wc/old-a", "wc/worker-1"});

  const auto next = startAndStop(o);
  const auto* line = findLine(next, removed);
  REQUIRE(line);
  CHECK((*line)["count"] == 1);
  CHECK(storedKeys(db, records::kWorkerConnectionKind) == std::vector<std::string>{"wc/worker-1"});
}

TEST_CASE("A store of schema version 1 is converted at start, the log says so, and its records serve as before",
          "[app][daemon]") {
  testing::TempDir dir("firstwork-daemon-test");
  const std::string db = (dir.path / "firstwork.db").string();
  seedVersion1(db, {workerConnection("old-a", "2026-05-01T08:00:00Z"),
                    workerConnection("worker-1", "2026-05-01T09:00:00Z")});
  const auto o = optionsFor(db, {cluster("manager", config::ClusterRole::Management),
                                 cluster("worker-1", config::ClusterRole::Worker)});
  const auto lines = startAndStop(o);
  const auto* layout = findLine(lines, "store layout");
  REQUIRE(layout);
  CHECK((*layout)["level"] == "info");
  CHECK((*layout).value("detail", "").find("store " + db + " converted from schema version 1 to 2 (0 MiB) in ") == 0);
  // The converted records are read as before: the unconfigured worker's view is found and deleted.
  const auto* removed = findLine(lines, "removed the stored views of workers no longer configured");
  REQUIRE(removed);
  CHECK((*removed)["workers"] == "old-a");
  CHECK(storedKeys(db, records::kWorkerConnectionKind) == std::vector<std::string>{"wc/worker-1"});
  // Converted once: the next start has nothing to say about the layout.
  CHECK_FALSE(findLine(startAndStop(o), "store layout"));
}

namespace {

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

size_t countWithPrefix(const std::vector<std::string>& keys, const std::string& prefix) {
  return static_cast<size_t>(std::count_if(keys.begin(), keys.end(),
                                           [&](const std::string& k) { return k.rfind(prefix, 0) == 0; }));
}

/// A gpu_seconds key is gpus/<from ms>/<to ms>: the end of its period.
int64_t periodEndMs(const std::string& key) { return std::stoll(key.substr(key.rfind('/') + 1)); }

/// A daemon on the sim cluster gpu-a (one 8-GPU node), ready.
struct LiveDaemon {
  std::unique_ptr<sim::ApiServer> server;
  std::unique_ptr<app::Daemon> daemon;  // stopped before the server goes
  LiveDaemon(const std::string& db, bool seedTheWorkload,
             std::chrono::milliseconds tick = std::chrono::milliseconds(100),
             std::chrono::milliseconds stepInterval = std::chrono::milliseconds(250),
             size_t busyStepEvents = 0,
             std::optional<std::chrono::milliseconds> readCoalesce = std::nullopt) {
    sim::ApiServerOptions o;
    o.name = "gpu-a";
    o.token = "daemon-test-token";
    server = std::make_unique<sim::ApiServer>(o);
    server->start();
    seedNode(*server);
    if (seedTheWorkload) seedWorkload(*server);
    auto options = optionsFor(db, *server);
    options.tickInterval = tick;
    options.stepInterval = stepInterval;
    options.busyStepEvents = busyStepEvents;
    options.readCoalesce = readCoalesce;
    daemon = std::make_unique<app::Daemon>(std::move(options));
    REQUIRE(daemon->start().ok());
    REQUIRE(testing::eventually([&] { return daemon->ready(); }, std::chrono::seconds(30)));
  }
};

}  // namespace

// The commit runs on the store thread. The daemon stopped while a commit waits for the store
// (another writer holds it, inside the busy timeout) writes that commit and then the last step's
// records before stop() returns: the workload's milestones, and the GPU-seconds of the period up
// to the stop, which only the last step writes.
TEST_CASE("Stopping while a commit waits for the store writes it and then the last step's records",
          "[app][daemon]") {
  using namespace std::chrono_literals;
  testing::TempDir dir("firstwork-daemon-test");
  const std::string db = (dir.path / "firstwork.db").string();
  LogCapture logs;
  int64_t stoppedAtMs = 0;
  {
    LiveDaemon live(db, false);
    WriteLock lock(db);
    seedWorkload(*live.server);  // its milestones go to the store thread and wait for the lock
    std::this_thread::sleep_for(700ms);
    stoppedAtMs = nowMs();
    auto stopped = std::async(std::launch::async, [&] { live.daemon->stop(); });
    CHECK(stopped.wait_for(500ms) == std::future_status::timeout);  // it waits for the store
    lock.release();
    stopped.get();
  }
  const auto lines = logLines(logs.out.str());
  CHECK_FALSE(findLine(lines, "store write failed; records kept in memory and retried"));
  CHECK_FALSE(findLine(lines, "store write failed at shutdown; records not written (derived again at the next start)"));
  const auto milestones = storedKeys(db, records::kMilestoneKind);
  INFO("milestones: " << nlohmann::json(milestones).dump());
  CHECK(countWithPrefix(milestones, "ms/gpu-a/wl-uid-0/") >= 1);
  const auto periods = storedKeys(db, records::kGpuSecondsKind);
  REQUIRE(periods.size() == 1);  // a period is a minute; the one the stop closed
  CHECK(periodEndMs(periods.back()) >= stoppedAtMs);
}

// The store stays locked past its busy timeout (5 s) while the daemon stops: stop() returns,
// the log says how many records were not written, and the next start derives them again from
// the relisted objects.
TEST_CASE("Stopping while the store stays locked gives up after the busy timeout and says so and the next start writes them",
          "[app][daemon]") {
  using namespace std::chrono_literals;
  testing::TempDir dir("firstwork-daemon-test");
  const std::string db = (dir.path / "firstwork.db").string();
  {
    LogCapture logs;
    {
      LiveDaemon live(db, false);
      WriteLock lock(db);
      seedWorkload(*live.server);
      std::this_thread::sleep_for(300ms);
      live.daemon->stop();  // holds the lock throughout
    }
    const auto lines = logLines(logs.out.str());
    const auto* failed = findLine(lines, "store write failed at shutdown; records not written (derived again at the next start)");
    REQUIRE(failed);
    CHECK((*failed)["level"] == "error");
    CHECK((*failed)["records"].get<int64_t>() >= 1);
    CHECK(countWithPrefix(storedKeys(db, records::kMilestoneKind), "ms/gpu-a/wl-uid-0/") == 0);
  }
  {
    LiveDaemon live(db, true);
    live.daemon->stop();
  }
  CHECK(countWithPrefix(storedKeys(db, records::kMilestoneKind), "ms/gpu-a/wl-uid-0/") >= 1);
}

namespace {
/// The sum of the samples of `name` whose labels contain every one of `labels` (0 if none).
double sampleSum(const std::string& metrics, const std::string& name, const std::vector<std::string>& labels) {
  double sum = 0;
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + "{", 0) != 0) continue;
    const auto close = line.rfind('}');
    if (close == std::string::npos) continue;
    const std::string set = line.substr(name.size(), close + 1 - name.size());
    if (!std::all_of(labels.begin(), labels.end(), [&](const auto& l) { return set.find(l) != std::string::npos; }))
      continue;
    sum += std::stod(line.substr(close + 1));
  }
  return sum;
}

/// GET /metrics of the daemon `http` talks to.
std::string scrapeMetrics(httplib::Client& http) {
  auto r = http.Get("/metrics");
  REQUIRE(r);
  REQUIRE(r->status == 200);
  return r->body;
}
// The first step after a sync makes a record of every milestone the lists showed. Held until the
// step's end and sent in one batch, they were all alive at once: 264 MB at the benchmark's full
// estate, most of the sync's peak (bench/README.md, change 93). Now a batch goes to the store as
// soon as DaemonOptions::commitEvery records are pending during the engine's advance (the next
// once that batch is back), and the rest when the step ends or that batch is back. Here 400
// admitted Workloads are in the first lists and a batch is due at 100 records: the debug log
// shows a batch of at least 100 sent during the step, and every Workload's milestones are in the
// store.
TEST_CASE(
    "A large step's records go to the store in batches while the engine advances, and every one "
    "lands",
    "[app][daemon]") {
  using namespace std::chrono_literals;
  testing::TempDir dir("firstwork-daemon-test");
  const std::string db = (dir.path / "firstwork.db").string();
  constexpr int kWorkloads = 400;
  LogCapture logs;
  log::configure({log::Level::Debug, false, ""});
  struct InfoAgain {
    ~InfoAgain() { log::configure({log::Level::Info, false, ""}); }
  } infoAgain;
  {
    sim::ApiServerOptions so;
    so.name = "gpu-a";
    so.token = "daemon-test-token";
    sim::ApiServer server(so);
    server.start();
    seedNode(server);
    for (int i = 0; i < kWorkloads; ++i) seedWorkload(server, i);
    auto options = optionsFor(db, server);
    options.commitEvery = 100;
    app::Daemon daemon(std::move(options));
    REQUIRE(daemon.start().ok());
    REQUIRE(testing::eventually([&] { return daemon.ready(); }, 30s));
    auto landed = [&] { return storedKeys(db, records::kMilestoneKind).size() >= 3 * kWorkloads; };
    CHECK(testing::eventually(landed, 30s));
    daemon.stop();
  }
  const auto lines = logLines(logs.out.str());
  size_t during = 0, after = 0;
  uint64_t duringRecords = 0;
  for (const auto& l : lines) {
    if (l.value("msg", "") != "store batch committed") continue;
    if (l.value("during_step", false)) {
      ++during;
      duringRecords += l.value("records", uint64_t{0});
      CHECK(l.value("records", uint64_t{0}) >= 100);  // sent once 100 were pending
    } else {
      ++after;
    }
  }
  INFO("batches during a step " << during << " (" << duringRecords << " records), after " << after);
  CHECK(during >= 1);
  // Each Workload's three milestones (queued at its creation, reserved and admitted at its two
  // conditions' transition): none lost (the store keeps one record per key, so a record sent
  // twice would not show here).
  const auto milestones = storedKeys(db, records::kMilestoneKind);
  CHECK(milestones.size() == 3 * kWorkloads);
  for (int i = 0; i < kWorkloads; ++i) {
    const std::string prefix = "ms/gpu-a/wl-uid-" + std::to_string(i) + "/";
    if (countWithPrefix(milestones, prefix) != 3)
      FAIL_CHECK(prefix << ": " << countWithPrefix(milestones, prefix) << " milestones");
  }
}

// Samples of seedWorkload's Workload: its ADDED event, its gauge, its queued_to_reserved stage.
const std::vector<std::string> kAdded{R"(resource="workloads")", R"(type="ADDED")"};
const std::vector<std::string> kTrainCq{R"(cluster="gpu-a")", R"(cluster_queue="train-cq")"};
const std::vector<std::string> kQueuedToReserved{
    R"(cluster="gpu-a")", R"(cluster_queue="train-cq")", R"(stage="queued_to_reserved")"};
// firstwork_metrics_renderings_total: how current each scrape's rendering was.
const std::vector<std::string> kCurrent{R"(freshness="current")"};
const std::vector<std::string> kUncommitted{R"(freshness="uncommitted")"};
const std::vector<std::string> kStale{R"(freshness="stale")"};
// firstwork_engine_steps_total: what ran each engine step.
const std::vector<std::string> kByEvents{R"(trigger="events")"};
const std::vector<std::string> kByScrape{R"(trigger="scrape")"};
const std::vector<std::string> kByTick{R"(trigger="tick")"};
}  // namespace

// The pacer spaces the engine's steps under a stream (250 ms) and the tick applies its gauges
// once a second; a scrape used to read the gauges of the last tick. Now the loop steps what waits,
// waits for the store's commit of that step and applies the gauges before it renders /metrics for
// a scrape, so every scrape that counts an event shows what the engine made of it. The tick here
// is an hour away: before those changes the Workload never showed in firstwork_workloads during
// the test, and without the wait for the commit its stage observation came a scrape later.
TEST_CASE("A scrape shows the engine's figures for every event the daemon has taken, without waiting for its tick",
          "[app][daemon]") {
  using namespace std::chrono_literals;
  testing::TempDir dir("firstwork-daemon-test");
  LiveDaemon live((dir.path / "firstwork.db").string(), false, std::chrono::hours(1));
  httplib::Client http(live.daemon->baseUrl());
  auto scrape = [&] { return scrapeMetrics(http); };
  std::string body = scrape();
  REQUIRE(sampleSum(body, "firstwork_watch_events_total", kAdded) == 0);
  CHECK(sampleSum(body, "firstwork_workloads", kTrainCq) == 0);
  // The rendering counts itself: the loop brought it up to date (nothing was waiting).
  CHECK(sampleSum(body, "firstwork_metrics_renderings_total", kCurrent) == 1);
  seedWorkload(*live.server);  // reserved in train-cq on gpu-a
  int scrapes = 0;
  REQUIRE(testing::eventually(
      [&] {
        body = scrape();
        ++scrapes;
        return sampleSum(body, "firstwork_watch_events_total", kAdded) >= 1;
      },
      30s));
  INFO("scrapes until the event was counted: " << scrapes);
  // The same rendering that counts the event shows the Workload, in one state, and the stage
  // its milestones close (queued 10 min ago, reserved 9: one observation), which is exported once
  // the store has committed its record: the rendering waited for that commit.
  CHECK(sampleSum(body, "firstwork_workloads", kTrainCq) == 1);
  CHECK(sampleSum(body, "firstwork_stage_seconds_count", kQueuedToReserved) == 1);
  // 60 s, or 61 when a second turned between seedWorkload's two timestamps.
  const double stageSeconds = sampleSum(body, "firstwork_stage_seconds_sum", kQueuedToReserved);
  CHECK(stageSeconds >= 60);
  CHECK(stageSeconds <= 61);
  // And so does every scrape after it (applied again, not undone, not counted twice).
  body = scrape();
  CHECK(sampleSum(body, "firstwork_workloads", kTrainCq) == 1);
  CHECK(sampleSum(body, "firstwork_stage_seconds_count", kQueuedToReserved) == 1);
  // Every one of those renderings was current, none past the bound or stale (a scrape within
  // 25 ms of a rendering shares it: at most one a scrape).
  CHECK(sampleSum(body, "firstwork_metrics_renderings_total", kCurrent) >= 2);
  CHECK(sampleSum(body, "firstwork_metrics_renderings_total", kCurrent) <= scrapes + 2);
  CHECK(sampleSum(body, "firstwork_metrics_renderings_total", kUncommitted) == 0);
  CHECK(sampleSum(body, "firstwork_metrics_renderings_total", kStale) == 0);
}

// The engine's data quality on /metrics: every skip reason from the start at 0, and what the
// engine could not use or attribute as it happens (a pod of no Workload's, and one whose
// first-work annotation is not a time).
TEST_CASE("The daemon exports what the engine skipped and the pods no Workload claims",
          "[app][daemon]") {
  using namespace std::chrono_literals;
  testing::TempDir dir("firstwork-daemon-test");
  LiveDaemon live((dir.path / "firstwork.db").string(), false, std::chrono::hours(1));
  httplib::Client http(live.daemon->baseUrl());
  const std::vector<std::string> gpuA{R"(cluster="gpu-a")"};
  std::string body = scrapeMetrics(http);
  for (const char* reason : {"rejected", "invalid_signal", "ignored", "unknown_cluster"}) {
    INFO(reason);
    CHECK(body.find("firstwork_engine_inputs_skipped_total{reason=\"" + std::string(reason) +
                    "\"} 0\n") != std::string::npos);
  }
  CHECK(body.find("firstwork_pods_without_workload{cluster=\"gpu-a\"} 0\n") != std::string::npos);
  auto seedPod = [&](const std::string& name, const std::string& annotations) {
    live.server->create("pods", R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
                                    R"(","namespace":"monitoring","annotations":{)" + annotations +
                                    R"(},"creationTimestamp":")" + ago(300s) + R"("},
      "spec":{"nodeName":"gpu-node-0","containers":[{"name":"exporter"}]},"status":{"phase":"Running"}})");
  };
  seedPod("dcgm-exporter-a", "");
  seedPod("dcgm-exporter-b", R"("firstwork.dev/first-work-at":"soon")");
  REQUIRE(testing::eventually(
      [&] {
        body = scrapeMetrics(http);
        return sampleSum(body, "firstwork_pods_without_workload", gpuA) == 2;
      },
      30s));
  CHECK(sampleSum(body, "firstwork_engine_inputs_skipped_total", {R"(reason="invalid_signal")"}) ==
        1);
  CHECK(sampleSum(body, "firstwork_engine_inputs_skipped_total", {R"(reason="rejected")"}) == 0);
}

// The transports hold a trickling stream's reads back to batch them (read coalescing; here for a
// minute, where the daemon's default is 50 ms). A scrape reads what waits on such streams before
// its step: it counts every event that had arrived when it asked, and the engine's figures of
// them.
TEST_CASE("A scrape counts the events waiting on a watch stream whose reads are held back",
          "[app][daemon]") {
  using namespace std::chrono_literals;
  testing::TempDir dir("firstwork-daemon-test");
  LiveDaemon live((dir.path / "firstwork.db").string(), false, std::chrono::hours(1), 250ms, 0,
                  std::chrono::milliseconds(60s));
  httplib::Client http(live.daemon->baseUrl());
  // The first event on the Workloads stream: read (at once, or by a scrape), and the stream is
  // held back from then on, read again within its interval.
  seedWorkload(*live.server, 0);
  REQUIRE(testing::eventually(
      [&] { return sampleSum(scrapeMetrics(http), "firstwork_watch_events_total", kAdded) == 1; },
      30s));
  // The second waits in the socket for the minute's end ...
  seedWorkload(*live.server, 1);
  std::this_thread::sleep_for(300ms);
  // ... and the next scrape reads it, steps it and shows it.
  const std::string body = scrapeMetrics(http);
  CHECK(sampleSum(body, "firstwork_watch_events_total", kAdded) == 2);
  CHECK(sampleSum(body, "firstwork_workloads", kTrainCq) == 2);
  CHECK(sampleSum(body, "firstwork_stage_seconds_count", kQueuedToReserved) == 2);
}

namespace {

// research/`name` of `resource` is deleted while the daemon cannot watch: the API server goes
// away, the object is deleted and the history that told of it is compacted, so the watch,
// resumed, gets 410 Expired and the relist does not list it. The allocated GPUs (the
// `allocated` series) go from `before` to `after` and stay there.
void deletedWhileUnwatched(LiveDaemon& live, httplib::Client& http,
                           const std::vector<std::string>& allocated, const std::string& resource,
                           const std::string& name, double before, double after) {
  using namespace std::chrono_literals;
  REQUIRE(testing::eventually(
      [&] { return sampleSum(scrapeMetrics(http), "firstwork_gpus", allocated) == before; }, 30s));
  live.server->stop();
  REQUIRE(live.server->remove(resource, "research", name));
  live.server->compactHistory(false);
  live.server->start();
  std::string body;
  REQUIRE(testing::eventually(
      [&] {
        body = scrapeMetrics(http);
        return sampleSum(body, "firstwork_gpus", allocated) == after;
      },
      30s));
  CHECK(sampleSum(body, "firstwork_watch_restarts_total",
                  {R"(cluster="gpu-a")", "resource=\"" + resource + "\"", R"(reason="expired")"}) >= 1);
  // What the others hold stays allocated.
  std::this_thread::sleep_for(300ms);
  CHECK(sampleSum(scrapeMetrics(http), "firstwork_gpus", allocated) == after);
}

}  // namespace

// The daemon's pod reflectors keep no objects (the engine keeps its own): a pod deleted while the
// daemon could not watch, and so missing from the relist, reaches the engine as a delete by uid
// alone, and the engine deletes the pod it holds, as it last saw it. Had the daemon dropped such
// a delete, the pod's GPUs would stay allocated for good.
TEST_CASE("A pod gone while the daemon could not watch gives its GPUs back after the relist",
          "[app][daemon]") {
  using namespace std::chrono_literals;
  testing::TempDir dir("firstwork-daemon-test");
  LiveDaemon live((dir.path / "firstwork.db").string(), false);
  httplib::Client http(live.daemon->baseUrl());
  auto seedPod = [&](const std::string& name, int gpus) {
    live.server->create("pods", R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(",
      "namespace":"research","creationTimestamp":")" + ago(300s) + R"("},
      "spec":{"nodeName":"gpu-node-0","containers":[{"name":"trainer","resources":{"requests":{"nvidia.com/gpu":")" +
                                     std::to_string(gpus) + R"("}}}]},
      "status":{"phase":"Running","conditions":[{"type":"PodScheduled","status":"True","lastTransitionTime":")" +
                                     ago(290s) + R"("}],
      "containerStatuses":[{"name":"trainer","ready":true,"restartCount":0,"state":{"running":{"startedAt":")" +
                                     ago(280s) + R"("}}}]}})");
  };
  const std::vector<std::string> allocated{R"(cluster="gpu-a")", R"(device_class="nvidia.com/gpu")",
                                           R"(unit="gpu")", R"(state="allocated")"};
  seedPod("train-a-0", 4);
  seedPod("train-b-0", 2);
  deletedWhileUnwatched(live, http, allocated, "pods", "train-a-0", 6, 2);
}

// The daemon's claim reflectors keep no objects either (the inventory keeps a record of each
// claim): a claim deleted while the daemon could not watch reaches the engine as a delete by uid
// and the hash of its name alone, and the inventory erases its record, as last seen. Had the
// daemon dropped such a delete, its device would stay allocated for good.
TEST_CASE("A ResourceClaim gone while the daemon could not watch gives its device back after the relist",
          "[app][daemon]") {
  using namespace std::chrono_literals;
  testing::TempDir dir("firstwork-daemon-test");
  LiveDaemon live((dir.path / "firstwork.db").string(), false);
  httplib::Client http(live.daemon->baseUrl());
  live.server->create("resourceslices", R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",
    "metadata":{"name":"gpu-node-0-gpu.nvidia.com-x7k2p","creationTimestamp":")" + ago(600s) + R"("},
    "spec":{"driver":"gpu.nvidia.com","nodeName":"gpu-node-0",
      "pool":{"name":"gpu-node-0","generation":1,"resourceSliceCount":1},
      "devices":[{"name":"gpu-0","attributes":{"type":{"string":"gpu"}}},
                 {"name":"gpu-1","attributes":{"type":{"string":"gpu"}}},
                 {"name":"gpu-2","attributes":{"type":{"string":"gpu"}}}]}})");
  auto seedClaim = [&](const std::string& name, const std::string& device) {
    live.server->create("resourceclaims", R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
      "metadata":{"name":")" + name + R"(","namespace":"research","creationTimestamp":")" + ago(300s) + R"("},
      "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com","count":1}}]}},
      "status":{"allocation":{"devices":{"results":[
        {"request":"gpu","driver":"gpu.nvidia.com","pool":"gpu-node-0","device":")" + device + R"("}]}}}})");
  };
  const std::vector<std::string> allocated{R"(cluster="gpu-a")", R"(device_class="gpu.nvidia.com")",
                                           R"(unit="gpu")", R"(state="allocated")"};
  seedClaim("train-a-0-gpu-k3x9q", "gpu-0");
  seedClaim("train-b-0-gpu-m2w7z", "gpu-1");
  deletedWhileUnwatched(live, http, allocated, "resourceclaims", "train-a-0-gpu-k3x9q", 2, 1);
}

// A scrape waits for its step's commit for at most 50 ms from the loop's first look at it: under
// a flood a commit holds thousands of records, and a slow disk's fsync can take long. Here another
// writer holds the store (the commit waits inside its 5 s busy timeout): the scrape still gets the
// gauges as of its step, and the observation the commit holds comes once the commit is in. Had the
// scrape waited for the commit, it would have been rendered at 500 ms on its own thread, from the
// gauges last applied: none, with the tick an hour away.
TEST_CASE("A scrape waits for its step's commit for a bounded time and then shows the gauges of that step",
          "[app][daemon]") {
  using namespace std::chrono_literals;
  testing::TempDir dir("firstwork-daemon-test");
  const std::string db = (dir.path / "firstwork.db").string();
  LiveDaemon live(db, false, std::chrono::hours(1));
  httplib::Client http(live.daemon->baseUrl());
  auto scrape = [&] { return scrapeMetrics(http); };
  std::string body;
  {
    WriteLock lock(db);
    seedWorkload(*live.server);
    REQUIRE(testing::eventually(
        [&] {
          body = scrape();
          return sampleSum(body, "firstwork_watch_events_total", kAdded) >= 1;
        },
        30s));
    CHECK(sampleSum(body, "firstwork_workloads", kTrainCq) == 1);
    CHECK(sampleSum(body, "firstwork_stage_seconds_count", kQueuedToReserved) == 0);  // not committed
    // That rendering says so: made past the bound, on the loop (not the scrape thread's fallback).
    CHECK(sampleSum(body, "firstwork_metrics_renderings_total", kUncommitted) >= 1);
    CHECK(sampleSum(body, "firstwork_metrics_renderings_total", kStale) == 0);
  }
  // The lock gone, the commit goes in and its observation is exported.
  CHECK(testing::eventually(
      [&] { return sampleSum(scrape(), "firstwork_stage_seconds_count", kQueuedToReserved) == 1; }, 30s));
}

// The bound is kept by a timer on the loop, armed once per scrape (under a flood every event asks
// again, and re-arming it for the same deadline each time cost a few µs an event): with no event
// to come, a scrape whose step's commit is held is answered by the loop at the bound, uncommitted,
// not left to the scrape thread's fallback half a second later (stale).
TEST_CASE("A scrape waiting for its step's commit, with no event to come, is answered by the loop at the bound",
          "[app][daemon]") {
  using namespace std::chrono_literals;
  testing::TempDir dir("firstwork-daemon-test");
  const std::string db = (dir.path / "firstwork.db").string();
  LiveDaemon live(db, false, std::chrono::hours(1));
  httplib::Client http(live.daemon->baseUrl());
  WriteLock lock(db);
  seedWorkload(*live.server);
  // Taken and stepped by the pacer's flush (250 ms here); that step's commit waits for the lock.
  std::this_thread::sleep_for(1s);
  const std::string body = scrapeMetrics(http);  // one scrape: nothing else asks the loop again
  CHECK(sampleSum(body, "firstwork_workloads", kTrainCq) == 1);
  CHECK(sampleSum(body, "firstwork_metrics_renderings_total", kUncommitted) == 1);
  CHECK(sampleSum(body, "firstwork_metrics_renderings_total", kStale) == 0);
}

namespace {
// Settled first: once its five watches (Workloads, Pods, ResourceClaims, ResourceSlices, Nodes)
// are up the cluster counts as connected, and that wants a step too (taken by the scrape that sees
// the last watch up, or by the pacer before it).
void waitForWatchesUp(httplib::Client& http) {
  REQUIRE(testing::eventually(
      [&] {
        return sampleSum(scrapeMetrics(http), "firstwork_watch_up", {R"(cluster="gpu-a")"}) == 5;
      },
      std::chrono::seconds(30)));
}
}  // namespace

// Under a stream the pacer spaces the engine's steps: an event within the interval of the last
// step waits for a flush at its end. A scrape that finds events waiting steps them at once, and
// that step took everything the flush waited for: the flush is cancelled. It used to run anyway,
// and a scraped stream stepped once more per scrape (bench/README.md, change 108). Events after
// the scrape's step get a flush of their own. The pacer's interval is 3 s here and the tick an
// hour away, so each step's trigger can be told.
TEST_CASE(
    "A scrape's step takes the events the pacer's flush waited for, and that flush does not run",
    "[app][daemon]") {
  using namespace std::chrono_literals;
  testing::TempDir dir("firstwork-daemon-test");
  const std::string db = (dir.path / "firstwork.db").string();
  LiveDaemon live(db, false, std::chrono::hours(1), 3s);
  httplib::Client http(live.daemon->baseUrl());
  std::string body;
  auto scrapeUntilAdded = [&](double added) {
    REQUIRE(testing::eventually(
        [&] {
          body = scrapeMetrics(http);
          return sampleSum(body, "firstwork_watch_events_total", kAdded) >= added;
        },
        30s));
  };
  waitForWatchesUp(http);
  seedWorkload(*live.server, 0);
  scrapeUntilAdded(1);  // stepped by the pacer at once, or by this scrape: a step just ran
  const double scrapeSteps = sampleSum(body, "firstwork_engine_steps_total", kByScrape);
  seedWorkload(*live.server, 1);  // within 3 s of that step: a flush waits for the interval's end
  scrapeUntilAdded(2);            // the scrape that first counts it steps it
  const double eventSteps = sampleSum(body, "firstwork_engine_steps_total", kByEvents);
  CHECK(sampleSum(body, "firstwork_engine_steps_total", kByScrape) == scrapeSteps + 1);
  CHECK(sampleSum(body, "firstwork_workloads", kTrainCq) == 2);
  // Past the end of the interval, the flush has not run: nothing waited for it.
  std::this_thread::sleep_for(3500ms);
  body = scrapeMetrics(http);
  CHECK(sampleSum(body, "firstwork_engine_steps_total", kByEvents) == eventSteps);
  // Nor did this scrape step: nothing waited.
  CHECK(sampleSum(body, "firstwork_engine_steps_total", kByScrape) == scrapeSteps + 1);
  CHECK(sampleSum(body, "firstwork_engine_steps_total", kByTick) == 0);
  // Every step is timed, under its trigger (firstwork_engine_step_seconds).
  for (const auto* trigger : {&kByEvents, &kByScrape, &kByTick}) {
    CHECK(sampleSum(body, "firstwork_engine_step_seconds_count", *trigger) ==
          sampleSum(body, "firstwork_engine_steps_total", *trigger));
  }
  CHECK(sampleSum(body, "firstwork_engine_step_seconds_sum", kByScrape) > 0);
  CHECK(sampleSum(body, "firstwork_workloads", kTrainCq) == 2);
  // An event after that scrape's step, with nobody scraping, is stepped by the pacer's flush: its
  // milestones land in the store.
  seedWorkload(*live.server, 2);
  // Stepped by the pacer at once (the last step is 3.5 s old), or by this scrape.
  scrapeUntilAdded(3);
  seedWorkload(*live.server, 3);  // within 3 s of that step
  CHECK(testing::eventually(
      [&] {
        return countWithPrefix(storedKeys(db, records::kMilestoneKind), "ms/gpu-a/wl-uid-3/") == 3;
      },
      30s));
  body = scrapeMetrics(http);
  CHECK(sampleSum(body, "firstwork_engine_steps_total", kByEvents) >= eventSteps + 1);
  CHECK(sampleSum(body, "firstwork_workloads", kTrainCq) == 4);
}

/// What a stream of Workloads made `live` step: the pacer's flushes and the ticks over `seconds`,
/// and the last Workload's number.
struct StreamSteps {
  double events = 0, ticks = 0, seconds = 0;
  int last = -1;
};
/// Seeds `batch` Workloads every `every` for `length`, numbered from `first`, and counts the steps
/// taken meanwhile.
StreamSteps streamWorkloads(LiveDaemon& live, std::chrono::milliseconds length,
                            std::chrono::milliseconds every, int batch, int first) {
  httplib::Client http(live.daemon->baseUrl());
  waitForWatchesUp(http);
  auto steps = [&](const std::vector<std::string>& trigger) {
    return sampleSum(scrapeMetrics(http), "firstwork_engine_steps_total", trigger);
  };
  const auto t0 = std::chrono::steady_clock::now();
  const double events0 = steps(kByEvents), ticks0 = steps(kByTick);
  StreamSteps out;
  out.last = first - 1;
  // Events are always waiting for the next step.
  for (int i = first; std::chrono::steady_clock::now() - t0 < length;) {
    for (int b = 0; b < batch; ++b, ++i) {
      seedWorkload(*live.server, i);
      out.last = i;
    }
    std::this_thread::sleep_for(every);
  }
  out.events = steps(kByEvents) - events0;
  out.ticks = steps(kByTick) - ticks0;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

/// The pacing is judged by the steps of a window of wall time, and a loaded machine can starve the
/// daemon's loop for a whole window (an ASan build beside a busy CI run took 3 ticks in 6.5 s): a
/// window that misses `paced` is streamed again, up to three in all, each reported. A pacer that
/// is wrong misses in every window (checked for each test by breaking the pacer).
template <typename Paced>
StreamSteps streamPaced(LiveDaemon& live, std::chrono::milliseconds length,
                        std::chrono::milliseconds every, int batch, Paced&& paced) {
  StreamSteps r;
  for (int window = 1; window <= 3; ++window) {
    r = streamWorkloads(live, length, every, batch, r.last + 1);
    if (paced(r)) break;
    WARN("window " << window << " over " << r.seconds << " s: " << r.events << " flushes, "
                   << r.ticks << " ticks, Workloads up to " << r.last << ": missed");
  }
  return r;
}

// Under a stream the pacer spaces its flushes from the last step of any kind, and the tick steps
// once an interval. The tick used to be re-armed after its step, drifting by that step's length
// each time, until it came just after a flush with nothing waiting: a flush each pacer interval
// and a tick on top (5 steps a second with a 250 ms pacer, 3 with these intervals). On a fixed
// schedule it comes just before that flush and takes its events: at most a tick and one flush a
// second here (bench/README.md, change 109).
TEST_CASE("Under a stream the tick takes the place of a flush: at most one step per pacer interval",
          "[app][daemon][pacing]") {
  using namespace std::chrono_literals;
  testing::TempDir dir("firstwork-daemon-test");
  const std::string db = (dir.path / "firstwork.db").string();
  LiveDaemon live(db, false, 1000ms, 500ms);
  auto ticked = [](const StreamSteps& r) { return r.ticks >= r.seconds - 2; };
  auto bounded = [](const StreamSteps& r) { return r.events + r.ticks <= 2 * r.seconds + 2; };
  const auto r = streamPaced(live, 6s, 10ms, 1, [&](auto& r) { return ticked(r) && bounded(r); });
  INFO("over " << r.seconds << " s: " << r.events << " flushes, " << r.ticks << " ticks");
  CHECK(ticked(r));   // the tick still runs once a second
  CHECK(bounded(r));  // at most a tick and a flush a second
}

// By default the pacer's interval is the tick's: under a stream the tick's step takes what waits,
// and the pacer's flush does not run, so the daemon steps once a second, not four times (with the
// pacer at 250 ms, 3 flushes a second besides the tick). Nothing is left behind: the last
// Workload is in the store a step later (bench/README.md, change 110).
TEST_CASE("By default the daemon steps once a second under a stream: the tick takes every event",
          "[app][daemon][pacing]") {
  using namespace std::chrono_literals;
  testing::TempDir dir("firstwork-daemon-test");
  const std::string db = (dir.path / "firstwork.db").string();
  const auto defaults = app::DaemonOptions{};
  REQUIRE(defaults.tickInterval == 1000ms);
  LiveDaemon live(db, false, defaults.tickInterval, defaults.stepInterval, defaults.busyStepEvents);
  auto ticked = [](const StreamSteps& r) { return r.ticks >= r.seconds - 2; };
  // A tick that fell behind on a loaded machine lets one flush run, at most.
  auto tickOnly = [](const StreamSteps& r) {
    return r.events <= 1 && r.events + r.ticks <= r.seconds + 2;
  };
  const auto r = streamPaced(live, 5s, 10ms, 1, [&](auto& r) { return ticked(r) && tickOnly(r); });
  INFO("over " << r.seconds << " s: " << r.events << " flushes, " << r.ticks << " ticks");
  CHECK(ticked(r));
  CHECK(tickOnly(r));
  // The last Workload's three milestones (queued, reserved, admitted) reach the store with the
  // next step: no event is left waiting.
  const std::string last = "ms/gpu-a/wl-uid-" + std::to_string(r.last) + "/";
  CHECK(testing::eventually(
      [&] { return countWithPrefix(storedKeys(db, records::kMilestoneKind), last) == 3; }, 10s));
}

// Change 110: once many events wait (busyStepEvents; 20 here, 2,500 by default), the pacer
// spaces steps by its busy interval (250 ms), not by the tick's second: a flood's steps, and a
// scrape's step that waits for them, stay small. Workloads come 25 at a time every 100 ms, so at
// least 20 wait soon after any step however slowly a loaded machine seeds them (one every 5 ms
// depended on the seeding's speed), and the pacer's flushes come about three times a second
// besides the tick.
TEST_CASE("Once many events wait the daemon steps every quarter of a second, not once a second",
          "[app][daemon][pacing]") {
  using namespace std::chrono_literals;
  testing::TempDir dir("firstwork-daemon-test");
  const std::string db = (dir.path / "firstwork.db").string();
  const auto defaults = app::DaemonOptions{};
  REQUIRE(defaults.busyStepInterval == 250ms);
  LiveDaemon live(db, false, defaults.tickInterval, defaults.stepInterval, 20);
  // Without the busy spacing: no flush at all.
  auto busy = [](const StreamSteps& r) { return r.events >= r.seconds; };
  auto bounded = [](const StreamSteps& r) { return r.events + r.ticks <= 4 * r.seconds + 2; };
  const auto r = streamPaced(live, 5s, 100ms, 25, [&](auto& r) { return busy(r) && bounded(r); });
  INFO("over " << r.seconds << " s: " << r.events << " flushes, " << r.ticks << " ticks, "
               << r.last + 1 << " Workloads");
  CHECK(busy(r));
  CHECK(bounded(r));
}

// The store thread's connection tells the daemon of each failed checkpoint (the store test makes
// real ones fail through a VFS): every failure is counted, and a failure that repeats at every
// commit logs one line a minute, which says how many it left out.
TEST_CASE("A failed checkpoint of the store's WAL is counted every time and logged once a minute", "[daemon]") {
  prometheus::Registry registry;
  metrics::SelfMetrics self(registry, {1, 10}, "0.1.0", "abc123");
  testing::ManualClock clock;
  log::Logger logger("daemon");
  LogCapture logs;
  auto report = app::checkpointFailureReporter(self, logger, clock);
  report("checkpoint of the WAL failed: disk I/O error (disk I/O error)");
  report("second");
  clock.advance(std::chrono::seconds(59));
  report("third");
  clock.advance(std::chrono::seconds(1));  // a minute after the first line
  report("fourth");
  report("fifth");

  std::ostringstream text;
  prometheus::TextSerializer().Serialize(text, registry.Collect());
  CHECK(text.str().find("firstwork_store_errors_total{operation=\"checkpoint\"} 5\n") != std::string::npos);
  std::vector<nlohmann::json> lines;
  for (auto& l : logLines(logs.out.str()))
    if (l.value("msg", "").starts_with("store checkpoint failed")) lines.push_back(l);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["level"] == "error");
  CHECK(lines[0]["error"] == "checkpoint of the WAL failed: disk I/O error (disk I/O error)");
  CHECK(lines[0]["failures_not_logged"] == 0);
  CHECK(lines[1]["error"] == "fourth");
  CHECK(lines[1]["failures_not_logged"] == 2);  // "second" and "third"
}

TEST_CASE("The daemon's decoders keep the device attributes its inventory reads",
          "[app][daemon]") {
  config::Config c;
  auto o = app::detail::decodeOptions(c);
  REQUIRE(o.deviceAttributes);
  CHECK(*o.deviceAttributes == std::vector<std::string>{"type", "profile"});
  CHECK(o.keepsDeviceAttribute("gpu.nvidia.com/type"));
  CHECK_FALSE(o.keepsDeviceAttribute("uuid"));
  c.gpu.profileAttribute = "gpu.nvidia.com/mig-profile";  // as configured, into the inventory
  CHECK(*app::detail::decodeOptions(c).deviceAttributes ==
        std::vector<std::string>{"type", "gpu.nvidia.com/mig-profile"});
  CHECK(app::detail::engineConfig(c).inventory.profileAttribute == "gpu.nvidia.com/mig-profile");
}
