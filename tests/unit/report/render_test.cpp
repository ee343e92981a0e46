#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "firstwork/report/render.hpp"
#include "report_fixtures.hpp"

using namespace firstwork;
using namespace firstwork::testing;
using std::chrono::seconds;

namespace {

report::Report drillComparison(ReconnectTimes baseline, ReconnectTimes current, report::Options o) {
  auto b = drillData(baseline);
  auto c = drillData(current);
  return report::buildReport(c, &b, o);
}

const report::OutputFile* find(const std::vector<report::OutputFile>& files, const std::string& name) {
  for (const auto& f : files)
    if (f.name == name) return &f;
  return nullptr;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// The report of what the engine produced, through the store and back, as the report reads what
/// the daemon wrote (09:00–14:00 on 2026-05-01).
report::Report reportThroughStore(const engine::Outputs& out) {
  auto t = [](const char* s) { return parseRfc3339(s).value(); };
  auto s = store::makeMemoryStore();
  std::vector<store::Record> recs;
  for (auto& p : records::toRecords(out, log::Redactor())) recs.push_back(std::move(p.record));
  REQUIRE(s->commit(recs).ok());
  auto data = report::loadPeriod(*s, t("2026-05-01T09:00:00Z"), t("2026-05-01T14:00:00Z"));
  REQUIRE(data.ok());
  return report::buildReport(*data, nullptr, {});
}

}  // namespace

TEST_CASE("Markdown states the before/after figures of the source material", "[report][render]") {
  report::Options o;
  o.ratePerGpuHour = 4;
  auto files = report::renderMarkdown(drillComparison(kBaselineDrill, kImprovedDrill, o));
  const auto* md = find(files, "report.md");
  REQUIRE(md);
  INFO(md->content);
  // 320 → 128 GPU-minutes: 192 fewer (60 %), 3.2 GPU-h, × US$4 = US$12.80.
  CHECK(contains(md->content,
                 "- w1 incident 1: 320.0 → 128.0 GPU-minutes stranded after reconnection, a "
                 "reduction of 192.0 GPU-minutes (60.0 %), 3.20 GPU-hours worth US$12.80 at "
                 "US$4.00 per GPU-hour."));
  CHECK(contains(md->content, "| w1 | 1 | 2026-05-01T10:10:00Z | 2026-05-01T10:10:00Z | 320.0 → "
                              "128.0 | -192.0 | -60.0 % | US$12.80 | 8m 00s → 3m 00s | 12m 00s → "
                              "5m 00s | recovered → recovered |"));
  CHECK(contains(md->content, "No slower tail, new failure or increase to call out."));
  // The incident row: milestones as offsets from the reconnection (R = 10:10:00).
  CHECK(contains(md->content, "| 1 | w1 | 2026-05-01T10:00:00Z | 2026-05-01T10:10:00Z | 10m 00s | "
                              "32 | 32 | R+1m 00s | R+2m 00s | R+3m 00s | R+5m 00s | R+5m 00s | "
                              "recovered | 128.0 |"));
  CHECK(contains(md->content, "![Recovery curve of incident 1 on w1](recovery-1-w1.svg)"));
  CHECK(contains(md->content, "### Failed recoveries\n\nNone in this period."));
  CHECK(contains(md->content, "- **Reclaims:** none."));
  CHECK(contains(md->content, "| cluster=w1 | 2 | — | — | — | 5m 00s | 3m 00s, 5m 00s |"));
  CHECK(contains(md->content, "![Distribution of firstwork_reconnect_to_first_work_seconds]"
                              "(latency-reconnect_to_first_work_seconds.svg)"));
  // Every plot the Markdown links is written beside it.
  for (const auto& f : files) {
    if (f.name == "report.md") continue;
    CHECK(contains(md->content, "](" + f.name + ")"));
    CHECK(f.content.rfind("<?xml", 0) == 0);
  }
  // The recovery plot overlays the baseline's curve.
  const auto* plot = find(files, "recovery-1-w1.svg");
  REQUIRE(plot);
  CHECK(contains(plot->content, "baseline: incident reconnected 2026-05-01T10:10:00Z"));
  CHECK(contains(plot->content, "first useful work (R+3m 00s)"));
  CHECK(contains(plot->content, "GPUs wanted by waiting work at reconnection: 32"));
}

TEST_CASE("Markdown lists failed recoveries and calls out the new failure", "[report][render]") {
  auto files = report::renderMarkdown(drillComparison(kBaselineDrill, kFailedDrill, {}));
  const auto& md = find(files, "report.md")->content;
  INFO(md);
  CHECK(contains(md, "- **Reconnection incidents:** 1 — 0 recovered, 1 failed; 960.0 GPU-minutes"));
  CHECK(contains(md, "**Called out:**\n\n- w1 incident 1: NEW FAILURE — the recovery failed "
                     "(budget), the baseline's recovered\n"));
  CHECK(contains(md, "### Failed recoveries\n\n| # | Worker | Reconnected | Failed at | Reason | "
                     "GPUs waiting | Stranded GPU-min |\n|---|---|---|---|---|---|---|\n| 1 | w1 | "
                     "2026-05-01T10:10:00Z | 2026-05-01T10:40:00Z | recovery budget ran out | 32 | "
                     "960.0 |"));
  CHECK(contains(md, "Give --ownership-cost (per owned GPU-hour) and --rate-per-gpu-hour"));
}

TEST_CASE("CSV tables and the JSON carry every figure of a comparison", "[report][render]") {
  report::Options o;
  o.ratePerGpuHour = 4;
  auto r = drillComparison(kBaselineDrill, {seconds(120), seconds(180), seconds(150), seconds(900)}, o);
  auto csv = report::renderCsv(r);
  const auto* inc = find(csv, "incidents.csv");
  REQUIRE(inc);
  CHECK(inc->content.rfind("index,cluster,outcome,failure_reason,disconnected_at,", 0) == 0);
  CHECK(contains(inc->content, "\r\n1,w1,recovered,,2026-05-01T10:00:00Z,2026-05-01T10:10:00Z,600,"
                               "32,32,2026-05-01T10:11:00Z,"));
  CHECK(contains(inc->content, ",900,17280,288,2,180,900\r\n"));
  const auto* cmp = find(csv, "comparison_incidents.csv");
  REQUIRE(cmp);
  // A callout without a comma, quote or line break stands unquoted.
  CHECK(contains(cmp->content, ",recovered,recovered,w1 incident 1: SLOWER TAIL — slowest "
                               "reconnection to first work 12m 00s → 15m 00s (typical 8m 00s → "
                               "3m 00s)\r\n"));
  for (const char* name : {"telemetry_gaps.csv", "reclaims.csv", "latency.csv", "gpu_hours.csv",
                           "capacity.csv", "comparison_reclaims.csv"})
    CHECK(find(csv, name));

  auto j = nlohmann::json::parse(report::renderJson(r).content);
  CHECK(j["incidents"][0]["stranded_gpu_seconds"] == 17280.0);
  CHECK(j["incidents"][0]["reconnect_to_first_work_seconds"] == nlohmann::json({180.0, 900.0}));
  CHECK(j["incidents"][0]["recovery_curve"]["plot"] == "recovery-1-w1.svg");
  CHECK(j["comparison"]["incidents"][0]["reduction_gpu_seconds"] == 1920.0);
  CHECK(j["comparison"]["callouts"].size() == 1);
  CHECK(j["baseline"]["incidents"][0]["stranded_gpu_seconds"] == 19200.0);
  CHECK(j["cost_allocation"]["note"] == "allocation of capacity, not cash");
  CHECK(j["options"]["rate_per_gpu_hour"] == 4.0);
}

TEST_CASE("A recovery's length is printed once the incident has closed and left blank while it is open",
          "[report][render]") {
  auto t = [](const char* s) { return parseRfc3339(s).value(); };
  engine::Outputs out;
  engine::IncidentRecord closed;
  closed.id = "incident/w1/multikueue/a";
  closed.cluster = "w1";
  closed.outcome = engine::IncidentOutcome::Recovered;
  closed.disconnectedAt = t("2026-05-01T10:00:00Z");
  closed.reconnectedAt = t("2026-05-01T10:05:00Z");
  closed.recoveredAt = closed.closedAt = t("2026-05-01T10:17:00Z");  // R + 12 min
  closed.recoverySeconds = 720.0;
  closed.disconnectedSeconds = 300.0;
  closed.observedAt = t("2026-05-01T10:17:00Z");
  engine::IncidentRecord open = closed;
  open.id = "incident/w1/multikueue/b";
  open.outcome = engine::IncidentOutcome::Recovering;
  open.disconnectedAt = t("2026-05-01T11:00:00Z");
  open.reconnectedAt = t("2026-05-01T11:05:00Z");
  open.recoveredAt.reset();
  open.closedAt.reset();
  open.recoverySeconds.reset();
  open.observedAt = t("2026-05-01T11:05:00Z");
  out.incidents = {closed, open};
  const auto r = reportThroughStore(out);
  REQUIRE(r.current.incidents.size() == 2);

  auto j = nlohmann::json::parse(report::renderJson(r).content);
  INFO(j.dump(1));
  CHECK(j["incidents"][0]["recovery_seconds"] == 720.0);
  REQUIRE(j["incidents"][1].contains("recovery_seconds"));
  CHECK(j["incidents"][1]["recovery_seconds"].is_null());  // not 0: it has not recovered

  const auto mdFiles = report::renderMarkdown(r);
  const auto& md = find(mdFiles, "report.md")->content;
  CHECK(contains(md, "recovered 12m 00s after the reconnection"));
  CHECK_FALSE(contains(md, "recovered 0s after the reconnection"));
}

TEST_CASE("An outage's length is printed when both its ends are known and left blank otherwise",
          "[report][render]") {
  auto t = [](const char* s) { return parseRfc3339(s).value(); };
  // As the engine records them: the length is set only when both ends are known.
  auto outage = [](std::string id, engine::IncidentSource source, std::optional<SystemTime> lost,
                   SystemTime regained, std::optional<double> length) {
    engine::IncidentRecord i;
    i.id = std::move(id);
    i.cluster = source == engine::IncidentSource::Probe ? "w2" : "w1";
    i.source = source;
    i.outcome = engine::IncidentOutcome::Recovered;
    i.disconnectedAt = lost;
    i.reconnectedAt = regained;
    i.recoveredAt = i.closedAt = regained;
    i.observedAt = regained;
    i.disconnectedSeconds = length;
    return i;
  };
  using engine::IncidentSource;
  engine::Outputs out;
  out.incidents = {
      // 10:00:00 → 10:05:00 = 300 s.
      outage("incident/w1/multikueue/a", IncidentSource::MultiKueue, t("2026-05-01T10:00:00Z"),
             t("2026-05-01T10:05:00Z"), 300.0),
      outage("incident/w1/multikueue/b", IncidentSource::MultiKueue, std::nullopt,
             t("2026-05-01T11:00:00Z"), std::nullopt),
      // 12:00:00 → 12:00:45 = 45 s; 13:30:00 → 13:30:00 = 0 s (known, not unknown).
      outage("incident/w2/probe/c", IncidentSource::Probe, t("2026-05-01T12:00:00Z"),
             t("2026-05-01T12:00:45Z"), 45.0),
      outage("incident/w2/probe/d", IncidentSource::Probe, std::nullopt, t("2026-05-01T13:00:00Z"),
             std::nullopt),
      outage("incident/w2/probe/e", IncidentSource::Probe, t("2026-05-01T13:30:00Z"),
             t("2026-05-01T13:30:00Z"), 0.0),
  };
  const auto r = reportThroughStore(out);
  REQUIRE(r.current.incidents.size() == 2);
  REQUIRE(r.current.telemetryGaps.size() == 3);

  const auto mdFiles = report::renderMarkdown(r);
  const auto& md = find(mdFiles, "report.md")->content;
  INFO(md);
  CHECK(contains(md, "| 1 | w1 | 2026-05-01T10:00:00Z | 2026-05-01T10:05:00Z | 5m 00s | 0 | 0 |"));
  CHECK(contains(md, "| 2 | w1 | — | 2026-05-01T11:00:00Z | — | 0 | 0 |"));
  CHECK(contains(md, "| w2 | 2026-05-01T12:00:00Z | 2026-05-01T12:00:45Z | 45s |\n"));
  CHECK(contains(md, "| w2 | — | 2026-05-01T13:00:00Z | — |\n"));
  CHECK(contains(md, "| w2 | 2026-05-01T13:30:00Z | 2026-05-01T13:30:00Z | 0s |\n"));

  const auto csv = report::renderCsv(r);
  const auto& inc = find(csv, "incidents.csv")->content;
  CHECK(contains(inc, "\r\n1,w1,recovered,,2026-05-01T10:00:00Z,2026-05-01T10:05:00Z,300,0,0,"));
  CHECK(contains(inc, "\r\n2,w1,recovered,,,2026-05-01T11:00:00Z,,0,0,"));
  CHECK(find(csv, "telemetry_gaps.csv")->content ==
        "cluster,lost_at,regained_at,seconds\r\n"
        "w2,2026-05-01T12:00:00Z,2026-05-01T12:00:45Z,45\r\n"
        "w2,,2026-05-01T13:00:00Z,\r\n"
        "w2,2026-05-01T13:30:00Z,2026-05-01T13:30:00Z,0\r\n");

  auto j = nlohmann::json::parse(report::renderJson(r).content);
  CHECK(j["incidents"][0]["disconnected_seconds"] == 300.0);
  CHECK(j["incidents"][1]["disconnected_seconds"].is_null());
  CHECK(j["telemetry_gaps"][0]["seconds"] == 45.0);
  CHECK(j["telemetry_gaps"][1]["seconds"].is_null());
  REQUIRE(j["telemetry_gaps"][2]["seconds"].is_number());
  CHECK(j["telemetry_gaps"][2]["seconds"] == 0.0);
}

TEST_CASE("CSV fields with commas, quotes or line breaks are quoted (RFC 4180)", "[report][render]") {
  report::Report r;
  report::ReclaimView v;
  v.record.id = "reclaim/m/u/1";
  v.record.cluster = "w1";
  v.record.preemptor = {"m", "team \"a\"", "job,1", "u", "cq", "lq"};
  v.record.startedAt = parseRfc3339("2026-05-01T10:00:00Z").value();
  r.current.reclaims.push_back(v);
  const auto files = report::renderCsv(r);  // kept: find() points into it (ASan: use after free)
  const auto* rec = find(files, "reclaims.csv");
  REQUIRE(rec);
  CHECK(contains(rec->content, "\r\n1,w1,cq,\"team \"\"a\"\"/job,1\",,pending,,"));
}

TEST_CASE("writeReport writes every file and reports what it cannot write", "[report][render]") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("fw-report-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto r = drillComparison(kBaselineDrill, kImprovedDrill, {});
  auto written = report::writeReport(
      r, {report::Format::Markdown, report::Format::Csv, report::Format::Json}, (dir / "out").string());
  REQUIRE(written.ok());
  CHECK(written->front() == (dir / "out" / "report.md").string());
  for (const auto& p : *written) CHECK(fs::file_size(p) > 0);
  CHECK(fs::exists(dir / "out" / "report.json"));
  CHECK(fs::exists(dir / "out" / "incidents.csv"));
  CHECK(fs::exists(dir / "out" / "recovery-1-w1.svg"));
  for (const auto& e : fs::directory_iterator(dir / "out"))
    CHECK(e.path().extension() != ".tmp");
  // An output "directory" that is a file cannot be used.
  std::ofstream(dir / "file") << "x";
  auto bad = report::writeReport(r, {report::Format::Json}, (dir / "file").string());
  REQUIRE_FALSE(bad.ok());
  CHECK(contains(bad.error(), "cannot"));
  fs::remove_all(dir);
}
