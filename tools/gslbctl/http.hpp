// A small blocking HTTP client for the control API, on libevent's evhttp (one request, one event loop).
#pragma once
#include <string>

namespace gslb::ctl {

struct HttpResult {
    bool reached = false;  // false: no HTTP response (refused, timeout, …); `error` says why
    int status = 0;
    std::string body;
    std::string error;
};

/// Sends `method` ("GET"/"POST") `path` to `url` ("http://HOST:PORT"), with "Authorization: Bearer TOKEN"
/// when `token` is not empty and `body` as application/json for POST. Gives up after `timeoutS` seconds.
HttpResult httpRequest(const std::string& url, const std::string& method, const std::string& path,
                       const std::string& token, const std::string& body, int timeoutS = 5);

/// "%"-encodes a path segment (site names, addresses).
std::string pathSegment(const std::string& s);

}  // namespace gslb::ctl
