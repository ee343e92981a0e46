#pragma once
// What the daemon derives from its configuration for the parts it composes.
#include "firstwork/config/config.hpp"
#include "firstwork/engine/engine_config.hpp"
#include "firstwork/model/decode.hpp"

namespace firstwork::app::detail {

/// The milestone engine's configuration: clusters and roles, useful work, budgets, the inventory.
engine::EngineConfig engineConfig(const config::Config& c);

/// What the daemon's decoders keep of each object: of a ResourceSlice's devices, the attributes
/// the inventory reads with engineConfig(c).inventory (inventory::deviceAttributesRead), no
/// others (bench/README.md, change 78).
model::DecodeOptions decodeOptions(const config::Config& c);

}  // namespace firstwork::app::detail
