// The `http` health check: connect (L4 time), send "GET path HTTP/1.1" with Host and Connection: close,
// read the response (bounded, metrics/health/http_response.hpp) and judge it: up when the status is one of
// expect_status and the body holds expect_body (when set). L7 time: request sent -> response complete.
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "metrics/health/http_response.hpp"
#include "server/probes/health_check.hpp"

namespace gslb::server::health {

namespace mh = gslb::metrics::health;

namespace {

class HttpCheck final : public CheckRun {
  public:
    HttpCheck(event_base* base, const CheckSpec& spec, Done done) : CheckRun(base, spec, std::move(done)) {}

  private:
    void reset() override {
        request_.clear();
        sent_ = 0;
        response_.clear();
        sentAtMs_ = 0;
    }

    void connected() override {
        request_ = fmt::format(
            "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: gslbd-health\r\nAccept: */*\r\nConnection: "
            "close\r\n\r\n",
            spec_.path, spec_.host);
        sendMore();
    }

    void sendMore() {
        while (sent_ < request_.size()) {
            ssize_t n = ::send(fd_, request_.data() + sent_, request_.size() - sent_, MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EINTR) continue;
                if (errno == EAGAIN || errno == EWOULDBLOCK) return want(EV_WRITE);
                return fail(fmt::format("send: {}", std::strerror(errno)));
            }
            sent_ += size_t(n);
        }
        sentAtMs_ = nowMs();
        want(EV_READ | EV_PERSIST);
    }

    void onIo(short what) override {
        if (sent_ < request_.size()) {
            if (what & EV_WRITE) sendMore();
            return;
        }
        bool eof = false;
        char buf[8192];
        while (response_.size() < mh::kHttpMaxResponse) {
            size_t room = std::min(sizeof buf, mh::kHttpMaxResponse - response_.size());
            ssize_t n = ::recv(fd_, buf, room, 0);
            if (n > 0) {
                response_.append(buf, size_t(n));
                continue;
            }
            if (n == 0) {
                eof = true;
                break;
            }
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            if (response_.empty()) return fail(fmt::format("recv: {}", std::strerror(errno)));
            eof = true;  // a reset after the response: judge what arrived
            break;
        }
        bool full = response_.size() >= mh::kHttpMaxResponse;
        mh::HttpParse p = mh::parseHttpResponse(response_, eof, full);
        if (p.state == mh::HttpParse::State::Incomplete) return;  // EV_PERSIST: more to come
        double l7 = nowMs() - sentAtMs_;
        if (p.state == mh::HttpParse::State::Error) return fail(fmt::format("http: {}", p.error));
        mh::CheckVerdict v = mh::judgeHttp(p, spec_.expectStatus, spec_.expectBody);
        if (v.ok) return succeed(std::move(v.reason), l7);
        fail(std::move(v.reason));
    }

    std::string request_;
    size_t sent_ = 0;
    std::string response_;
    double sentAtMs_ = 0;
};

}  // namespace

std::unique_ptr<CheckRun> makeHttpCheck(event_base* base, const CheckSpec& spec, CheckRun::Done done) {
    return std::unique_ptr<CheckRun>(new HttpCheck(base, spec, std::move(done)));
}

}  // namespace gslb::server::health
