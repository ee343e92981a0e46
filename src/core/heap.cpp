#include "firstwork/core/heap.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace firstwork {

bool releaseFreeHeap() {
#if defined(__GLIBC__)
  malloc_trim(0);
  return true;
#else
  return false;
#endif
}

void HeapReleasePolicy::listsCompleted(MonotonicTime now) { afterSyncAt_ = now + options_.afterSync; }

bool HeapReleasePolicy::due(MonotonicTime now) {
  if (!last_) last_ = now;  // the interval counts from the first question (process start)
  const bool afterSync = afterSyncAt_ && now >= *afterSyncAt_;
  if (!afterSync && now - *last_ < options_.interval) return false;
  afterSyncAt_.reset();
  last_ = now;
  return true;
}

}  // namespace firstwork
