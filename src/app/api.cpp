#include "firstwork/app/api.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "firstwork/records/records.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "firstwork/engine/milestone_engine.hpp"
#include "firstwork/inventory/inventory.hpp"
#include "firstwork/inventory/pool_tracker.hpp"
#include "firstwork/store/store.hpp"

namespace firstwork::app {
namespace {

using records::kDuplicateKind;
using records::kIncidentKind;
using records::kMilestoneKind;
using records::kReclaimKind;

using nlohmann::json;

struct Filters {
  store::Query query;
};

/// Validates the query parameters of one endpoint: only `allowed` names, each at most once, times
/// in RFC 3339, limit a positive integer ≤ 100000. Returns the error message, or the filters.
std::variant<Filters, std::string> parseFilters(const http::ApiRequest& req, const char* kind,
                                                const std::vector<std::string>& allowed) {
  Filters f;
  f.query.kind = kind;
  f.query.limit = 1000;
  std::set<std::string> seen;
  for (const auto& [name, value] : req.params) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
      return fmt::format("unknown query parameter \"{}\" (allowed: {})", name,
                         fmt::join(allowed, ", "));
    if (!seen.insert(name).second) return fmt::format("query parameter \"{}\" given twice", name);
    if (name == "cluster") {
      f.query.cluster = value;
    } else if (name == "cluster_queue") {
      f.query.clusterQueue = value;
    } else if (name == "since" || name == "until") {
      auto t = parseRfc3339(value);
      if (!t.ok()) return fmt::format("{}: {}", name, t.error());
      (name == "since" ? f.query.since : f.query.until) = *t;
    } else if (name == "limit") {
      size_t n = 0;
      bool digits = !value.empty() && value.size() <= 6;
      for (char ch : value) {
        digits = digits && ch >= '0' && ch <= '9';
        if (digits) n = n * 10 + static_cast<size_t>(ch - '0');
      }
      if (!digits || n == 0 || n > 100000)
        return fmt::format("limit: must be an integer from 1 to 100000, got \"{}\"", value);
      f.query.limit = n;
    }
  }
  return f;
}

http::ApiResponse listResponse(const std::vector<store::Record>& rows) {
  std::string body = "{\"items\":[";
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i) body += ',';
    body += rows[i].body;
  }
  body += fmt::format("],\"count\":{}}}", rows.size());
  return http::ApiResponse::json(std::move(body));
}

/// GET on a store kind with the given filters, run on the loop.
http::ApiHandler storeList(const ApiContext& ctx, const char* kind,
                           std::vector<std::string> allowed) {
  return [ctx, kind, allowed](const http::ApiRequest& req) {
    auto parsed = parseFilters(req, kind, allowed);
    if (auto* err = std::get_if<std::string>(&parsed)) return http::ApiResponse::error(400, *err);
    auto f = std::get<Filters>(parsed);
    return ctx.onLoop([ctx, f] {
      auto rows = ctx.store().query(f.query);
      if (!rows.ok()) return http::ApiResponse::error(500, rows.error());
      return listResponse(*rows);
    });
  };
}

}  // namespace

void registerApiRoutes(http::HttpServer& server, ApiContext ctx) {
  server.addApiRoute("incidents", storeList(ctx, kIncidentKind, {"cluster", "since", "until",
                                                                  "limit"}));
  server.addApiRoute("reclaims", storeList(ctx, kReclaimKind, {"cluster", "cluster_queue", "since",
                                                                "until", "limit"}));
  server.addApiRoute("duplicates", storeList(ctx, kDuplicateKind, {"cluster", "cluster_queue",
                                                                    "since", "until", "limit"}));

  // Workload timelines: the milestones of each (workload, cycle), newest cycles last.
  server.addApiRoute("workloads", [ctx](const http::ApiRequest& req) {
    auto parsed =
        parseFilters(req, kMilestoneKind, {"cluster", "cluster_queue", "since", "until", "limit"});
    if (auto* err = std::get_if<std::string>(&parsed)) return http::ApiResponse::error(400, *err);
    auto f = std::get<Filters>(parsed);
    size_t limit = f.query.limit;
    f.query.limit = 1000000;
    return ctx.onLoop([ctx, f, limit] {
      auto rows = ctx.store().query(f.query);
      if (!rows.ok()) return http::ApiResponse::error(500, rows.error());
      std::map<std::pair<std::string, std::string>, json> timelines;
      std::vector<std::pair<std::string, std::string>> order;
      for (const auto& r : *rows) {
        auto m = json::parse(r.body, nullptr, false);
        if (m.is_discarded()) continue;
        auto id = std::make_pair(m["workload"].value("uid", ""), m.value("cycle_id", ""));
        auto [it, inserted] = timelines.try_emplace(id);
        if (inserted) {
          order.push_back(id);
          it->second = json{{"workload", m["workload"]},
                            {"cycle_id", m["cycle_id"]},
                            {"milestones", json::object()},
                            {"observed_at", json::object()}};
        }
        auto name = m.value("milestone", "");
        it->second["milestones"][name] = m["event_time"];
        it->second["observed_at"][name] = m["observed_at"];
        if (name == "first_work") {
          it->second["signal"] = m["signal"];
          it->second["proxy"] = m["proxy"];
        }
        if (name == "dispatched" || name == "running")
          it->second["execution_cluster"] = m["execution_cluster"];
        if (m.value("without_capacity", false)) it->second["reserved_without_capacity"] = true;
        if (!m.value("preemptor_uid", "").empty()) it->second["preemptor_uid"] = m["preemptor_uid"];
      }
      json items = json::array();
      size_t start = order.size() > limit ? order.size() - limit : 0;
      for (size_t i = start; i < order.size(); ++i) items.push_back(timelines[order[i]]);
      json body{{"items", items}, {"count", items.size()}};
      return http::ApiResponse::json(body.dump());
    });
  });

  // DRA pools: live state from the inventory.
  server.addApiRoute("pools", [ctx](const http::ApiRequest& req) {
    auto parsed = parseFilters(req, "pool", {"cluster"});
    if (auto* err = std::get_if<std::string>(&parsed)) return http::ApiResponse::error(400, *err);
    auto f = std::get<Filters>(parsed);
    return ctx.onLoop([ctx, f] {
      json items = json::array();
      for (const auto& p : ctx.engine().inventory().pools()) {
        if (!f.query.cluster.empty() && p.cluster != f.query.cluster) continue;
        json reasons = json::object();
        for (size_t i = 0; i < p.unavailableByReason.size(); ++i)
          if (p.unavailableByReason[i])
            reasons[std::string(inventory::unavailableReasonName(
                static_cast<inventory::UnavailableReason>(i)))] = p.unavailableByReason[i];
        items.push_back(json{{"cluster", p.cluster},
                             {"driver", p.driver},
                             {"pool", p.pool},
                             {"generation", p.generation},
                             {"slices_seen", p.slicesSeen},
                             {"slices_expected", p.slicesExpected},
                             {"stale_slices", p.staleSlices},
                             {"state", std::string(inventory::poolStateName(p.state))},
                             {"problem", std::string(inventory::poolProblemName(p.problem))},
                             {"since", formatRfc3339(p.since)},
                             {"devices", p.devices},
                             {"usable", p.usable},
                             {"unavailable", p.unavailable},
                             {"unavailable_by_reason", reasons},
                             {"partition_devices", p.partitionDevices}});
      }
      json body{{"items", items}, {"count", items.size()}};
      return http::ApiResponse::json(body.dump());
    });
  });

  // Capacity per cluster, device class and unit, live: the firstwork_gpus and
  // firstwork_stranded_gpus figures of the engine's last step, one item per unit (a share class
  // has one in unit share and one in the unit of the devices behind it).
  server.addApiRoute("capacity", [ctx](const http::ApiRequest& req) {
    auto parsed = parseFilters(req, "capacity", {"cluster"});
    if (auto* err = std::get_if<std::string>(&parsed)) return http::ApiResponse::error(400, *err);
    auto f = std::get<Filters>(parsed);
    return ctx.onLoop([ctx, f] {
      const auto snap = ctx.engine().snapshot();
      std::map<std::tuple<std::string, std::string, std::string>, json> byUnit;
      auto item = [&](const std::string& cluster, const std::string& cls,
                      const std::string& unit) -> json& {
        auto [it, inserted] = byUnit.try_emplace({cluster, cls, unit});
        if (inserted) {
          it->second = json{{"cluster", cluster}, {"device_class", cls}, {"unit", unit},
                            {"stranded", json::object()}};
        }
        return it->second;
      };
      for (const auto& g : snap.gpus) {
        if (f.query.cluster.empty() || g.cluster == f.query.cluster)
          item(g.cluster, g.deviceClass, g.unit)[g.state] = g.gpus;
      }
      for (const auto& st : snap.stranded) {
        if (f.query.cluster.empty() || st.cluster == f.query.cluster)
          item(st.cluster, st.deviceClass, st.unit)["stranded"]
              [std::string(engine::strandedPhaseName(st.phase))] = st.gpus;
      }
      for (const auto& u : ctx.engine().inventory().unclassified()) {
        if (!f.query.cluster.empty() && u.cluster != f.query.cluster) continue;
        auto& sources = item(u.cluster, "unknown", "unknown")["sources"];
        if (sources.is_null()) sources = json::array();
        sources.push_back(json{
            {"source", u.source},
            {"kind", u.kind == inventory::ClassKind::Dra ? "dra" : "extended_resource"},
            {"published", u.published},
            {"usable", u.usable},
            {"allocated", u.allocated}});
      }
      json items = json::array();
      for (auto& [key, j] : byUnit) items.push_back(std::move(j));
      json body{{"items", items}, {"count", items.size()}};
      return http::ApiResponse::json(body.dump());
    });
  });

  // How each node hands out its NVIDIA resources (GPU feature discovery labels), live.
  server.addApiRoute("nodes", [ctx](const http::ApiRequest& req) {
    auto parsed = parseFilters(req, "nodes", {"cluster"});
    if (auto* err = std::get_if<std::string>(&parsed)) return http::ApiResponse::error(400, *err);
    auto f = std::get<Filters>(parsed);
    return ctx.onLoop([ctx, f] {
      json items = json::array();
      for (const auto& m : ctx.engine().inventory().nodeModes(f.query.cluster)) {
        json o{{"cluster", m.cluster},
               {"node", m.node},
               {"resource", m.resource},
               {"mode", std::string(inventory::sharingModeName(m.sharing.mode))},
               {"device_class", m.deviceClass.empty() ? json(nullptr) : json(m.deviceClass)},
               {"units", m.units},
               {"replicas", m.sharing.replicas},
               {"product", m.sharing.product},
               {"sharing_strategy", m.sharing.strategy},
               {"mig_strategy", m.sharing.migStrategy}};
        if (!m.sharing.migProfile.empty()) o["mig_profile"] = m.sharing.migProfile;
        if (m.sharing.count) o["count"] = *m.sharing.count;
        if (m.physicalDevices > 0) o["physical_devices"] = m.physicalDevices;
        if (!m.sharing.problem.empty()) o["problem"] = m.sharing.problem;
        items.push_back(std::move(o));
      }
      json body{{"items", items}, {"count", items.size()}};
      return http::ApiResponse::json(body.dump());
    });
  });
}

}  // namespace firstwork::app
