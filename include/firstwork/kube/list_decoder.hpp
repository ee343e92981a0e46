#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "firstwork/core/result.hpp"
#include "firstwork/model/decode.hpp"

namespace boost::asio {
class io_context;
}

namespace firstwork::kube {

/// Where a reflector's LIST pages are decoded. A page of 500 pods takes milliseconds to decode;
/// at the full benchmark estate's initial sync that was about 3 of the sync's 6–8 CPU-s, all on
/// the loop that also receives the pages, stores their objects and delivers them. Off the loop,
/// the decode of one page overlaps the loop's work on the ones before (bench/README.md, change 55).
class ListDecoder {
 public:
  /// The decoded page, and the body it was decoded from, spent: its memory can receive the next
  /// page (HttpRequest::bodyBuffer).
  using Done = std::function<void(Result<model::ListPage>, std::string spent)>;
  virtual ~ListDecoder() = default;
  /// Decodes `body` as a list of `kind` (keeping what `options` says; null: everything) and runs
  /// `done` with the result and the body on the event loop, in the order the pages were given.
  /// `done` may never run when the decoder is destroyed first.
  virtual void decode(std::string body, model::Kind kind,
                      std::shared_ptr<const model::DecodeOptions> options, Done done) = 0;
  /// Gives back the decoding thread's buffers when they hold more than `keepBytes` (see
  /// model::releaseDecodeBuffers), once the pages given before are decoded; then runs
  /// `released` (if any) on the event loop with the capacity given back.
  virtual void releaseBuffers(size_t keepBytes, std::function<void(size_t)> released = {}) = 0;
};

/// Decodes on the event loop itself, in a handler posted to it: whatever the loop was asked to do
/// before (a request to send) goes first. What a reflector uses without a decoder of its own.
std::unique_ptr<ListDecoder> makeLoopListDecoder(boost::asio::io_context& io);

/// Decodes on a thread of its own, named `threadName`, and posts each result to `io`. Destroying
/// it waits for the page in hand; pages not begun are dropped. Destroy it before `io`.
std::unique_ptr<ListDecoder> makeThreadListDecoder(boost::asio::io_context& io,
                                                   const std::string& threadName);

}  // namespace firstwork::kube
