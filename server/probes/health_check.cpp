// The common part of a health check run: non-blocking connect, deadline, result (see health_check.hpp).
#include "server/probes/health_check.hpp"

#include "server/base/clock.hpp"
#include "server/conf/config.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace gslb::server::health {

bool setTarget(CheckSpec& spec, const std::string& address, int port) {
    // The same parser as every listen address of the config: one notion of "address and port".
    const bool v6 = address.find(':') != std::string::npos;
    ListenAddr a;
    std::string text = v6 ? fmt::format("[{}]:{}", address, port) : fmt::format("{}:{}", address, port);
    if (!parseListen(text, a)) return false;
    spec.addr = a.addr;
    spec.addrLen = a.len;
    spec.target = a.text;
    return true;
}

std::unique_ptr<CheckRun> CheckRun::make(event_base* base, const CheckSpec& spec, Done done) {
    if (spec.type == "http") return makeHttpCheck(base, spec, std::move(done));
    if (spec.type == "https") return makeHttpsCheck(base, spec, std::move(done));
    return makeTcpCheck(base, spec, std::move(done));
}

CheckRun::CheckRun(event_base* base, const CheckSpec& spec, Done done)
    : base_(base), spec_(spec), done_(std::move(done)) {
    deadline_ = evtimer_new(base_, onDeadline, this);
}

CheckRun::~CheckRun() {
    cleanup();
    if (deadline_) event_free(deadline_);
}

double CheckRun::nowMs() const {
    return double(monotonicUs()) / 1000;
}

double CheckRun::sinceStartMs() const {
    return double(monotonicUs() - startUs_) / 1000;
}

void CheckRun::cleanup() {
    release();
    if (io_) {
        event_free(io_);
        io_ = nullptr;
    }
    if (deadline_) evtimer_del(deadline_);
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
    running_ = false;
    connecting_ = false;
}

void CheckRun::cancel() {
    cleanup();
}

void CheckRun::start() {
    cleanup();
    reset();
    running_ = true;
    l4Ms_ = NAN;
    certNotAfterUnix_ = 0;
    startUs_ = monotonicUs();
    double t = spec_.timeout > 0 ? spec_.timeout : 0.001;
    timeval tv{time_t(t), suseconds_t((t - double(time_t(t))) * 1e6)};
    evtimer_add(deadline_, &tv);
    fd_ = ::socket(spec_.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return fail(fmt::format("socket: {}", std::strerror(errno)));
    int r = ::connect(fd_, reinterpret_cast<const sockaddr*>(&spec_.addr), spec_.addrLen);
    if (r == 0) {
        l4Ms_ = sinceStartMs();
        return connected();
    }
    if (errno != EINPROGRESS) return fail(fmt::format("connect: {}", std::strerror(errno)));
    connecting_ = true;
    want(EV_WRITE);
}

void CheckRun::want(short what) {
    if (io_) event_free(io_);
    io_ = event_new(base_, fd_, what, onSocket, this);
    event_add(io_, nullptr);
}

void CheckRun::onSocket(evutil_socket_t, short what, void* arg) {
    auto* self = static_cast<CheckRun*>(arg);
    if (!self->running_) return;
    if (self->connecting_) {
        self->connecting_ = false;
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(self->fd_, SOL_SOCKET, SO_ERROR, &err, &len) < 0) err = errno;
        if (err != 0) return self->fail(fmt::format("connect: {}", std::strerror(err)));
        self->l4Ms_ = self->sinceStartMs();
        return self->connected();
    }
    self->onIo(what);
}

void CheckRun::onDeadline(evutil_socket_t, short, void* arg) {
    auto* self = static_cast<CheckRun*>(arg);
    if (self->running_) self->fail("timeout");
}

void CheckRun::succeed(std::string reason, double l7Ms) {
    CheckResult r;
    r.ok = true;
    r.reason = std::move(reason);
    r.l4Ms = l4Ms_;
    r.l7Ms = l7Ms;
    r.certNotAfterUnix = certNotAfterUnix_;
    finish(std::move(r));
}

void CheckRun::fail(std::string reason) {
    CheckResult r;
    r.ok = false;
    r.reason = std::move(reason);
    r.l4Ms = l4Ms_;
    r.certNotAfterUnix = certNotAfterUnix_;
    finish(std::move(r));
}

void CheckRun::finish(CheckResult r) {
    r.elapsedMs = sinceStartMs();
    cleanup();
    Done done = done_;  // the callback may do anything but destroy this run; `this` is not touched after
    done(r);
}

}  // namespace gslb::server::health
