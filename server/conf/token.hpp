// The control API's bearer token file ([control] token_file): read by the control API when it starts and
// on every reload, and by the config check (gslbd --check, gslbctl check), which must refuse the same file
// the daemon would.
#pragma once
#include <string>

namespace gslb::server {

/// Reads a token file: the token without surrounding white space, at least 8 characters. False and
/// `error` ("FILE: why") otherwise.
bool loadControlToken(const std::string& path, std::string& token, std::string& error);

}  // namespace gslb::server
