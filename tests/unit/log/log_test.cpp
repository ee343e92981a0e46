#include "firstwork/log/log.hpp"

#include <spdlog/spdlog.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <limits>
#include <sstream>
#include <vector>

using namespace firstwork;
using namespace firstwork::log;

namespace {
// 2026-05-01T10:00:00Z is 1777629600 s after the epoch (`date -u -d @1777629600`), + 250 ms.
const SystemTime kTs = SystemTime{} + std::chrono::seconds(1777629600) +
                       std::chrono::milliseconds(250);
}  // namespace

TEST_CASE("a log line has the pinned key set and order", "[log][golden]") {
  std::vector<Field> fields{{"cluster", "worker-1"},
                            {"resource", "workloads"},
                            {"reason", "expired"},
                            {"backoff_ms", 800},
                            {"synced", false}};
  std::string line = formatLine(kTs, Level::Warn, "watch", "watch restarted", fields, Redactor{},
                                SecretScrubber{});
  CHECK(line ==
        R"({"ts":"2026-05-01T10:00:00.250Z","level":"warn","logger":"watch","msg":"watch restarted",)"
        R"("cluster":"worker-1","resource":"workloads","reason":"expired","backoff_ms":800,)"
        R"("synced":false,"schema":1})");
}

TEST_CASE("timestamps always carry three fractional digits in UTC", "[log]") {
  CHECK(formatTimestampMillis(SystemTime{} + std::chrono::seconds(1777629600)) ==
        "2026-05-01T10:00:00.000Z");
  CHECK(formatTimestampMillis(SystemTime{}) == "1970-01-01T00:00:00.000Z");
  // 1 ms before the epoch: floor division gives 23:59:59.999 on the previous day.
  CHECK(formatTimestampMillis(SystemTime{} - std::chrono::milliseconds(1)) ==
        "1969-12-31T23:59:59.999Z");
}

TEST_CASE("strings are JSON-escaped and invalid UTF-8 does not throw", "[log]") {
  std::vector<Field> fields{{"path", "a\"b\\c\nd\te"}, {"bytes", std::string("x\xff")}};
  std::string line = formatLine(kTs, Level::Info, "t", "quote\" ctrl\x01", fields, Redactor{},
                                SecretScrubber{});
  CHECK(line.find(R"("msg":"quote\" ctrl\u0001")") != std::string::npos);
  CHECK(line.find(R"("path":"a\"b\\c\nd\te")") != std::string::npos);
  // U+FFFD REPLACEMENT CHARACTER, written as UTF-8 (EF BF BD).
  CHECK(line.find("\"bytes\":\"x\xEF\xBF\xBD\"") != std::string::npos);
}

TEST_CASE("reserved and duplicate field keys cannot corrupt the line", "[log]") {
  std::vector<Field> fields{{"msg", "spoof"}, {"cluster", "a"}, {"cluster", "b"}, {"schema", 9}};
  std::string line = formatLine(kTs, Level::Error, "t", "real", fields, Redactor{},
                                SecretScrubber{});
  CHECK(line ==
        R"({"ts":"2026-05-01T10:00:00.250Z","level":"error","logger":"t","msg":"real",)"
        R"("msg_":"spoof","cluster":"a","schema_":9,"schema":1})");
}

TEST_CASE("numbers keep their JSON type", "[log]") {
  std::vector<Field> fields{{"i", -3}, {"u", uint64_t{18446744073709551615ULL}}, {"d", 0.5},
                            {"nan", std::numeric_limits<double>::quiet_NaN()}};
  std::string line = formatLine(kTs, Level::Debug, "t", "m", fields, Redactor{}, SecretScrubber{});
  CHECK(line.find(R"("i":-3,"u":18446744073709551615,"d":0.5,"nan":null)") != std::string::npos);
}

TEST_CASE("identity fields are hashed when redaction is on", "[log][redact]") {
  Redactor redactor(true, "pepper");
  std::vector<Field> fields{{"cluster", "worker-1"},
                            {"namespace", "team-a"},
                            {"workload", "team-a/job-7"},
                            {"reason", "team-a"}};
  std::string line = formatLine(kTs, Level::Info, "engine", "m", fields, redactor,
                                SecretScrubber{});
  // printf 'pepper\0team-a' | sha256sum → 45a0b76bf8a3…; printf 'pepper\0job-7' → aa7500793946…
  CHECK(line.find(R"("cluster":"worker-1","namespace":"45a0b76bf8a3",)"
                  R"("workload":"45a0b76bf8a3/aa7500793946","reason":"team-a")") !=
        std::string::npos);
}

TEST_CASE("message and values are scrubbed of credentials", "[log][redact]") {
  SecretScrubber scrubber;
  REQUIRE(scrubber.addSecret("s3cr3t-token-value\n"));
  std::vector<Field> fields{{"header", "Authorization: Bearer abc.def-ghi"},
                            {"body", "got s3cr3t-token-value back"}};
  std::string line =
      formatLine(kTs, Level::Warn, "kube", "request with bearer xyz12345 failed", fields, Redactor{},
                 scrubber);
  CHECK(line.find("abc.def-ghi") == std::string::npos);
  CHECK(line.find("s3cr3t-token-value") == std::string::npos);
  CHECK(line.find(R"("msg":"request with bearer <redacted> failed")") != std::string::npos);
  CHECK(line.find(R"("header":"Authorization: Bearer <redacted>")") != std::string::npos);
  CHECK(line.find(R"("body":"got <redacted> back")") != std::string::npos);
}

TEST_CASE("levels parse case-insensitively and reject unknown names", "[log]") {
  CHECK(parseLevel("INFO").value() == Level::Info);
  CHECK(parseLevel("warning").value() == Level::Warn);
  CHECK(parseLevel("off").value() == Level::Off);
  auto bad = parseLevel("verbose");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("verbose") != std::string::npos);
  CHECK(levelName(Level::Error) == "error");
}

TEST_CASE("loggers write one JSON line per call at or above the configured level", "[log]") {
  std::ostringstream out;
  logToStream(out);
  configure(LogOptions{Level::Info, true, "pepper"});
  Logger logger("unit-test");
  logger.debug("hidden");
  logger.info("shown", {{"namespace", "team-a"}});
  logEvent(Level::Error, "unit-test-2", "also shown");
  logToStderr();
  configure(LogOptions{});

  std::string text = out.str();
  CHECK(text.find("hidden") == std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') == 2);
  CHECK(text.find(R"("logger":"unit-test","msg":"shown","namespace":"45a0b76bf8a3","schema":1})"
                  "\n") != std::string::npos);
  CHECK(text.find(R"("level":"error","logger":"unit-test-2","msg":"also shown","schema":1})") !=
        std::string::npos);
  CHECK_FALSE(Logger("unit-test").enabled(Level::Debug));
}

TEST_CASE("plain-text spdlog loggers are adopted into schema-1 JSON lines without secrets",
          "[log]") {
  std::ostringstream out;
  logToStream(out);
  configure(LogOptions{Level::Info, false, ""});
  auto previousDefault = spdlog::default_logger();
  adoptTextLogger("text-area");
  adoptTextLogger("text-default", true);
  spdlog::get("text-area")->warn("cluster unreachable cluster={} auth=\"Bearer {}\"", "w1",
                                 "s3cr3t-t0ken-value");
  spdlog::debug("below the level");
  spdlog::info("library line");
  logToStderr();
  spdlog::set_default_logger(previousDefault);

  std::string text = out.str();
  INFO(text);
  CHECK(std::count(text.begin(), text.end(), '\n') == 2);
  CHECK(text.find(R"("level":"warn","logger":"text-area","msg":"cluster unreachable cluster=w1 )"
                  R"(auth=\"Bearer <redacted>\"","schema":1})") != std::string::npos);
  CHECK(text.find("s3cr3t") == std::string::npos);
  CHECK(text.find(R"("logger":"text-default","msg":"library line","schema":1})") !=
        std::string::npos);
}
