#include "detail/placeholders.hpp"

#include <fmt/format.h>

#include "detail/kinds.hpp"
#include "firstwork/core/rfc3339.hpp"

namespace firstwork::scenario::detail {
namespace {

// "ns/name" or "name" (cluster-scoped), with an optional "@cluster" suffix already removed.
Status splitObjectRef(std::string_view ref, bool namespaced, Placeholder& p) {
  auto slash = ref.find('/');
  if (namespaced) {
    if (slash == std::string_view::npos || slash == 0 || slash + 1 == ref.size() ||
        ref.find('/', slash + 1) != std::string_view::npos)
      return makeError(fmt::format("\"{}\" must be <namespace>/<name>", ref));
    p.ns = std::string(ref.substr(0, slash));
    p.name = std::string(ref.substr(slash + 1));
  } else {
    if (slash != std::string_view::npos || ref.empty())
      return makeError(fmt::format("\"{}\" must be a plain name ({} is cluster-scoped)", ref, p.kind));
    p.name = std::string(ref);
  }
  return Ok{};
}

}  // namespace

Result<Placeholder> parsePlaceholder(std::string_view inner) {
  Placeholder p;
  if (inner == "t") return p;
  if (inner.size() > 2 && inner[0] == 't' && (inner[1] == '+' || inner[1] == '-')) {
    auto off = parseOffset(inner.substr(1));
    if (!off) return makeError(fmt::format("{{{{{}}}}}: {}", inner, off.error()));
    p.offset = *off;
    return p;
  }
  auto colon = inner.find(':');
  if (colon == std::string_view::npos)
    return makeError(fmt::format("unknown placeholder {{{{{}}}}} (expected t, t+<duration>, "
                                 "uid:<ref> or jobuid:<namespace>/<name>)",
                                 inner));
  std::string_view head = inner.substr(0, colon);
  std::string_view ref = inner.substr(colon + 1);
  auto at = ref.rfind('@');
  if (at != std::string_view::npos) {
    p.cluster = std::string(ref.substr(at + 1));
    ref = ref.substr(0, at);
    if (p.cluster.empty()) return makeError(fmt::format("{{{{{}}}}}: empty cluster after '@'", inner));
  }
  if (head == "jobuid") {
    p.type = Placeholder::Type::JobUid;
    p.kind = "Job";
    auto st = splitObjectRef(ref, true, p);
    if (!st) return makeError(fmt::format("{{{{{}}}}}: {}", inner, st.error()));
    return p;
  }
  if (head == "uid") {
    p.type = Placeholder::Type::Uid;
    p.kind = "Workload";
    auto kindColon = ref.find(':');
    if (kindColon != std::string_view::npos) {
      p.kind = std::string(ref.substr(0, kindColon));
      ref = ref.substr(kindColon + 1);
    }
    const KindInfo* info = findKind(p.kind);
    if (!info) return makeError(fmt::format("{{{{{}}}}}: unknown kind \"{}\"", inner, p.kind));
    auto st = splitObjectRef(ref, info->namespaced, p);
    if (!st) return makeError(fmt::format("{{{{{}}}}}: {}", inner, st.error()));
    return p;
  }
  return makeError(fmt::format("unknown placeholder {{{{{}}}}}", inner));
}

Result<std::vector<Placeholder>> scanPlaceholders(std::string_view text) {
  std::vector<Placeholder> out;
  size_t pos = 0;
  while ((pos = text.find("{{", pos)) != std::string_view::npos) {
    auto end = text.find("}}", pos + 2);
    if (end == std::string_view::npos)
      return makeError(fmt::format("unclosed \"{{{{\" in \"{}\"", text.substr(0, 120)));
    auto p = parsePlaceholder(text.substr(pos + 2, end - pos - 2));
    if (!p) return makeError(p.error());
    out.push_back(std::move(*p));
    pos = end + 2;
  }
  return out;
}

void collectPlaceholders(const Json& body, std::vector<Placeholder>& out,
                         std::vector<std::string>& errors, const std::string& path) {
  if (body.is_string()) {
    auto found = scanPlaceholders(body.get_ref<const std::string&>());
    if (!found) {
      errors.push_back(fmt::format("{}: {}", path.empty() ? "(body)" : path, found.error()));
      return;
    }
    for (auto& p : *found) out.push_back(std::move(p));
  } else if (body.is_object()) {
    for (auto it = body.begin(); it != body.end(); ++it)
      collectPlaceholders(it.value(), out, errors, path.empty() ? it.key() : path + "." + it.key());
  } else if (body.is_array()) {
    for (size_t i = 0; i < body.size(); ++i)
      collectPlaceholders(body[i], out, errors, fmt::format("{}[{}]", path, i));
  }
}

std::string timeRef(Offset offset) {
  if (offset.count() == 0) return "{{t}}";
  if (offset.count() < 0) return fmt::format("{{{{t{}}}}}", formatOffset(offset));
  return fmt::format("{{{{t+{}}}}}", formatOffset(offset));
}

Result<std::string> renderString(std::string_view text, const RenderContext& ctx) {
  if (text.find("{{") == std::string_view::npos) return std::string(text);
  std::string out;
  size_t pos = 0;
  while (true) {
    auto open = text.find("{{", pos);
    if (open == std::string_view::npos) {
      out.append(text.substr(pos));
      break;
    }
    out.append(text.substr(pos, open - pos));
    auto close = text.find("}}", open + 2);
    if (close == std::string_view::npos) return makeError("unclosed \"{{\"");
    auto p = parsePlaceholder(text.substr(open + 2, close - open - 2));
    if (!p) return makeError(p.error());
    std::string cluster = p->cluster.empty() ? ctx.cluster : p->cluster;
    switch (p->type) {
      case Placeholder::Type::Time:
        out += formatRfc3339(ctx.drillStart + std::chrono::duration_cast<SystemTime::duration>(p->offset));
        break;
      case Placeholder::Type::Uid: {
        auto uid = ctx.uid ? ctx.uid(cluster, p->kind, p->ns, p->name) : std::nullopt;
        if (!uid)
          return makeError(fmt::format("{} {}{}{} does not exist on cluster {} (for {{{{uid:...}}}})",
                                       p->kind, p->ns, p->ns.empty() ? "" : "/", p->name, cluster));
        out += *uid;
        break;
      }
      case Placeholder::Type::JobUid:
        out += ctx.jobUid(cluster, p->ns, p->name);
        break;
    }
    pos = close + 2;
  }
  return out;
}

Status renderJson(Json& body, const RenderContext& ctx) {
  if (body.is_string()) {
    auto r = renderString(body.get_ref<const std::string&>(), ctx);
    if (!r) return makeError(r.error());
    body = std::move(*r);
  } else if (body.is_object() || body.is_array()) {
    for (auto& v : body) {
      auto st = renderJson(v, ctx);
      if (!st) return st;
    }
  }
  return Ok{};
}

}  // namespace firstwork::scenario::detail
