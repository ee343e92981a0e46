#include "firstwork/model/dra.hpp"

#include <fmt/format.h>

#include "detail/decoders.hpp"

namespace firstwork::model::detail {
namespace {

// API validation limits are 32 requests, 32 allocation results, 256 reservedFor entries and 128
// devices per slice; the bounds sit above them so only hostile objects hit them.
constexpr size_t kMaxResults = 128;
constexpr size_t kMaxReservedFor = 256;
constexpr size_t kMaxDevices = 256;
// CEL selectors are kept only to read simple attribute equalities (a MIG profile); longer
// expressions are truncated, which makes them unreadable rather than wrong.
constexpr size_t kMaxSelectorBytes = 1024;
constexpr size_t kMaxSelectors = 32;

bool readSelectors(Ctx& c, od::value& v, CompactVector<std::string>& dst) {
  dst.clear();
  bool ok = forElements(c, v, [&](size_t, od::value& e) {
    return forFields(c, e, [&](std::string_view k, od::value& x) {
      if (!is(k, "cel")) return true;
      return forFields(c, x, [&](std::string_view ck, od::value& cx) {
        if (!is(ck, "expression")) return true;
        if (dst.size() >= kMaxSelectors) return tooMany(c, kMaxSelectors);
        std::string expression;
        if (!readText(c, cx, expression, kMaxSelectorBytes)) return false;
        dst.push_back(std::move(expression));
        return true;
      });
    });
  });
  shrink(dst);
  return ok;
}

/// The fields a v1 `exactly` block, a `firstAvailable` alternative and a v1beta1 flat request share.
bool readRequestShape(Ctx& c, std::string_view k, od::value& x, DeviceRequest& r) {
  if (is(k, "deviceClassName")) return readIdent(c, x, r.deviceClassName);
  if (is(k, "allocationMode")) {
    std::string_view mode;
    if (!getString(c, x, mode)) return false;
    r.allocationModeAll = is(mode, "All");
    return true;
  }
  if (is(k, "count")) {
    if (!readInt64(c, x, r.count)) return false;
    if (r.count < 0) return c.fail("must not be negative");
    return true;
  }
  if (is(k, "selectors")) return readSelectors(c, x, r.selectors);
  return true;
}

bool readDeviceRequest(Ctx& c, od::value& v, DeviceRequest& r) {
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "name")) return readIdent(c, x, r.name);
    if (is(k, "exactly")) {  // v1, v1beta2
      return forFields(c, x, [&](std::string_view ek, od::value& ex) {
        return readRequestShape(c, ek, ex, r);
      });
    }
    // A prioritized list: the first alternative stands for the request.
    if (is(k, "firstAvailable")) {
      return forElements(c, x, [&](size_t i, od::value& alt) {
        r.firstAvailable = true;
        if (i != 0) return true;
        return forFields(c, alt, [&](std::string_view ak, od::value& ax) {
          return readRequestShape(c, ak, ax, r);
        });
      });
    }
    return readRequestShape(c, k, x, r);  // v1beta1: the fields sit on the request itself
  });
}

bool readClaimSpec(Ctx& c, od::value& v, ResourceClaim& rc) {
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    if (!is(k, "devices")) return true;
    return forFields(c, x, [&](std::string_view dk, od::value& dx) {
      if (!is(dk, "requests")) return true;
      rc.requests.clear();
      bool ok = forElements(c, dx, [&](size_t, od::value& e) {
        DeviceRequest r;
        if (!readDeviceRequest(c, e, r)) return false;
        if (rc.requests.size() >= kMaxEntries) return tooMany(c, kMaxEntries);
        rc.requests.push_back(std::move(r));
        return true;
      });
      shrink(rc.requests);
      return ok;
    });
  });
}

bool readAllocation(Ctx& c, od::value& v, ResourceClaim& rc) {
  od::json_type t;
  if (!typeOf(c, v, t)) return false;
  rc.allocated = t != od::json_type::null;
  rc.allocations.clear();
  rc.allocationTimestamp.reset();
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "allocationTimestamp")) return readTime(c, x, rc.allocationTimestamp);
    if (!is(k, "devices")) return true;
    return forFields(c, x, [&](std::string_view dk, od::value& dx) {
      if (!is(dk, "results")) return true;
      rc.allocations.clear();
      bool ok = forElements(c, dx, [&](size_t, od::value& e) {
        DeviceAllocation a;
        bool ok2 = forFields(c, e, [&](std::string_view rk, od::value& rx) {
          if (is(rk, "request")) return readIdent(c, rx, a.request);
          if (is(rk, "driver")) return readIdent(c, rx, a.driver);
          if (is(rk, "pool")) return readIdent(c, rx, a.pool);
          if (is(rk, "device")) return readIdent(c, rx, a.device);
          return true;
        });
        if (!ok2) return false;
        if (rc.allocations.size() >= kMaxResults) return tooMany(c, kMaxResults);
        rc.allocations.push_back(std::move(a));
        return true;
      });
      shrink(rc.allocations);
      return ok;
    });
  });
}

bool readClaimStatus(Ctx& c, od::value& v, ResourceClaim& rc) {
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "allocation")) return readAllocation(c, x, rc);
    if (is(k, "reservedFor")) {
      rc.reservedForPods.clear();
      size_t entries = 0;
      bool ok = forElements(c, x, [&](size_t, od::value& e) {
        std::string_view apiGroup;
        std::string_view resource;
        SmallString uid;
        bool ok2 = forFields(c, e, [&](std::string_view rk, od::value& rx) {
          if (is(rk, "apiGroup")) return getString(c, rx, apiGroup);
          if (is(rk, "resource")) return getString(c, rx, resource);
          if (is(rk, "uid")) return readIdent(c, rx, uid);
          return true;
        });
        if (!ok2) return false;
        if (++entries > kMaxReservedFor) return tooMany(c, kMaxReservedFor);
        if (apiGroup.empty() && is(resource, "pods") && !uid.empty()) {
          rc.reservedForPods.push_back(std::move(uid));
        }
        return true;
      });
      shrink(rc.reservedForPods);
      return ok;
    }
    return true;
  });
}

// ---- ResourceSlice ----

/// Appends the string form of one scalar attribute element of type `type`.
bool appendScalar(Ctx& c, std::string_view type, od::value& x, std::string& out) {
  if (is(type, "int") || is(type, "ints")) {
    int64_t n = 0;
    if (!readInt64(c, x, n)) return false;
    out += std::to_string(n);
    return true;
  }
  if (is(type, "bool") || is(type, "bools")) {
    bool b = false;
    if (!readBool(c, x, b)) return false;
    out += b ? "true" : "false";
    return true;
  }
  std::string_view s;  // string(s), version(s)
  if (!getString(c, x, s)) return false;
  out += s;
  return true;
}

/// A DeviceAttribute `{"int": 80}` / `{"string": "gpu"}` / `{"version": "1.0.0"}` / `{"bool": true}`
/// (or the list forms `ints`, `strings`, ... joined with ','), reduced to its string form.
/// `known` is false for a type this decoder does not know (a newer API): the attribute is skipped.
bool readAttributeValue(Ctx& c, od::value& v, std::string& out, bool& known) {
  known = false;
  bool ok = forFields(c, v, [&](std::string_view type, od::value& x) {
    bool scalar = is(type, "int") || is(type, "bool") || is(type, "string") || is(type, "version");
    bool list =
        is(type, "ints") || is(type, "bools") || is(type, "strings") || is(type, "versions");
    if (!scalar && !list) return true;
    known = true;
    out.clear();
    if (scalar) return appendScalar(c, type, x, out);
    return forElements(c, x, [&](size_t i, od::value& e) {
      if (out.size() > kMaxTextBytes) return true;
      if (i != 0) out += ',';
      return appendScalar(c, type, e, out);
    });
  });
  out.resize(truncateUtf8(out, kMaxTextBytes).size());
  return ok;
}

bool readAttributes(Ctx& c, od::value& v, CompactVector<DeviceAttribute>& dst) {
  dst.clear();
  std::string value;  // one buffer for the attributes of a device
  bool ok = forFields(
      c, v,
      [&](std::string_view name, od::value& x) {
        // One nothing reads is not kept (DecodeOptions::deviceAttributes), nor is its value read.
        if (c.options != nullptr && !c.options->keepsDeviceAttribute(name)) return true;
        DeviceAttribute a;
        bool known = false;
        if (!readAttributeValue(c, x, value, known)) return false;
        if (!known) return true;
        if (name.size() > kMaxIdentBytes) return c.fail("attribute name too long");
        if (dst.size() >= kMaxEntries) return tooMany(c, kMaxEntries);
        a.name = Interned(name);
        a.value = Interned::pooledUpTo(value, kPooledAttributeBytes);
        dst.push_back(std::move(a));
        return true;
      },
      /*mapKeys=*/true);
  shrink(dst);
  return ok;
}

bool readTaints(Ctx& c, od::value& v, CompactVector<DeviceTaint>& dst) {
  return readTaintList(c, v, dst, kMaxEntries);
}

/// True when `v` is a non-empty array (consumesCounters, sharedCounters).
bool readNonEmptyArray(Ctx& c, od::value& v, bool& dst) {
  dst = false;
  return forElements(c, v, [&](size_t, od::value&) {
    dst = true;
    return true;
  });
}

/// The device fields; v1/v1beta2 put them on the device, v1beta1 under `basic` (one level only:
/// a hostile `basic` inside `basic` must not recurse without bound).
bool readDeviceFields(Ctx& c, od::value& v, Device& d, bool nested = false) {
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "name")) return readIdent(c, x, d.name);
    if (is(k, "attributes")) return readAttributes(c, x, d.attributes);
    if (is(k, "taints")) return readTaints(c, x, d.taints);
    if (is(k, "consumesCounters")) return readNonEmptyArray(c, x, d.consumesCounters);
    if (is(k, "nodeName")) return readIdent(c, x, d.nodeName);
    if (is(k, "allNodes")) return readBool(c, x, d.allNodes);
    if (is(k, "basic") && !nested) return readDeviceFields(c, x, d, true);
    return true;
  });
}

bool readSliceSpec(Ctx& c, od::value& v, ResourceSlice& rs) {
  return forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "driver")) return readIdent(c, x, rs.driver);
    if (is(k, "pool")) {
      return forFields(c, x, [&](std::string_view pk, od::value& px) {
        if (is(pk, "name")) return readIdent(c, px, rs.poolName);
        if (is(pk, "generation")) return readInt64(c, px, rs.poolGeneration);
        if (is(pk, "resourceSliceCount")) return readInt64(c, px, rs.resourceSliceCount);
        return true;
      });
    }
    if (is(k, "nodeName")) return readIdent(c, x, rs.nodeName);
    if (is(k, "allNodes")) return readBool(c, x, rs.allNodes);
    if (is(k, "perDeviceNodeSelection")) return readBool(c, x, rs.perDeviceNodeSelection);
    if (is(k, "sharedCounters")) return readNonEmptyArray(c, x, rs.sharedCounters);
    if (is(k, "devices")) {
      rs.devices.clear();
      bool ok = forElements(c, x, [&](size_t, od::value& e) {
        Device d;
        if (!readDeviceFields(c, e, d)) return false;
        if (rs.devices.size() >= kMaxDevices) return tooMany(c, kMaxDevices);
        rs.devices.push_back(std::move(d));
        return true;
      });
      shrink(rs.devices);
      return ok;
    }
    return true;
  });
}

}  // namespace

bool readResourceClaim(Ctx& c, od::value& v, ResourceClaim& rc) {
  return readTopLevel(c, v, Kind::ResourceClaim, rc.meta, nullptr,
                      [&](std::string_view k, od::value& x) {
                        if (is(k, "spec")) return readClaimSpec(c, x, rc);
                        if (is(k, "status")) return readClaimStatus(c, x, rc);
                        return true;
                      });
}

bool readResourceSlice(Ctx& c, od::value& v, ResourceSlice& rs) {
  bool ok = readTopLevel(c, v, Kind::ResourceSlice, rs.meta, nullptr,
                         [&](std::string_view k, od::value& x) {
                           if (is(k, "spec")) return readSliceSpec(c, x, rs);
                           return true;
                         });
  if (!ok) return false;
  if (rs.poolGeneration < 0) {
    c.path = "spec.pool.generation";
    return c.fail("must not be negative");
  }
  if (rs.resourceSliceCount < 0) {
    c.path = "spec.pool.resourceSliceCount";
    return c.fail("must not be negative");
  }
  return true;
}

}  // namespace firstwork::model::detail
