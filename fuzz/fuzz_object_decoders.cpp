// libFuzzer target: every object decoder of src/model (decodeObject and decodeList for each of the
// nine kinds, decodeStatus), on the same input. Trying every kind keeps the corpus plain JSON (no
// selector byte): a mismatching kind fails on the `kind` field and costs little.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "firstwork/model/decode.hpp"
#include "model_check.hpp"

using namespace firstwork;

namespace {

void checkPage(const model::ListPage& page, model::Kind kind) {
  for (const auto& item : page.items) fuzz::checkObject(item, kind);
  FW_FUZZ_CHECK(page.itemErrors.size() <= model::kMaxItemErrors);
  FW_FUZZ_CHECK(page.skippedItems >= static_cast<int64_t>(page.itemErrors.size()));
  FW_FUZZ_CHECK(page.continueToken.size() <= 8192);
  for (const auto& e : page.itemErrors) FW_FUZZ_CHECK(!e.empty());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view json(reinterpret_cast<const char*>(data), size);
  for (const auto& info : model::allKinds()) {
    auto obj = model::decodeObject(json, info.kind);
    if (obj.ok()) fuzz::checkObject(*obj, info.kind);
    else FW_FUZZ_CHECK(!obj.error().empty());

    auto page = model::decodeList(json, info.kind);
    if (page.ok()) checkPage(*page, info.kind);
    else FW_FUZZ_CHECK(!page.error().empty());

    // The in-place overload pads the caller's string for the parse: it must give the same answer
    // and hand the string back unchanged.
    std::string body(json);
    auto inPlace = model::decodeList(body, info.kind);
    FW_FUZZ_CHECK(body == json);
    FW_FUZZ_CHECK(inPlace.ok() == page.ok());
    if (page.ok()) {
      FW_FUZZ_CHECK(inPlace->items.size() == page->items.size());
      FW_FUZZ_CHECK(inPlace->skippedItems == page->skippedItems);
      FW_FUZZ_CHECK(inPlace->resourceVersion == page->resourceVersion);
      FW_FUZZ_CHECK(inPlace->continueToken == page->continueToken);
    } else {
      FW_FUZZ_CHECK(inPlace.error() == page.error());
    }
  }
  auto status = model::decodeStatus(json);
  if (status.ok()) {
    FW_FUZZ_CHECK(status->code != 0 || !status->reason.empty() || !status->message.empty());
    fuzz::checkText(status->reason);
    fuzz::checkText(status->message);
  }
  return 0;
}
