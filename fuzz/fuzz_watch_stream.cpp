// libFuzzer target: the watch-stream path of a reflector. Bytes go through kube::LineFramer in
// input-chosen chunks, every framed line through model::decodeWatchEvent.
//
// Input: byte 0 picks the kind (mod 9), byte 1 the line limit (bits 0-1) and the chunking (bits
// 2-7); the rest is the stream as it comes over the wire.
//
// Properties: the framer emits the same lines with the same outcome however the bytes are chunked,
// and exactly the lines a plain split on '\n' gives; both decodeWatchEvent overloads agree and the
// in-place one hands the line back unchanged; a decoded object satisfies checkObject().
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "firstwork/kube/line_framer.hpp"
#include "firstwork/model/decode.hpp"
#include "model_check.hpp"

using namespace firstwork;
using Outcome = kube::LineFramer::Outcome;

namespace {

struct Framed {
  std::vector<std::string> lines;
  Outcome outcome = Outcome::Ok;
  size_t pending = 0;
};

/// The framer's contract written the obvious way: split on '\n', a line longer than `max` bytes
/// (its '\r' included) ends the stream, a trailing '\r' is dropped, empty lines are skipped.
Framed reference(std::string_view stream, size_t max) {
  Framed out;
  while (true) {
    size_t nl = stream.find('\n');
    if (nl == std::string_view::npos) {
      if (stream.size() > max) out.outcome = Outcome::LineTooLong;
      else out.pending = stream.size();
      return out;
    }
    std::string_view line = stream.substr(0, nl);
    stream.remove_prefix(nl + 1);
    if (line.size() > max) {
      out.outcome = Outcome::LineTooLong;
      return out;
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) out.lines.emplace_back(line);
  }
}

/// Feeds `stream` in chunks whose sizes come from a small LCG seeded by `seed` (0: one chunk).
Framed frame(std::string_view stream, size_t max, unsigned seed) {
  kube::LineFramer framer(max);
  Framed out;
  uint32_t state = seed;
  while (!stream.empty()) {
    size_t n = stream.size();
    if (seed != 0) {
      state = state * 1103515245u + 12345u;
      n = std::min<size_t>(n, 1 + (state >> 16) % 97);
    }
    out.outcome = framer.feed(stream.substr(0, n), [&](std::string_view line) {
      out.lines.emplace_back(line);
      return true;
    });
    stream.remove_prefix(n);
    if (out.outcome != Outcome::Ok) return out;
  }
  out.pending = framer.pending();
  return out;
}

void checkSameEvent(const model::WatchEvent& a, const model::WatchEvent& b) {
  FW_FUZZ_CHECK(a.type == b.type);
  FW_FUZZ_CHECK(a.resourceVersion == b.resourceVersion);
  FW_FUZZ_CHECK(a.object.has_value() == b.object.has_value());
  FW_FUZZ_CHECK(a.decodeError == b.decodeError);
  FW_FUZZ_CHECK(a.status.code == b.status.code);
  FW_FUZZ_CHECK(a.status.reason == b.status.reason);
  FW_FUZZ_CHECK(a.status.message == b.status.message);
  FW_FUZZ_CHECK(a.initialEventsEnd == b.initialEventsEnd);
  if (a.object) FW_FUZZ_CHECK(model::metaOf(*a.object).uid == model::metaOf(*b.object).uid);
}

void decodeLine(const std::string& line, model::Kind kind) {
  auto byView = model::decodeWatchEvent(std::string_view(line), kind);
  std::string buffer = line;
  auto inPlace = model::decodeWatchEvent(buffer, kind);
  FW_FUZZ_CHECK(buffer == line);
  FW_FUZZ_CHECK(byView.ok() == inPlace.ok());
  if (!byView.ok()) {
    FW_FUZZ_CHECK(byView.error() == inPlace.error());
    return;
  }
  checkSameEvent(*byView, *inPlace);
  const model::WatchEvent& ev = *byView;
  fuzz::checkIdent(ev.resourceVersion);
  if (ev.object) {
    FW_FUZZ_CHECK(ev.decodeError.empty());
    FW_FUZZ_CHECK(ev.type == model::EventType::Added || ev.type == model::EventType::Modified ||
                  ev.type == model::EventType::Deleted);
    fuzz::checkObject(*ev.object, kind);
  }
  fuzz::checkText(ev.status.reason);
  fuzz::checkText(ev.status.message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const model::Kind kind = model::allKinds()[data[0] % model::kKindCount].kind;
  // Small limits reach LineTooLong with small inputs; the last one is the production default.
  static constexpr size_t kLimits[] = {1, 64, 4096, 1536 * 1024};
  const size_t max = kLimits[data[1] & 3u];
  const unsigned seed = data[1] >> 2;
  std::string_view stream(reinterpret_cast<const char*>(data + 2), size - 2);

  Framed expected = reference(stream, max);
  Framed whole = frame(stream, max, 0);
  Framed chunked = frame(stream, max, seed);
  for (const Framed* f : {&whole, &chunked}) {
    FW_FUZZ_CHECK(f->outcome == expected.outcome);
    FW_FUZZ_CHECK(f->lines == expected.lines);
    if (f->outcome == Outcome::Ok) FW_FUZZ_CHECK(f->pending == expected.pending);
  }
  for (const auto& line : chunked.lines) decodeLine(line, kind);
  return 0;
}
