#pragma once
#include <spdlog/spdlog.h>

#include <memory>

namespace firstwork::kube::detail {

/// The "kube" logger when the daemon registered one, else spdlog's default logger.
inline std::shared_ptr<spdlog::logger> logger() {
  auto l = spdlog::get("kube");
  return l ? l : spdlog::default_logger();
}

}  // namespace firstwork::kube::detail
