#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "metrics/health/http_response.hpp"

using namespace gslb::metrics::health;
using St = HttpParse::State;

TEST_CASE("http: content-length body, complete only when all of it is there") {
    std::string r = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX: y\r\n\r\nhel";
    CHECK(parseHttpResponse(r, false, false).state == St::Incomplete);
    r += "lo";
    auto p = parseHttpResponse(r, false, false);
    CHECK(p.state == St::Complete);
    CHECK(p.status == 200);
    CHECK(p.body == "hello");
    CHECK(parseHttpResponse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", true, false).state ==
          St::Error);
}

TEST_CASE("http: body until the connection closes (HTTP/1.0 style)") {
    std::string r = "HTTP/1.0 503 Service Unavailable\r\nServer: x\r\n\r\ndown for maintenance";
    CHECK(parseHttpResponse(r, false, false).state == St::Incomplete);
    auto p = parseHttpResponse(r, true, false);
    CHECK(p.state == St::Complete);
    CHECK(p.status == 503);
    CHECK(p.body == "down for maintenance");
}

TEST_CASE("http: chunked body is decoded") {
    std::string r = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n5;x=1\r\npedia\r\n";
    CHECK(parseHttpResponse(r, false, false).state == St::Incomplete);
    r += "0\r\n\r\n";
    auto p = parseHttpResponse(r, false, false);
    CHECK(p.state == St::Complete);
    CHECK(p.body == "Wikipedia");
}

TEST_CASE("http: interim 100 Continue is skipped; 204 has no body") {
    auto p = parseHttpResponse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n", false, false);
    CHECK(p.state == St::Complete);
    CHECK(p.status == 204);
}

TEST_CASE("http: malformed and missing responses are errors") {
    CHECK(parseHttpResponse("", true, false).error == "no response");
    CHECK(parseHttpResponse("SSH-2.0-OpenSSH\r\n\r\n", false, false).state == St::Error);
    CHECK(parseHttpResponse("HTTP/1.1 2x0 OK\r\n\r\n", true, false).state == St::Error);
    CHECK(parseHttpResponse("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", true, false).state == St::Error);
    CHECK(parseHttpResponse("HTTP/1.1 200 OK\r\nServer", true, false).state == St::Error);
}

TEST_CASE("http: the read limit completes the response with what arrived") {
    std::string r = "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nabc";
    auto p = parseHttpResponse(r, false, true);
    CHECK(p.state == St::Complete);
    CHECK(p.body == "abc");
}

TEST_CASE("http: judging status and body") {
    std::vector<int> ok{200, 204};
    auto p = parseHttpResponse("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nall ok!", false, false);
    CHECK(judgeHttp(p, ok, "").ok);
    CHECK(judgeHttp(p, ok, "ok").ok);
    auto v = judgeHttp(p, ok, "healthy");
    CHECK_FALSE(v.ok);
    CHECK(v.reason == "http 200: body lacks \"healthy\"");
    auto bad = parseHttpResponse("HTTP/1.1 503 Unavailable\r\nContent-Length: 0\r\n\r\n", false, false);
    v = judgeHttp(bad, ok, "");
    CHECK_FALSE(v.ok);
    CHECK(v.reason == "http 503");
    auto err = parseHttpResponse("", true, false);
    v = judgeHttp(err, ok, "");
    CHECK_FALSE(v.ok);
    CHECK(v.reason == "http: no response");
}
