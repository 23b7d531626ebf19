#include "base/daemon_logging.h"

#include <memory>

#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace ccsandbox {

void SetUpDaemonLogging(const std::string& daemon) {
  auto logger = spdlog::stderr_color_mt(daemon + "-log", spdlog::color_mode::automatic);
  spdlog::set_default_logger(std::move(logger));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ " + daemon + ": %v",
                      spdlog::pattern_time_type::utc);
}

}  // namespace ccsandbox
