#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace firstwork::kube {

/// Splits a byte stream into newline-terminated lines, independent of how the bytes were
/// chunked on the wire (watch events are one JSON object + `\n`; HTTP chunks are unrelated).
/// A trailing `\r` is dropped and empty lines are skipped. A line longer than `maxLineBytes`
/// is an error: the stream cannot be trusted past it. Single-threaded (owned by one watch).
class LineFramer {
 public:
  explicit LineFramer(size_t maxLineBytes = 1536 * 1024) : maxLineBytes_(maxLineBytes) {}

  enum class Outcome { Ok, LineTooLong, Stopped };

  /// Feeds bytes; calls `onLine` for every complete line (the view is valid during the call).
  /// `onLine` returns false to stop: the rest of the chunk is dropped and Stopped returned.
  Outcome feed(std::string_view chunk, const std::function<bool(std::string_view)>& onLine);

  /// Bytes of an incomplete line held back.
  size_t pending() const { return buffer_.size(); }
  void reset() { buffer_.clear(); }

 private:
  size_t maxLineBytes_;
  std::string buffer_;
};

}  // namespace firstwork::kube
