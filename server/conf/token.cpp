#include "server/conf/token.hpp"

#include <fmt/format.h>

#include <cctype>
#include <fstream>
#include <sstream>

namespace gslb::server {

bool loadControlToken(const std::string& path, std::string& token, std::string& error) {
    std::ifstream in(path);
    if (!in) {
        error = fmt::format("{}: cannot read the control token file", path);
        return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    std::string t = ss.str();
    while (!t.empty() && isspace(uint8_t(t.back()))) t.pop_back();
    while (!t.empty() && isspace(uint8_t(t.front()))) t.erase(t.begin());
    if (t.size() < 8) {
        error = fmt::format("{}: the control token must be at least 8 characters", path);
        return false;
    }
    token = t;
    return true;
}

}  // namespace gslb::server
