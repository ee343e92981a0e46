#pragma once
#include <functional>
#include <optional>
#include <string>

#include "firstwork/engine/outputs.hpp"
#include "firstwork/http/http_server.hpp"

namespace firstwork::engine {
class MilestoneEngine;
}
namespace firstwork::store {
class Store;
}
namespace firstwork::log {
class Redactor;
}

namespace firstwork::app {

/// What the /api/v1 handlers need. Handlers run on HTTP threads; `onLoop` runs a function on the
/// event-loop thread (which owns the engine and the store's reading connection) and returns its
/// answer.
struct ApiContext {
  std::function<http::ApiResponse(std::function<http::ApiResponse()>)> onLoop;
  std::function<store::Store&()> store;
  std::function<const engine::MilestoneEngine&()> engine;
  const log::Redactor* redactor = nullptr;
};

/// Registers GET /api/v1/incidents, /reclaims, /workloads, /pools, /capacity, /nodes and
/// /duplicates (design §7;
/// documented in docs/api.md). Filters: `cluster`, `cluster_queue` (reclaims, workloads,
/// duplicates), `since` and `until` (RFC 3339), `limit`. Unknown or malformed parameters: 400.
void registerApiRoutes(http::HttpServer& server, ApiContext context);

}  // namespace firstwork::app
