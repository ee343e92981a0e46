#pragma once
#include <functional>
#include <memory>

#include "firstwork/store/store.hpp"

namespace firstwork::store {

/// Runs store operations on a thread of its own, one at a time and in the order they were
/// posted, against a store that only that thread touches (for SQLite, a connection of its own:
/// WAL lets other connections read meanwhile). The daemon's event loop posts its commits here,
/// so a commit's inserts and its wait for the disk no longer hold the reading of the watches
/// (bench/README.md, change 41). A job reports back by its own means (the daemon's post to the
/// loop); the store is never handed out.
class StoreThread {
 public:
  using Job = std::function<void(Store&)>;

  explicit StoreThread(StorePtr store);
  /// Runs every job already posted, then joins the thread.
  ~StoreThread();
  StoreThread(const StoreThread&) = delete;
  StoreThread& operator=(const StoreThread&) = delete;

  /// Queues `job`; returns at once. Any thread.
  void post(Job job);
  /// Returns once every job posted before this call has run. Not from a job.
  void drain();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace firstwork::store
