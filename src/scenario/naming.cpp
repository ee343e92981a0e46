#include "detail/naming.hpp"

#include <fmt/format.h>

#include "firstwork/scenario/scenario.hpp"

namespace firstwork::scenario {
namespace detail {

uint64_t fnv1a(std::string_view text, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

namespace {

// MurmurHash3's finaliser: FNV alone hardly changes its high bits when only the last character
// differs (train-0 / train-1), and names show the leading digits.
uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

}  // namespace

std::string hexDigits(std::string_view text, size_t n) {
  std::string out;
  uint64_t seed = 0xcbf29ce484222325ULL;
  while (out.size() < n) {
    uint64_t h = mix(fnv1a(text, seed));
    out += fmt::format("{:016x}", h);
    seed = h ^ 0x9e3779b97f4a7c15ULL;  // next block: chain so long outputs do not repeat
  }
  out.resize(n);
  return out;
}

std::string nameSuffix(std::string_view text) {
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  uint64_t h = mix(fnv1a(text));
  std::string out;
  for (int i = 0; i < 5; ++i) {
    out += kAlphabet[h % kAlphabet.size()];
    h /= kAlphabet.size();
  }
  return out;
}

std::string uuidFrom(std::string_view text) {
  std::string hex = hexDigits(text, 32);
  hex[12] = '4';  // version 4
  static constexpr std::string_view kVariant = "89ab";
  hex[16] = kVariant[static_cast<size_t>(hex[16] >= 'a' ? hex[16] - 'a' + 10 : hex[16] - '0') % 4];
  return fmt::format("{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4),
                     hex.substr(16, 4), hex.substr(20, 12));
}

std::string objectKey(const std::string& cluster, const std::string& kind, const std::string& ns,
                      const std::string& name) {
  return fmt::format("{} {} {}{}{}", cluster, kind, ns, ns.empty() ? "" : "/", name);
}

}  // namespace detail

std::string jobWorkloadName(std::string_view ns, std::string_view jobName) {
  // Kueue names a Job's Workload `job-<job name>-<first 5 hex of a sha1 over kind, group, name
  // and uid>`. The real hash depends on the Job's UID; a stable hash of namespace/name keeps the
  // name the same across play-throughs, so files and tests can name the Workload.
  return fmt::format("job-{}-{}", jobName, detail::hexDigits(fmt::format("{}/{}", ns, jobName), 5));
}

}  // namespace firstwork::scenario
