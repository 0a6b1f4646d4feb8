// `gslbctl check CONFIG`: the same check as `gslbd --check` (server/check.cpp), so both say the same.
#include "server/check.hpp"
#include "tools/gslbctl/commands.hpp"

namespace gslb::ctl {

int check(const std::string& configPath) {
    return server::checkConfig(configPath, stdout) == 0 ? kOk : kFailed;
}

}  // namespace gslb::ctl
