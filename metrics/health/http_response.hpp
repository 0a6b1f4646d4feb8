#pragma once
// The HTTP health check's response reader (doc/design.md "Metric sources"): decides from the bytes received
// so far whether the response is complete and what it says. Pure logic, no I/O: the libevent side
// (server/probes/health_http.cpp) feeds it whatever it has read.
//
// - Status line "HTTP/1.x SSS reason"; interim 1xx responses (except 101) are skipped.
// - The body ends at Content-Length, at the last chunk (Transfer-Encoding: chunked, decoded), or at the end
//   of the connection (we send "Connection: close"); 204, 304 and 1xx have none.
// - Reading is bounded (kHttpMaxResponse): when that much has arrived the response counts as complete with
//   what we have (the body match looks at the first bytes only).

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace gslb::metrics::health {

inline constexpr std::size_t kHttpMaxResponse = 64 * 1024;

struct HttpParse {
    enum class State { Incomplete, Complete, Error } state = State::Incomplete;
    int status = 0;
    std::string body;   // decoded body (Complete)
    std::string error;  // Error: why ("no response", "malformed status line", …)
};

// data: every byte received so far; eof: the peer closed the connection; full: the read limit was reached.
HttpParse parseHttpResponse(std::string_view data, bool eof, bool full);

struct CheckVerdict {
    bool ok = false;
    std::string reason;  // "http 200", "http 503", "http 200: body lacks \"OK\""
};

// Judges a complete response against the check's expectations (status in expectStatus, body holds
// expectBody when it is not empty).
CheckVerdict judgeHttp(const HttpParse& r, std::span<const int> expectStatus, std::string_view expectBody);

}  // namespace gslb::metrics::health
