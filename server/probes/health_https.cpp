// The `https` health check (doc/design.md "Metric sources"): the tcp check's connect (L4 time), then TLS over
// that socket through libevent's bufferevent_openssl with SNI and certificate verification (the system store,
// or `ca_file`; none with `insecure`), then the http check's GET and judgement
// (metrics/health/http_response.hpp). L7 time: request sent, after the handshake -> response complete. The
// certificate's notAfter goes into the result, whether or not it verified, so status can show an expiry that
// is near or past.
#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "metrics/health/http_response.hpp"
#include "server/probes/health_check.hpp"

namespace gslb::server::health {

namespace mh = gslb::metrics::health;

namespace {

struct CtxFree {
    void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};

// One SSL_CTX per trust store, for the process (control thread only): loading a CA bundle per run would cost
// more than the check. A ca_file that fails to load gives no context, and the error.
SSL_CTX* contextFor(const std::string& caFile, bool insecure, std::string& error) {
    static std::map<std::pair<std::string, bool>, std::unique_ptr<SSL_CTX, CtxFree>> cache;
    auto key = std::make_pair(caFile, insecure);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second.get();
    std::unique_ptr<SSL_CTX, CtxFree> ctx(SSL_CTX_new(TLS_client_method()));
    if (!ctx) {
        error = "tls: cannot create a context";
        return nullptr;
    }
    SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
    if (!insecure) {
        int ok = caFile.empty() ? SSL_CTX_set_default_verify_paths(ctx.get())
                                : SSL_CTX_load_verify_locations(ctx.get(), caFile.c_str(), nullptr);
        if (ok != 1) {
            error = fmt::format("tls: cannot load CA certificates from {}",
                                caFile.empty() ? "the system store" : caFile);
            ERR_clear_error();
            return nullptr;
        }
    }
    SSL_CTX* raw = ctx.get();
    cache.emplace(key, std::move(ctx));
    return raw;
}

bool isIpLiteral(const std::string& s) {
    unsigned char buf[16];
    return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

// notAfter as seconds since the epoch (UTC), 0 when it cannot be read.
int64_t notAfterUnix(X509* cert) {
    const ASN1_TIME* t = cert ? X509_get0_notAfter(cert) : nullptr;
    std::tm tm{};
    if (!t || ASN1_TIME_to_tm(t, &tm) != 1) return 0;
    return int64_t(timegm(&tm));
}

// Verification callback: keeps the verdict, and records the leaf certificate's notAfter on the run (also
// when the verdict is no: an untrusted certificate's expiry is still worth showing).
int onVerify(int preverifyOk, X509_STORE_CTX* store) {
    auto* ssl = static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
    auto* notAfter = ssl ? static_cast<int64_t*>(SSL_get_app_data(ssl)) : nullptr;
    if (notAfter) {
        int64_t t = notAfterUnix(X509_STORE_CTX_get0_cert(store));
        if (t) *notAfter = t;
    }
    return preverifyOk;
}

class HttpsCheck final : public CheckRun {
  public:
    HttpsCheck(event_base* base, const CheckSpec& spec, Done done) : CheckRun(base, spec, std::move(done)) {}
    ~HttpsCheck() override { release(); }

  private:
    void reset() override {
        response_.clear();
        sentAtMs_ = 0;
        handshaken_ = false;
    }

    void release() override {
        if (bev_) {
            // BEV_OPT_CLOSE_ON_FREE: the bufferevent frees the SSL object; the socket stays CheckRun's.
            bufferevent_free(bev_);
            bev_ = nullptr;
            ssl_ = nullptr;
        }
    }

    void connected() override {
        std::string error;
        SSL_CTX* ctx = contextFor(spec_.caFile, spec_.insecure, error);
        if (!ctx) return fail(error);
        ssl_ = SSL_new(ctx);
        if (!ssl_) return fail("tls: cannot create a session");
        const std::string& name = spec_.tlsName;
        if (!name.empty() && !isIpLiteral(name)) SSL_set_tlsext_host_name(ssl_, name.c_str());
        if (spec_.insecure) {
            SSL_set_verify(ssl_, SSL_VERIFY_NONE, nullptr);
        } else {
            SSL_set_app_data(ssl_, &certNotAfterUnix_);
            SSL_set_verify(ssl_, SSL_VERIFY_PEER, onVerify);
            X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
            if (!name.empty()) {
                if (isIpLiteral(name))
                    X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
                else
                    X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0);
            }
        }
        // The socket is CheckRun's (it closes it); a duplicate goes to the bufferevent, which closes that one
        // with the SSL object when it is freed.
        int fd = ::dup(fd_);
        if (fd < 0) {
            SSL_free(ssl_);
            ssl_ = nullptr;
            return fail(fmt::format("dup: {}", std::strerror(errno)));
        }
        bev_ = bufferevent_openssl_socket_new(base_, fd, ssl_, BUFFEREVENT_SSL_CONNECTING,
                                              BEV_OPT_CLOSE_ON_FREE);
        if (!bev_) {
            ::close(fd);
            SSL_free(ssl_);
            ssl_ = nullptr;
            return fail("tls: cannot create a bufferevent");
        }
        // A server that closes without close_notify (most do after "Connection: close") ends the response.
        bufferevent_openssl_set_allow_dirty_shutdown(bev_, 1);
        bufferevent_setcb(bev_, onRead, nullptr, onEvent, this);
        bufferevent_enable(bev_, EV_READ | EV_WRITE);
    }

    static void onEvent(bufferevent*, short what, void* arg) {
        auto* self = static_cast<HttpsCheck*>(arg);
        if (!self->running()) return;
        if (what & BEV_EVENT_CONNECTED) return self->handshakeDone();
        if (what & BEV_EVENT_EOF) return self->judge(true);
        if (what & (BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) return self->tlsError();
    }

    static void onRead(bufferevent*, void* arg) {
        auto* self = static_cast<HttpsCheck*>(arg);
        if (self->running()) self->judge(false);
    }

    void handshakeDone() {
        handshaken_ = true;
        X509* cert = SSL_get1_peer_certificate(ssl_);
        certNotAfterUnix_ = notAfterUnix(cert);
        X509_free(cert);
        std::string req = fmt::format(
            "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: gslbd-health\r\nAccept: */*\r\nConnection: "
            "close\r\n\r\n",
            spec_.path, spec_.host);
        sentAtMs_ = nowMs();
        bufferevent_write(bev_, req.data(), req.size());
    }

    void tlsError() {
        std::string why;
        if (!handshaken_) {
            long v = ssl_ ? SSL_get_verify_result(ssl_) : X509_V_OK;
            if (v != X509_V_OK) {
                while (bufferevent_get_openssl_error(bev_)) {
                }
                return fail(
                    fmt::format("tls: certificate verify failed: {}", X509_verify_cert_error_string(v)));
            }
        }
        unsigned long e = bufferevent_get_openssl_error(bev_);
        if (e) {
            char buf[256];
            ERR_error_string_n(e, buf, sizeof buf);
            why = buf;
        } else if (errno) {
            why = std::strerror(errno);
        } else {
            why = "connection closed";
        }
        while (bufferevent_get_openssl_error(bev_)) {
        }
        if (handshaken_ && !response_.empty()) return judge(true);  // a reset after the response
        fail((handshaken_ ? "tls: " : "tls handshake: ") + why);
    }

    void judge(bool eof) {
        if (!handshaken_) return fail("tls handshake: connection closed");
        evbuffer* in = bufferevent_get_input(bev_);
        size_t room = mh::kHttpMaxResponse - response_.size();
        size_t n = std::min(evbuffer_get_length(in), room);
        size_t at = response_.size();
        response_.resize(at + n);
        evbuffer_remove(in, response_.data() + at, n);
        bool full = response_.size() >= mh::kHttpMaxResponse;
        mh::HttpParse p = mh::parseHttpResponse(response_, eof, full);
        if (p.state == mh::HttpParse::State::Incomplete) return;
        double l7 = nowMs() - sentAtMs_;
        if (p.state == mh::HttpParse::State::Error) return fail(fmt::format("http: {}", p.error));
        mh::CheckVerdict v = mh::judgeHttp(p, spec_.expectStatus, spec_.expectBody);
        if (v.ok) return succeed(std::move(v.reason), l7);
        fail(std::move(v.reason));
    }

    bufferevent* bev_ = nullptr;
    SSL* ssl_ = nullptr;
    bool handshaken_ = false;
    std::string response_;
    double sentAtMs_ = 0;
};

}  // namespace

std::unique_ptr<CheckRun> makeHttpsCheck(event_base* base, const CheckSpec& spec, CheckRun::Done done) {
    return std::unique_ptr<CheckRun>(new HttpsCheck(base, spec, std::move(done)));
}

}  // namespace gslb::server::health
