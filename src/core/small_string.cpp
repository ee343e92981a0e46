#include "firstwork/core/small_string.hpp"

#include <ostream>

namespace firstwork {

void SmallString::initHeap(std::string_view s) {
  char* p = new char[s.size() + 1];
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  const size_t n = s.size();
  std::memcpy(b_, &p, sizeof p);
  std::memcpy(b_ + sizeof p, &n, sizeof n);
  b_[kTag] = static_cast<char>(kHeapTag);
}

void SmallString::releaseHeap() noexcept { delete[] heapPtr(); }

std::ostream& operator<<(std::ostream& os, const SmallString& s) { return os << s.view(); }

}  // namespace firstwork
