#pragma once
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>

namespace firstwork::log {

/// Replaces identifying names (namespaces, workload and pod names) with a salted hash so logs and
/// API output can be shared without naming teams or jobs. Immutable after construction; thread-safe.
///
/// The hash is the first 12 hex digits of SHA-256(salt || 0x00 || value): stable for one install
/// (so a redacted workload can still be followed through the logs), unlinkable across installs
/// with different salts, and not reversible by hashing a list of likely names unless the salt is
/// known — which is why the config requires a salt when redaction is on.
class Redactor {
 public:
  /// Disabled: apply() returns its input unchanged.
  Redactor() = default;
  Redactor(bool enabled, std::string salt);

  bool enabled() const { return enabled_; }
  /// Always hashes, whether or not redaction is enabled: 12 lower-case hex digits.
  std::string hash(std::string_view value) const;
  /// hash(value) when enabled, else value. The empty string stays empty (nothing to hide).
  std::string apply(std::string_view value) const;
  /// For `namespace/name` references: each '/'-separated segment redacted on its own, so all
  /// workloads of one namespace still share the namespace hash. Unchanged when disabled.
  std::string applyPath(std::string_view path) const;

 private:
  bool enabled_ = false;
  std::string salt_;
};

/// Removes credentials from text before it is logged. Two rules: the credential after an HTTP
/// authorization scheme (`Bearer x`, `Basic x`, case-insensitive; x of 8 or more token
/// characters, so prose like "bearer token" survives) becomes `<redacted>`, and every
/// secret value registered at run time (tokens read from files, passwords) is replaced by
/// `<redacted>` wherever it appears. Thread-safe: token readers register secrets from any thread
/// while loggers scrub.
class SecretScrubber {
 public:
  /// Values shorter than this are not registered: a 3-letter "secret" would blank out ordinary
  /// words, and no real token is that short.
  static constexpr size_t kMinSecretLength = 6;
  /// Rotated tokens keep being registered; the oldest are forgotten past this many.
  static constexpr size_t kMaxSecrets = 64;

  /// Registers a secret (surrounding whitespace is trimmed, as token files end in a newline).
  /// Returns false when the value is too short to register.
  bool addSecret(std::string_view value);
  void clear();
  size_t secretCount() const;
  std::string scrub(std::string_view text) const;

  /// The process-wide scrubber that every log line passes through.
  static SecretScrubber& global();

 private:
  mutable std::mutex mu_;
  std::deque<std::string> secrets_;  // longest-first order is not needed: replacements don't overlap
};

}  // namespace firstwork::log
