// `gslbctl check CONFIG`: the same check as `gslbd --check` (server/daemon/check.cpp), so both say the same,
// but for the user gslbd will run as, which depends on how it is started (Checker::kConfig).
#include "server/daemon/check.hpp"
#include "tools/gslbctl/commands.hpp"

namespace gslb::ctl {

int check(const std::string& configPath) {
    return server::checkConfig(configPath, stdout, server::Checker::kConfig) == 0 ? kOk : kFailed;
}

}  // namespace gslb::ctl
