#pragma once
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

#include "firstwork/core/clock.hpp"
#include "firstwork/core/result.hpp"
#include "firstwork/log/redact.hpp"

namespace spdlog {
class logger;
}

namespace firstwork::log {

/// Version of the JSON line schema, written as `"schema":1` on every line. Log text is a
/// compatibility surface (design §8): bump it when a key is renamed or its meaning changes.
inline constexpr int kSchemaVersion = 1;

enum class Level : uint8_t { Trace, Debug, Info, Warn, Error, Off };

/// Accepts `trace`, `debug`, `info`, `warn` (or `warning`), `error`, `off`; case-insensitive.
Result<Level> parseLevel(std::string_view text);
/// The name written in the `level` key: `trace`, `debug`, `info`, `warn`, `error` (`off` for Off).
std::string_view levelName(Level level);

/// One key/value of a log line. Values are strings, integers, doubles or booleans and are written
/// as the matching JSON type.
class Field {
 public:
  using Value = std::variant<std::string, int64_t, uint64_t, double, bool>;

  Field(std::string_view key, std::string_view value) : key_(key), value_(std::string(value)) {}
  Field(std::string_view key, const std::string& value) : key_(key), value_(value) {}
  Field(std::string_view key, const char* value) : key_(key), value_(std::string(value)) {}
  template <typename T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_signed_v<T>)
  Field(std::string_view key, T value) : key_(key), value_(static_cast<int64_t>(value)) {}
  template <typename T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && std::is_unsigned_v<T>)
  Field(std::string_view key, T value) : key_(key), value_(static_cast<uint64_t>(value)) {}
  Field(std::string_view key, double value) : key_(key), value_(value) {}
  Field(std::string_view key, bool value) : key_(key), value_(value) {}

  const std::string& key() const { return key_; }
  const Value& value() const { return value_; }

 private:
  std::string key_;
  Value value_;
};

/// Keys whose string values name tenants or jobs and are hashed when redaction is on:
/// `namespace`, `workload`, `pod`, `job` (values of the form `ns/name` are hashed per segment).
bool isIdentityKey(std::string_view key);

/// Formats one JSON log line, without the trailing newline. Key order is fixed:
/// `ts` (RFC 3339 UTC, always milliseconds), `level`, `logger`, `msg`, then the fields in the order
/// given, then `"schema":1`. A field whose key repeats an earlier one is dropped; a field named
/// like a fixed key (`ts`, `level`, `logger`, `msg`, `schema`) is written as `<key>_`. String
/// values and the message pass through `scrubber`; identity keys through `redactor`. Invalid
/// UTF-8 is replaced by U+FFFD rather than failing. Pure; the golden test pins its output.
std::string formatLine(SystemTime ts, Level level, std::string_view logger, std::string_view msg,
                       std::span<const Field> fields, const Redactor& redactor,
                       const SecretScrubber& scrubber);

/// `2026-05-01T10:00:00.250Z`: RFC 3339 UTC with exactly three fractional digits.
std::string formatTimestampMillis(SystemTime ts);

/// Process-wide logging settings (from config `logging`).
struct LogOptions {
  Level level = Level::Info;
  bool redact = false;
  std::string redactSalt;
};

/// Applies level and redaction to every logger, existing and future. Thread-safe.
void configure(const LogOptions& options);
/// Lines go to stderr by default (the container log); these redirect them. The stream must
/// outlive its use (tests pass a std::ostringstream and restore stderr afterwards).
void logToStream(std::ostream& out);
void logToStderr();
/// Registers a spdlog logger `name` for code that logs plain text through spdlog (the kube layer's
/// `key=value` messages): each message becomes one schema-1 JSON line with the text as `msg`,
/// scrubbed of secrets, through the same sink as every other logger. With `makeDefault`, it also
/// becomes spdlog's default logger, so no library line escapes the JSON format. Thread-safe.
void adoptTextLogger(const std::string& name, bool makeDefault = false);
/// The redactor currently configured (for the API layer, which hashes the same way as the logs).
std::shared_ptr<const Redactor> currentRedactor();

/// A named logger for one area (`watch`, `http`, `config`, `signals`, ...). Cheap to copy; every
/// logger of a name shares one spdlog logger, and every logger writes to one sink. Thread-safe.
class Logger {
 public:
  explicit Logger(const std::string& name);

  const std::string& name() const { return name_; }
  bool enabled(Level level) const;
  void log(Level level, std::string_view msg, std::initializer_list<Field> fields = {}) const;
  void log(Level level, std::string_view msg, std::span<const Field> fields) const;
  void trace(std::string_view msg, std::initializer_list<Field> fields = {}) const {
    log(Level::Trace, msg, fields);
  }
  void debug(std::string_view msg, std::initializer_list<Field> fields = {}) const {
    log(Level::Debug, msg, fields);
  }
  void info(std::string_view msg, std::initializer_list<Field> fields = {}) const {
    log(Level::Info, msg, fields);
  }
  void warn(std::string_view msg, std::initializer_list<Field> fields = {}) const {
    log(Level::Warn, msg, fields);
  }
  void error(std::string_view msg, std::initializer_list<Field> fields = {}) const {
    log(Level::Error, msg, fields);
  }

 private:
  std::string name_;
  std::shared_ptr<spdlog::logger> logger_;
};

/// One-shot form: `logEvent(Level::Warn, "watch", "watch restarted", {{"cluster", c}})`.
void logEvent(Level level, const std::string& logger, std::string_view msg,
              std::initializer_list<Field> fields = {});

}  // namespace firstwork::log
