#include "firstwork/store/store_thread.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <future>
#include <optional>
#include <thread>
#include <utility>

#include "firstwork/core/thread_name.hpp"

namespace firstwork::store {

namespace asio = boost::asio;

struct StoreThread::Impl {
  explicit Impl(StorePtr s) : store(std::move(s)), work(io.get_executor()) {
    // The queue is Asio's: a job posted from any thread runs on this one, in posting order.
    thread = std::thread([this] {
      nameThisThread("fw-store");
      io.run();
    });
  }
  StorePtr store;
  asio::io_context io{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread thread;
};

StoreThread::StoreThread(StorePtr store) : impl_(std::make_unique<Impl>(std::move(store))) {}

StoreThread::~StoreThread() {
  impl_->work.reset();  // run() returns once the queue is empty
  impl_->thread.join();
}

void StoreThread::post(Job job) {
  asio::post(impl_->io, [this, job = std::move(job)] { job(*impl_->store); });
}

void StoreThread::drain() {
  std::promise<void> done;
  asio::post(impl_->io, [&done] { done.set_value(); });
  done.get_future().wait();
}

}  // namespace firstwork::store
