#pragma once
#include <cstdint>

#include <boost/container/vector.hpp>

namespace firstwork {

/// A vector of 16 bytes instead of std::vector's 24: Boost.Container's vector with its size and
/// capacity stored as 32-bit numbers (at most 2^32 - 1 elements; decoded lists are bounded far
/// below that). For the lists every tracked object carries (labels, annotations, owner
/// references), where 8 bytes each decide the object's allocation size class (bench/README.md,
/// change 72). Its interface is std::vector's.
template <typename T>
using CompactVector = boost::container::vector<
    T, void, boost::container::vector_options_t<boost::container::stored_size<uint32_t>>>;

}  // namespace firstwork
