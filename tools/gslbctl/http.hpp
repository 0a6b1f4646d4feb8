// A small blocking HTTP client for the control API, on libevent's evhttp (one request, one event loop).
#pragma once
#include <string>
#include <utility>
#include <vector>

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

/// One request of httpRequests.
struct HttpCall {
    std::string url, method, path, token, body;
    std::vector<std::pair<std::string, std::string>> headers = {};  // more request headers
};

/// Sends every call at once, each on its own connection of one event loop, and waits for them all: the time
/// taken is the slowest call's, not the sum (a cluster drain with a dead member, doc/ns-set.md). `timeoutMs`
/// bounds each call (connect and answer). Results are in the order of `calls`.
std::vector<HttpResult> httpRequests(const std::vector<HttpCall>& calls, int timeoutMs);

/// "%"-encodes a path segment (site names, addresses).
std::string pathSegment(const std::string& s);

}  // namespace gslb::ctl
