#pragma once

#include <algorithm>
#include <string_view>

namespace firstwork {

/// Orders sequences of strings (a std::array or std::vector of std::string, an array or
/// initializer_list of std::string_view) element by element, as std::less does for an array of
/// strings, and across those types: a map keyed by owned strings is then looked up by views,
/// without making the key's strings for every lookup.
struct StringsLess {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return std::lexicographical_compare(
        a.begin(), a.end(), b.begin(), b.end(),
        [](std::string_view x, std::string_view y) { return x < y; });
  }
};

}  // namespace firstwork
