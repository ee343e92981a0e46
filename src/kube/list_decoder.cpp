#include "firstwork/kube/list_decoder.hpp"

#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "firstwork/core/thread_name.hpp"

namespace firstwork::kube {
namespace asio = boost::asio;

namespace {

class LoopListDecoder final : public ListDecoder {
 public:
  explicit LoopListDecoder(asio::io_context& io) : io_(io) {}

  void decode(std::string body, model::Kind kind,
              std::shared_ptr<const model::DecodeOptions> options, Done done) override {
    asio::post(io_, [body = std::move(body), kind, options = std::move(options),
                     done = std::move(done)]() mutable {
      auto page = options ? model::decodeList(body, kind, *options) : model::decodeList(body, kind);
      done(std::move(page), std::move(body));
    });
  }

  void releaseBuffers(size_t keepBytes, std::function<void(size_t)> released) override {
    asio::post(io_, [keepBytes, released = std::move(released)] {
      const size_t bytes = model::releaseDecodeBuffers(keepBytes);
      if (released) released(bytes);
    });
  }

 private:
  asio::io_context& io_;
};

class ThreadListDecoder final : public ListDecoder {
 public:
  ThreadListDecoder(asio::io_context& io, const std::string& threadName) : io_(io), pool_(1) {
    // One thread: pages are decoded, and their results posted, in the order they were given.
    asio::post(pool_, [threadName] { nameThisThread(threadName); });
  }
  ~ThreadListDecoder() override {
    pool_.stop();
    pool_.join();
  }

  void decode(std::string body, model::Kind kind,
              std::shared_ptr<const model::DecodeOptions> options, Done done) override {
    asio::post(pool_, [this, body = std::move(body), kind, options = std::move(options),
                       done = std::move(done)]() mutable {
      auto page = options ? model::decodeList(body, kind, *options) : model::decodeList(body, kind);
      asio::post(io_, [done = std::move(done), page = std::move(page), body = std::move(body)]() mutable {
        done(std::move(page), std::move(body));
      });
    });
  }

  void releaseBuffers(size_t keepBytes, std::function<void(size_t)> released) override {
    asio::post(pool_, [this, keepBytes, released = std::move(released)]() mutable {
      const size_t bytes = model::releaseDecodeBuffers(keepBytes);
      if (released) asio::post(io_, [bytes, released = std::move(released)] { released(bytes); });
    });
  }

 private:
  asio::io_context& io_;
  asio::thread_pool pool_;
};

}  // namespace

std::unique_ptr<ListDecoder> makeLoopListDecoder(asio::io_context& io) {
  return std::make_unique<LoopListDecoder>(io);
}

std::unique_ptr<ListDecoder> makeThreadListDecoder(asio::io_context& io,
                                                   const std::string& threadName) {
  return std::make_unique<ThreadListDecoder>(io, threadName);
}

}  // namespace firstwork::kube
