#include "metrics/health/http_response.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace gslb::metrics::health {

namespace {

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

// Finds the end of the header block; returns npos when not there yet. `skip` gets the terminator's length.
size_t headerEnd(std::string_view d, size_t& skip) {
    size_t a = d.find("\r\n\r\n");
    size_t b = d.find("\n\n");
    if (a != std::string_view::npos && (b == std::string_view::npos || a < b)) {
        skip = 4;
        return a;
    }
    if (b != std::string_view::npos) {
        skip = 2;
        return b;
    }
    return std::string_view::npos;
}

// Decodes a chunked body. Returns 1 when the last chunk was seen, 0 when more is needed, -1 on bad framing.
int dechunk(std::string_view d, std::string& out) {
    size_t pos = 0;
    for (;;) {
        size_t eol = d.find('\n', pos);
        if (eol == std::string_view::npos) return 0;
        std::string_view line = trim(d.substr(pos, eol - pos));
        size_t semi = line.find(';');
        if (semi != std::string_view::npos) line = trim(line.substr(0, semi));
        if (line.empty()) return -1;
        size_t size = 0;
        for (char c : line) {
            if (!std::isxdigit(static_cast<unsigned char>(c)) || size > (size_t(1) << 40)) return -1;
            size = size * 16 +
                   size_t(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : std::tolower(c) - 'a' + 10);
        }
        pos = eol + 1;
        if (size == 0) return 1;  // trailers are not needed
        if (d.size() - pos < size) {
            out.append(d.substr(pos));  // partial chunk: what we have (matters when the read limit is hit)
            return 0;
        }
        out.append(d.substr(pos, size));
        pos += size;
        if (d.size() - pos < 1) return 0;
        if (d.substr(pos, 2) == "\r\n") {
            pos += 2;
        } else if (d[pos] == '\n') {
            pos += 1;
        } else if (d.size() - pos >= 2 || d[pos] != '\r') {
            return -1;
        } else {
            return 0;
        }
    }
}

}  // namespace

HttpParse parseHttpResponse(std::string_view data, bool eof, bool full) {
    HttpParse r;
    auto fail = [&](std::string why) {
        r.state = HttpParse::State::Error;
        r.error = std::move(why);
        return r;
    };
    for (;;) {  // once per response: interim 1xx responses are skipped
        size_t skip = 0;
        size_t end = headerEnd(data, skip);
        if (end == std::string_view::npos) {
            if (data.empty() && eof) return fail("no response");
            if (data.size() >= 5 && data.substr(0, 5) != "HTTP/") return fail("malformed status line");
            if (eof) return fail("connection closed in the response header");
            if (full) return fail("response header too long");
            return r;
        }
        std::string_view head = data.substr(0, end);
        std::string_view rest = data.substr(end + skip);
        size_t eol = head.find('\n');
        std::string_view status = trim(head.substr(0, eol));
        // HTTP/1.1 200 OK
        if (status.size() < 12 || status.substr(0, 5) != "HTTP/" || status[8] != ' ')
            return fail("malformed status line");
        std::string_view code = status.substr(9, 3);
        if (!std::all_of(code.begin(), code.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
            (status.size() > 12 && status[12] != ' '))
            return fail("malformed status line");
        r.status = (code[0] - '0') * 100 + (code[1] - '0') * 10 + (code[2] - '0');
        if (r.status < 100) return fail("malformed status line");
        bool chunked = false;
        long long length = -1;
        std::string_view headers = eol == std::string_view::npos ? std::string_view{} : head.substr(eol + 1);
        while (!headers.empty()) {
            size_t e = headers.find('\n');
            std::string_view line = headers.substr(0, e);
            headers = e == std::string_view::npos ? std::string_view{} : headers.substr(e + 1);
            size_t colon = line.find(':');
            if (colon == std::string_view::npos) continue;
            std::string_view name = trim(line.substr(0, colon));
            std::string_view value = trim(line.substr(colon + 1));
            if (iequals(name, "content-length")) {
                char* endp = nullptr;
                std::string v(value);
                long long n = std::strtoll(v.c_str(), &endp, 10);
                if (v.empty() || *endp != '\0' || n < 0) return fail("bad Content-Length");
                length = n;
            } else if (iequals(name, "transfer-encoding")) {
                std::string v(value);
                for (auto& c : v) c = char(std::tolower(static_cast<unsigned char>(c)));
                chunked = v.find("chunked") != std::string::npos;
            }
        }
        if (r.status < 200 && r.status != 101) {  // interim response: the real one follows
            data = rest;
            r = HttpParse{};
            continue;
        }
        if (r.status == 204 || r.status == 304 || r.status < 200) {
            r.state = HttpParse::State::Complete;
            return r;
        }
        if (chunked) {
            std::string body;
            int d = dechunk(rest, body);
            if (d < 0) return fail("bad chunked encoding");
            if (d == 0 && !eof && !full) return r;
            if (d == 0 && eof) return fail("connection closed in the body");
            r.body = std::move(body);
        } else if (length >= 0) {
            if (rest.size() < size_t(length)) {
                if (eof) return fail("connection closed in the body");
                if (!full) return r;
                r.body = std::string(rest);
            } else {
                r.body = std::string(rest.substr(0, size_t(length)));
            }
        } else {
            if (!eof && !full) return r;  // the body ends with the connection
            r.body = std::string(rest);
        }
        r.state = HttpParse::State::Complete;
        return r;
    }
}

CheckVerdict judgeHttp(const HttpParse& r, std::span<const int> expectStatus, std::string_view expectBody) {
    CheckVerdict v;
    if (r.state != HttpParse::State::Complete) {
        v.reason = fmt::format("http: {}", r.error.empty() ? "incomplete response" : r.error);
        return v;
    }
    v.reason = fmt::format("http {}", r.status);
    if (std::find(expectStatus.begin(), expectStatus.end(), r.status) == expectStatus.end()) return v;
    if (!expectBody.empty() && r.body.find(expectBody) == std::string::npos) {
        v.reason = fmt::format("http {}: body lacks \"{}\"", r.status, expectBody);
        return v;
    }
    v.ok = true;
    return v;
}

}  // namespace gslb::metrics::health
