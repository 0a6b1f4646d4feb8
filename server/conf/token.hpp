// The control API's bearer token file ([control] token_file): read by the control API when it starts and
// on every reload, and by the config check (gslbd --check, gslbctl check), which must refuse the same file
// the daemon would.
#pragma once
#include <string>

namespace gslb::server {

/// Reads a token file: the token without surrounding white space, at least 8 characters. False and
/// `error` ("FILE: why", with what to do) otherwise: a file that cannot be read (with errno's reason and
/// the user gslbd reads it as), one longer than 64 KiB, or one that other users may read or write, or its
/// group write (tokenModeProblem).
bool loadControlToken(const std::string& path, std::string& token, std::string& error);

/// Empty when a control token file with permission bits `mode` (st_mode; the file type bits are ignored) is
/// kept to its owner (and group, read-only); else why not and the chmod to run for `path`. The token is the
/// API's only credential: whoever can read it can drain every site, and whoever can write it can set one of
/// their own. So gslbd refuses such a file at start and at reload (the old token stays), as OpenSSH refuses
/// a private key others can read ("UNPROTECTED PRIVATE KEY FILE"), rather than warn in a log nobody reads:
/// mode 0600, or 0640 with the group gslbd runs as (the shipped unit), pass; o+r, o+w and g+w do not.
std::string tokenModeProblem(const std::string& path, unsigned mode);

}  // namespace gslb::server
