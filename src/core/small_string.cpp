#include "firstwork/core/small_string.hpp"

#include <ostream>

namespace firstwork {

template <size_t Bytes>
void BasicSmallString<Bytes>::initHeap(std::string_view s) {
  char* p = new char[s.size() + 1];
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  const size_t n = s.size();
  std::memcpy(b_, &p, sizeof p);
  std::memcpy(b_ + sizeof p, &n, sizeof n);
  b_[kTag] = static_cast<char>(kHeapTag);
}

template <size_t Bytes>
void BasicSmallString<Bytes>::releaseHeap() noexcept {
  delete[] heapPtr();
}

template class BasicSmallString<40>;
template class BasicSmallString<32>;
template class BasicSmallString<48>;

template <size_t N>
std::ostream& operator<<(std::ostream& os, const BasicSmallString<N>& s) {
  return os << s.view();
}
template std::ostream& operator<<(std::ostream&, const BasicSmallString<32>&);
template std::ostream& operator<<(std::ostream&, const BasicSmallString<40>&);
template std::ostream& operator<<(std::ostream&, const BasicSmallString<48>&);

}  // namespace firstwork
