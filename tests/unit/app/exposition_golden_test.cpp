// Golden exposition tests (issue #4): a fixture stream of watch events, as the API server sends
// them, goes through the daemon's own path — decode, milestone engine, durable records committed
// to a real SQLite store, export of what the store accepted, snapshot gauges — and the resulting
// /metrics text is compared, sorted, with a hand-computed expectation.
//
// Stream format (tests/fixtures/exposition/<case>.jsonl), one JSON object per line:
//   {"at": RFC3339, "cluster": name, "event": {"type": ..., "object": {...}}}  a watch event
//   {"at": RFC3339, "connected": bool, "cluster": name}                        the daemon's view
//   {"at": RFC3339, "advance": true}                                          the last step
// The engine is advanced after each distinct time, as the daemon does after each read. The
// expectation (<case>.prom) holds every sample line and every # TYPE line of the engine's metric
// families; each figure is derived by hand in <case>.md.
#include <prometheus/registry.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "firstwork/app/engine_metrics.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "firstwork/engine/milestone_engine.hpp"
#include "firstwork/http/text_exposition.hpp"
#include "firstwork/log/redact.hpp"
#include "firstwork/model/decode.hpp"
#include "firstwork/records/records.hpp"
#include "firstwork/store/store.hpp"

namespace {

using namespace firstwork;
namespace fs = std::filesystem;

const std::vector<double> kBuckets{5, 15, 30, 60, 120, 180, 300, 600, 900, 1200, 1800, 3600, 7200, 14400};

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> sortedLines(const std::string& text, bool keepHelp) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (!keepHelp && line.rfind("# HELP ", 0) == 0) continue;
    lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

model::Kind kindOfJson(const nlohmann::json& object) {
  const std::string kind = object.at("kind").get<std::string>();
  for (const auto& info : model::allKinds())
    if (model::kindName(info.kind) == kind) return info.kind;
  FAIL("unknown kind in stream: " << kind);
  return model::Kind::Pod;
}

/// Plays `stream` through the daemon's path and returns the registry's exposition text.
struct Pipeline {
  explicit Pipeline(engine::EngineConfig config, const fs::path& storePath)
      : engine(std::move(config)), metrics(registry, kBuckets) {
    auto st = store::openSqliteStore(storePath.string());
    REQUIRE(st.ok());
    db = std::move(*st);
    for (const auto& c : engine.config().clusters)
      if (c.role != engine::ClusterRole::Management)
        metrics.initCluster(c.name, c.role == engine::ClusterRole::Worker);
  }

  void step(SystemTime now) {
    auto out = engine.advance(now);
    std::erase_if(out.observations, [](const engine::Observation& o) {
      return o.histogram == engine::HistogramKind::ObservationLag;
    });
    auto pending = records::toRecords(out, redactor);
    std::vector<store::Record> recs;
    for (const auto& p : pending) recs.push_back(p.record);
    auto accepted = db->commit(recs);
    REQUIRE(accepted.ok());
    for (size_t i = 0; i < pending.size(); ++i)
      if ((*accepted)[i]) metrics.exportCommitted(pending[i]);
  }

  void play(const std::string& stream) {
    std::istringstream in(stream);
    std::optional<SystemTime> current;
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      auto j = nlohmann::json::parse(line);
      auto at = parseRfc3339(j.at("at").get<std::string>());
      REQUIRE(at.ok());
      if (current && *current != *at) step(*current);
      current = *at;
      if (j.contains("advance")) continue;
      const std::string cluster = j.at("cluster").get<std::string>();
      if (j.contains("connected")) {
        engine.onConnection(cluster, j.at("connected").get<bool>(), *at, *at);
        continue;
      }
      const auto& ev = j.at("event");
      // The watch line exactly as an API server would send it.
      auto decoded = model::decodeWatchEvent(ev.dump(), kindOfJson(ev.at("object")));
      REQUIRE(decoded.ok());
      INFO(decoded->decodeError);
      REQUIRE(decoded->object.has_value());
      engine.onObject(cluster, decoded->type, *decoded->object, *at);
    }
    REQUIRE(current.has_value());
    step(*current);
    // Replayed in real time: the monotonic clock advances with the stream.
    metrics.apply(engine.snapshot(), engine.inventory().snapshot(),
                  MonotonicTime(std::chrono::duration_cast<MonotonicTime::duration>(
                      current->time_since_epoch())));
  }

  /// As /metrics serves it (MetricsSnapshot::render).
  std::string exposition() const { return http::serializeText(registry.Collect()); }

  prometheus::Registry registry;
  engine::MilestoneEngine engine;
  app::EngineMetrics metrics;
  log::Redactor redactor;
  store::StorePtr db;
};

fs::path tempStore(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("firstwork-exposition-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir / "store.db";
}

void checkGolden(const std::string& name, engine::EngineConfig config) {
  const fs::path dir = fs::path(FIRSTWORK_TEST_FIXTURES_DIR) / "exposition";
  const auto storePath = tempStore(name);
  std::string actual;
  {
    Pipeline p(std::move(config), storePath);
    p.play(readFile(dir / (name + ".jsonl")));
    actual = p.exposition();
  }
  auto got = sortedLines(actual, false);
  auto want = sortedLines(readFile(dir / (name + ".prom")), false);
  // Line-by-line so that a failure names the lines that differ, not two 200-line blobs.
  std::vector<std::string> missing, unexpected;
  std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missing));
  std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(unexpected));
  std::string report;
  for (const auto& l : missing) report += "  missing:    " + l + "\n";
  for (const auto& l : unexpected) report += "  unexpected: " + l + "\n";
  INFO("exposition differs from " << name << ".prom:\n" << report);
  CHECK(missing.empty());
  CHECK(unexpected.empty());
  CHECK(want.size() > 100);  // the expectation is not vacuous
  fs::remove_all(storePath.parent_path());
}

}  // namespace

TEST_CASE("golden exposition: standalone admission cycle to first work", "[app][exposition][golden]") {
  engine::EngineConfig config;
  config.clusters.push_back({"gpu-a", engine::ClusterRole::Standalone, ""});
  checkGolden("standalone", std::move(config));
}

TEST_CASE("golden exposition: MultiKueue reconnection incident", "[app][exposition][golden]") {
  engine::EngineConfig config;
  config.clusters.push_back({"manager", engine::ClusterRole::Management, ""});
  config.clusters.push_back({"worker-1", engine::ClusterRole::Worker, ""});
  checkGolden("multikueue-reconnection", std::move(config));
}

TEST_CASE("a ClusterQueue gone for 10 minutes takes its series with it, cluster series stay",
          "[app][exposition]") {
  const fs::path dir = fs::path(FIRSTWORK_TEST_FIXTURES_DIR) / "exposition";
  const std::string stream = readFile(dir / "multikueue-reconnection.jsonl");
  engine::EngineConfig config;
  config.clusters.push_back({"manager", engine::ClusterRole::Management, ""});
  config.clusters.push_back({"worker-1", engine::ClusterRole::Worker, ""});
  const auto storePath = tempStore("queue-deleted");
  Pipeline p(std::move(config), storePath);
  p.play(stream);
  auto countQueue = [](const std::string& text) {
    size_t n = 0;
    for (const auto& line : sortedLines(text, false))
      if (line.find("cluster_queue=\"train-cq\"") != std::string::npos) ++n;
    return n;
  };
  // Before: reservation (17) + 7 stages (7 × 17) histogram lines, 4 GPU-seconds counters and
  // the workloads gauge (see multikueue-reconnection.md).
  REQUIRE(countQueue(p.exposition()) == 17 + 7 * 17 + 4 + 1);

  // The ClusterQueue object of the stream is deleted at T+960.
  nlohmann::json cq;
  std::istringstream in(stream);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j.contains("event") && j["event"]["object"]["kind"] == "ClusterQueue") cq = j["event"]["object"];
  }
  REQUIRE(cq.is_object());
  nlohmann::json del = {{"at", "2026-08-20T10:16:00Z"},
                        {"cluster", "manager"},
                        {"event", {{"type", "DELETED"}, {"object", cq}}}};
  p.play(del.dump() + "\n");
  // Still there within the 10-minute grace (a queue deleted and re-applied keeps its series).
  CHECK(countQueue(p.exposition()) == 17 + 7 * 17 + 4 + 1);
  p.play(R"({"at":"2026-08-20T10:25:59Z","advance":true})" "\n");
  CHECK(countQueue(p.exposition()) == 17 + 7 * 17 + 4 + 1);
  p.play(R"({"at":"2026-08-20T10:26:00Z","advance":true})" "\n");
  auto after = p.exposition();
  CHECK(countQueue(after) == 0);
  // What belongs to the cluster is not the queue's: the incident's figures stay.
  CHECK(after.find("firstwork_recovery_stranded_gpu_seconds_total{cluster=\"worker-1\",device_class=\"nvidia.com/gpu\",unit=\"gpu\"} 1920") !=
        std::string::npos);
  CHECK(after.find("firstwork_stranded_gpu_seconds_total{cluster=\"worker-1\",device_class=\"nvidia.com/gpu\",phase=\"starting\",unit=\"gpu\"} 1440") !=
        std::string::npos);

  // Created again under the same name, the queue's counters start from 0: the reservation on the
  // manager ended at dispatch (T+390), nothing accrued there since, so the series must not bring
  // back the 1 080 GPU-s of the queue's previous life.
  cq["metadata"]["uid"] = "recreated-train-cq";
  nlohmann::json add = {{"at", "2026-08-20T10:16:30Z"},
                        {"cluster", "manager"},
                        {"event", {{"type", "ADDED"}, {"object", cq}}}};
  p.play(add.dump() + "\n");
  CHECK(p.exposition().find("firstwork_gpu_seconds_total{cluster=\"manager\",cluster_queue=\"train-cq\","
                            "device_class=\"nvidia.com/gpu\",state=\"reserved\",unit=\"gpu\"} 0\n") !=
        std::string::npos);
  fs::remove_all(storePath.parent_path());
}
