#include "firstwork/log/log.hpp"

#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/dist_sink.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>
#include <vector>

#include <fmt/format.h>

namespace firstwork::log {
namespace {

spdlog::level::level_enum toSpdlog(Level level) {
  switch (level) {
    case Level::Trace: return spdlog::level::trace;
    case Level::Debug: return spdlog::level::debug;
    case Level::Info: return spdlog::level::info;
    case Level::Warn: return spdlog::level::warn;
    case Level::Error: return spdlog::level::err;
    case Level::Off: return spdlog::level::off;
  }
  return spdlog::level::info;
}

// All loggers write to one dist_sink whose single child is swapped by logToStream/logToStderr, so
// redirecting output never has to touch the (not thread-safe) sink list of each logger.
struct LogState {
  std::mutex mu;
  std::shared_ptr<spdlog::sinks::dist_sink_mt> sink;
  Level level = Level::Info;
  std::shared_ptr<const Redactor> redactor = std::make_shared<Redactor>();

  LogState() : sink(std::make_shared<spdlog::sinks::dist_sink_mt>()) {
    setChild(std::make_shared<spdlog::sinks::stderr_sink_mt>());
  }
  void setChild(std::shared_ptr<spdlog::sinks::sink> child) {
    child->set_pattern("%v");  // the message already is the whole JSON line
    sink->set_sinks({std::move(child)});
  }
};

LogState& state() {
  static LogState s;
  return s;
}

std::shared_ptr<spdlog::logger> loggerFor(const std::string& name) {
  LogState& s = state();
  std::lock_guard lock(s.mu);
  if (auto existing = spdlog::get(name)) return existing;
  auto created = std::make_shared<spdlog::logger>(name, s.sink);
  created->set_level(toSpdlog(s.level));
  created->flush_on(spdlog::level::warn);
  spdlog::register_logger(created);
  return created;
}

bool isReservedKey(std::string_view key) {
  return key == "ts" || key == "level" || key == "logger" || key == "msg" || key == "schema";
}

}  // namespace

Result<Level> parseLevel(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "trace") return Level::Trace;
  if (lower == "debug") return Level::Debug;
  if (lower == "info") return Level::Info;
  if (lower == "warn" || lower == "warning") return Level::Warn;
  if (lower == "error") return Level::Error;
  if (lower == "off") return Level::Off;
  return makeError(fmt::format("unknown log level \"{}\" (expected trace, debug, info, warn, "
                               "error or off)", text));
}

std::string_view levelName(Level level) {
  switch (level) {
    case Level::Trace: return "trace";
    case Level::Debug: return "debug";
    case Level::Info: return "info";
    case Level::Warn: return "warn";
    case Level::Error: return "error";
    case Level::Off: return "off";
  }
  return "info";
}

bool isIdentityKey(std::string_view key) {
  return key == "namespace" || key == "workload" || key == "pod" || key == "job";
}

std::string formatTimestampMillis(SystemTime ts) {
  using namespace std::chrono;
  auto ms_total = duration_cast<milliseconds>(ts.time_since_epoch()).count();
  // Floor division so times before 1970 still get a non-negative millisecond part.
  long long secs = ms_total / 1000;
  long long ms = ms_total % 1000;
  if (ms < 0) {
    ms += 1000;
    secs -= 1;
  }
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04d}-{:02d}-{:02d}T{:02d}:{:02d}:{:02d}.{:03d}Z", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

std::string formatLine(SystemTime ts, Level level, std::string_view logger, std::string_view msg,
                       std::span<const Field> fields, const Redactor& redactor,
                       const SecretScrubber& scrubber) {
  nlohmann::ordered_json line = nlohmann::ordered_json::object();
  line["ts"] = formatTimestampMillis(ts);
  line["level"] = std::string(levelName(level));
  line["logger"] = std::string(logger);
  line["msg"] = scrubber.scrub(msg);
  for (const Field& field : fields) {
    std::string key = field.key().empty() ? std::string("_") : field.key();
    if (isReservedKey(key)) key += '_';
    if (line.contains(key)) continue;  // first occurrence wins: duplicate JSON keys are invalid
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            std::string value = isIdentityKey(field.key()) ? redactor.applyPath(v) : v;
            line[key] = scrubber.scrub(value);
          } else {
            line[key] = v;
          }
        },
        field.value());
  }
  line["schema"] = kSchemaVersion;
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void configure(const LogOptions& options) {
  LogState& s = state();
  std::lock_guard lock(s.mu);
  s.level = options.level;
  s.redactor = std::make_shared<Redactor>(options.redact, options.redactSalt);
  spdlog::apply_all([&](const std::shared_ptr<spdlog::logger>& l) {
    l->set_level(toSpdlog(options.level));
  });
}

void logToStream(std::ostream& out) {
  state().setChild(std::make_shared<spdlog::sinks::ostream_sink_mt>(out, /*force_flush=*/true));
}

void logToStderr() { state().setChild(std::make_shared<spdlog::sinks::stderr_sink_mt>()); }

std::shared_ptr<const Redactor> currentRedactor() {
  LogState& s = state();
  std::lock_guard lock(s.mu);
  return s.redactor;
}

namespace {

Level fromSpdlog(spdlog::level::level_enum l) {
  switch (l) {
    case spdlog::level::trace: return Level::Trace;
    case spdlog::level::debug: return Level::Debug;
    case spdlog::level::info: return Level::Info;
    case spdlog::level::warn: return Level::Warn;
    case spdlog::level::err:
    case spdlog::level::critical: return Level::Error;
    default: return Level::Off;
  }
}

/// Wraps a plain-text spdlog message into a JSON line and hands it to the shared sink.
class JsonWrapSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit JsonWrapSink(std::shared_ptr<spdlog::sinks::sink> target) : target_(std::move(target)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::string_view text(msg.payload.data(), msg.payload.size());
    std::string_view name(msg.logger_name.data(), msg.logger_name.size());
    std::string line = formatLine(msg.time, fromSpdlog(msg.level), name, text, {},
                                  *currentRedactor(), SecretScrubber::global());
    spdlog::details::log_msg out(msg.time, msg.source, msg.logger_name, msg.level,
                                 spdlog::string_view_t(line.data(), line.size()));
    target_->log(out);
  }
  void flush_() override { target_->flush(); }

 private:
  std::shared_ptr<spdlog::sinks::sink> target_;
};

}  // namespace

void adoptTextLogger(const std::string& name, bool makeDefault) {
  LogState& s = state();
  std::shared_ptr<spdlog::logger> logger;
  {
    std::lock_guard lock(s.mu);
    spdlog::drop(name);
    logger = std::make_shared<spdlog::logger>(name, std::make_shared<JsonWrapSink>(s.sink));
    logger->set_level(toSpdlog(s.level));
    logger->flush_on(spdlog::level::warn);
  }
  if (makeDefault) {
    spdlog::set_default_logger(logger);
  } else {
    spdlog::register_logger(logger);
  }
}

Logger::Logger(const std::string& name) : name_(name), logger_(loggerFor(name)) {}

bool Logger::enabled(Level level) const {
  return level != Level::Off && logger_->should_log(toSpdlog(level));
}

void Logger::log(Level level, std::string_view msg, std::initializer_list<Field> fields) const {
  log(level, msg, std::span<const Field>(fields.begin(), fields.size()));
}

void Logger::log(Level level, std::string_view msg, std::span<const Field> fields) const {
  if (!enabled(level)) return;
  try {
    std::string line = formatLine(std::chrono::system_clock::now(), level, name_, msg, fields,
                                  *currentRedactor(), SecretScrubber::global());
    logger_->log(toSpdlog(level), spdlog::string_view_t(line.data(), line.size()));
  } catch (...) {
    // Logging must never take the daemon down (allocation failure, a sink that throws).
  }
}

void logEvent(Level level, const std::string& logger, std::string_view msg,
              std::initializer_list<Field> fields) {
  Logger(logger).log(level, msg, fields);
}

}  // namespace firstwork::log
