#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace firstwork::model {

/// metadata.uid in 16 bytes, for stores that keep an object's identity without the object (the
/// reflectors' stores of kinds whose consumer keeps its own records). An API server's uids are
/// RFC 4122 UUIDs in canonical lowercase text (36 characters); such a uid (of any version but 0)
/// is held as its 128 bits, and anything else (another spelling, another scheme: test fixtures,
/// hostile input) as a copy of its text in a heap block of its own. The text reads back exactly
/// as it came either way, and two keys are equal exactly when their texts are (a uid that packs is
/// never held as text). As ResourceVersion does for metadata.resourceVersion.
class UidKey {
 public:
  UidKey() noexcept = default;
  explicit UidKey(std::string_view text);
  UidKey(const UidKey& o);
  UidKey(UidKey&& o) noexcept : hi_(o.hi_), lo_(o.lo_) { o.hi_ = o.lo_ = 0; }
  UidKey& operator=(const UidKey& o);
  UidKey& operator=(UidKey&& o) noexcept;
  ~UidKey() { release(); }

  bool empty() const noexcept { return hi_ == 0 && lo_ == 0; }
  /// Whether the uid is held as its 128 bits rather than as text.
  bool packed() const noexcept { return hi_ != 0; }
  /// The text, exactly as it was given.
  std::string str() const;
  /// Equal keys hash alike, and a key hashes as hashOf(its text).
  size_t hash() const noexcept;
  static size_t hashOf(std::string_view uid) noexcept;

  friend bool operator==(const UidKey& a, const UidKey& b) noexcept;
  friend bool operator==(const UidKey& a, std::string_view b) noexcept;

  /// A uid's text read once for looking keys up: hashes as the key of that text would, and
  /// compares with a key without reading the text again (a lookup by text compares with every
  /// key of its bucket) and without a copy.
  class Probe {
   public:
    explicit Probe(std::string_view text) noexcept;
    size_t hash() const noexcept;
    std::string_view text() const noexcept { return text_; }

   private:
    friend bool operator==(const UidKey& a, const Probe& b) noexcept;
    std::string_view text_;
    uint64_t hi_ = 0;  // packed as a key would be; 0 when the text is not a packable UUID
    uint64_t lo_ = 0;
  };
  friend bool operator==(const UidKey& a, const Probe& b) noexcept;

 private:
  void release() noexcept;
  std::string_view text() const noexcept;  // a key held as text
  // Empty: both 0. Packed: hi_ the first 16 hex digits, lo_ the last 16 (hi_ is never 0: it
  // holds the version digit, which is not 0). Text: hi_ 0, lo_ a pointer to a heap block (a
  // uint32_t length, then the text).
  uint64_t hi_ = 0;
  uint64_t lo_ = 0;
};
static_assert(sizeof(UidKey) == 16);

}  // namespace firstwork::model
