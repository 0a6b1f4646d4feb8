// EtcdClient (contract in etcd_client.hpp).
#include "server/cluster/etcd_client.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/ssl.h>

#include <charconv>
#include <nlohmann/json.hpp>

#include "server/base/http_client.hpp"

namespace gslb::server::cluster {

using nlohmann::json;

namespace {

// A watch is idle for as long as nothing changes under the prefix; etcd sends a progress notice every 10
// minutes (progress_notify, etcd's default interval), so an idle stream outlives this and a dead one (its
// endpoint gone without a FIN) is found by the keepalives on the unary connection first.
constexpr double kWatchIdleSec = 15 * 60;

std::string b64(const std::string& s) {
    return base64Encode(s);
}

std::string errorText() {
    unsigned long e = ERR_get_error();
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    ERR_clear_error();
    return buf;
}

}  // namespace

SSL_CTX* makeEtcdTls(const std::string& ca, const std::string& cert, const std::string& key,
                     std::string& error) {
    SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) {
        error = "cannot create a TLS context: " + errorText();
        return nullptr;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    int ok = ca.empty() ? SSL_CTX_set_default_verify_paths(ctx)
                        : SSL_CTX_load_verify_locations(ctx, ca.c_str(), nullptr);
    if (ok != 1) {
        error = fmt::format("etcd_ca {}: {}", ca.empty() ? "(the system store)" : ca, errorText());
        SSL_CTX_free(ctx);
        return nullptr;
    }
    if (!cert.empty()) {
        if (SSL_CTX_use_certificate_chain_file(ctx, cert.c_str()) != 1) {
            error = fmt::format("etcd_cert {}: {}", cert, errorText());
            SSL_CTX_free(ctx);
            return nullptr;
        }
        if (SSL_CTX_use_PrivateKey_file(ctx, key.c_str(), SSL_FILETYPE_PEM) != 1 ||
            SSL_CTX_check_private_key(ctx) != 1) {
            error = fmt::format("etcd_key {}: {}", key, errorText());
            SSL_CTX_free(ctx);
            return nullptr;
        }
    }
    return ctx;
}

EtcdClient::EtcdClient(event_base* base, std::vector<EtcdEndpoint> endpoints, SSL_CTX* tls, double timeoutSec)
    : base_(base), endpoints_(std::move(endpoints)), tls_(tls), timeoutSec_(timeoutSec) {
    if (endpoints_.empty())
        endpoints_.push_back(EtcdEndpoint{"http://127.0.0.1:2379", "127.0.0.1", 2379, false});
    clients_.resize(endpoints_.size());
}

EtcdClient::~EtcdClient() {
    *alive_ = false;
}

HttpClient& EtcdClient::client(size_t index) {
    if (!clients_[index]) {
        const EtcdEndpoint& e = endpoints_[index];
        clients_[index] = std::make_unique<HttpClient>(base_, e.host, e.port, e.tls ? tls_ : nullptr);
        clients_[index]->setTimeout(timeoutSec_);
        clients_[index]->setMaxBody(kMaxEtcdBody);
    }
    return *clients_[index];
}

void EtcdClient::failover() {
    current_ = (current_ + 1) % endpoints_.size();
}

void EtcdClient::later(std::function<void()> fn) {
    // The reply runs on a fresh turn of the loop, not inside libevent's callback of the request: it may send
    // the next request, stop the watch or fail over, none of which belongs inside evhttp's own callback of a
    // connection that is failing.
    struct Later {
        std::weak_ptr<bool> alive;
        std::function<void()> fn;
    };
    event_base_once(
        base_, -1, EV_TIMEOUT,
        [](evutil_socket_t, short, void* arg) {
            std::unique_ptr<Later> l(static_cast<Later*>(arg));
            auto a = l->alive.lock();
            if (a && *a) l->fn();
        },
        new Later{alive_, std::move(fn)}, nullptr);
}

void EtcdClient::call(const char* path, const std::string& body, Reply reply) {
    const size_t at = current_;
    std::weak_ptr<bool> alive = alive_;
    auto done = [this, alive, at, reply](const HttpAnswer& a) {
        auto live = alive.lock();
        if (!live || !*live) return;
        EtcdReply r;
        std::string error;
        if (a.status == 0) {
            error = answerError(a);
        } else if (a.status >= 500) {
            // The gateway answers 503 while the member has no leader, 5xx on other failures: another endpoint
            // may do better.
            error = fmt::format("http {}", a.status);
            if (!a.body.empty()) {
                EtcdReply ignored;
                std::string why = parseEtcdReply(a.body, ignored);
                if (!why.empty() && why.rfind("etcd: ", 0) == 0) error += " (" + why + ")";
            }
        } else {
            error = parseEtcdReply(a.body, r);
            if (error.empty() && a.status != 200) error = fmt::format("http {}", a.status);
            // A 4xx is etcd refusing this request (a lease not found, a bad request): the endpoint is fine.
            if (!error.empty() && a.status >= 400 && a.status < 500) {
                later(std::bind(reply, error, r));
                return;
            }
        }
        if (!error.empty() && at == current_) failover();
        later(std::bind(reply, error, r));
    };
    HttpClient& c = client(at);
    if (!c.send(EVHTTP_REQ_POST, path, {{"Content-Type", "application/json"}, {"Accept", "application/json"}},
                body, done)) {
        // libevent would not start it: fail on a fresh turn of the loop, as callers expect.
        auto* d = new Reply(std::move(reply));
        if (at == current_) failover();
        event_base_once(
            base_, -1, EV_TIMEOUT,
            [](evutil_socket_t, short, void* arg) {
                std::unique_ptr<Reply> r(static_cast<Reply*>(arg));
                (*r)("cannot send the request", EtcdReply{});
            },
            d, nullptr);
    }
}

void EtcdClient::range(const std::string& key, const std::string& rangeEnd, Reply reply) {
    json j{{"key", b64(key)}};
    if (!rangeEnd.empty()) j["range_end"] = b64(rangeEnd);
    call("/v3/kv/range", j.dump(), std::move(reply));
}

void EtcdClient::put(const std::string& key, const std::string& value, int64_t lease, Reply reply) {
    json j{{"key", b64(key)}, {"value", b64(value)}};
    if (lease) j["lease"] = std::to_string(lease);
    call("/v3/kv/put", j.dump(), std::move(reply));
}

void EtcdClient::del(const std::string& key, Reply reply) {
    call("/v3/kv/deleterange", json{{"key", b64(key)}}.dump(), std::move(reply));
}

void EtcdClient::putIfAbsent(const std::string& key, const std::string& value, int64_t lease, Reply reply) {
    json put{{"key", b64(key)}, {"value", b64(value)}};
    if (lease) put["lease"] = std::to_string(lease);
    json j{{"compare",
            json::array(
                {{{"key", b64(key)}, {"target", "CREATE"}, {"result", "EQUAL"}, {"create_revision", "0"}}})},
           {"success", json::array({{{"request_put", put}}})},
           {"failure", json::array({{{"request_range", {{"key", b64(key)}}}}})}};
    call("/v3/kv/txn", j.dump(), std::move(reply));
}

void EtcdClient::deleteIfValue(const std::string& key, const std::string& expected, Reply reply) {
    json j{{"compare",
            json::array(
                {{{"key", b64(key)}, {"target", "VALUE"}, {"result", "EQUAL"}, {"value", b64(expected)}}})},
           {"success", json::array({{{"request_delete_range", {{"key", b64(key)}}}}})}};
    call("/v3/kv/txn", j.dump(), std::move(reply));
}

void EtcdClient::leaseGrant(int64_t ttl, Reply reply) {
    call("/v3/lease/grant", json{{"TTL", std::to_string(ttl)}}.dump(), std::move(reply));
}

void EtcdClient::leaseKeepAlive(int64_t id, Reply reply) {
    call("/v3/lease/keepalive", json{{"ID", std::to_string(id)}}.dump(), std::move(reply));
}

void EtcdClient::leaseRevoke(int64_t id, Reply reply) {
    call("/v3/lease/revoke", json{{"ID", std::to_string(id)}}.dump(), std::move(reply));
}

bool EtcdClient::watch(const std::string& key, const std::string& rangeEnd, int64_t startRevision,
                       WatchMessage message, WatchEnd end) {
    stopWatch();
    const EtcdEndpoint& e = endpoints_[current_];
    watchClient_ = std::make_unique<HttpClient>(base_, e.host, e.port, e.tls ? tls_ : nullptr);
    watchClient_->setTimeout(kWatchIdleSec);
    json create{{"key", b64(key)}, {"progress_notify", true}};
    if (!rangeEnd.empty()) create["range_end"] = b64(rangeEnd);
    if (startRevision > 0) create["start_revision"] = std::to_string(startRevision);
    watchBuf_.clear();
    auto ended = std::make_shared<bool>(false);
    // `end` runs on a fresh turn of the loop: its owner may stop or restart the watch, which must not free
    // the request from inside libevent's callback of it.
    // The endpoint whose stream ended is likely gone: the requests that follow go to the next one.
    std::weak_ptr<bool> alive = alive_;
    const size_t at = current_;
    auto finish = [this, end, ended, alive, at](const std::string& why) {
        if (*ended) return;
        *ended = true;
        struct Later {
            EtcdClient* self;
            std::weak_ptr<bool> alive;
            size_t at;
            WatchEnd end;
            std::string why;
        };
        event_base_once(
            base_, -1, EV_TIMEOUT,
            [](evutil_socket_t, short, void* arg) {
                std::unique_ptr<Later> l(static_cast<Later*>(arg));
                auto a = l->alive.lock();
                if (!a || !*a) return;
                if (l->at == l->self->current_) l->self->failover();
                l->end(l->why);
            },
            new Later{this, alive, at, end, why}, nullptr);
    };
    auto chunk = [this, message, finish, ended](const char* data, size_t len) {
        if (*ended) return;
        watchBuf_.append(data, len);
        std::vector<std::string> msgs;
        std::string why = splitWatchMessages(watchBuf_, msgs);
        for (const auto& m : msgs) {
            EtcdReply r;
            std::string err = parseEtcdReply(m, r);
            if (!err.empty()) {
                finish("a refused watch message: " + err);
                return;
            }
            message(r);
            if (*ended) return;
            if (r.canceled || r.compactRevision) {
                finish(r.compactRevision ? fmt::format("etcd compacted past revision {}", r.compactRevision)
                                         : "etcd cancelled the watch");
                return;
            }
        }
        if (!why.empty()) finish(why);
    };
    auto done = [finish](const HttpAnswer& a) {
        finish(a.status == 0 ? answerError(a) : fmt::format("the watch stream ended (http {})", a.status));
    };
    return watchClient_->sendStream(EVHTTP_REQ_POST, "/v3/watch",
                                    {{"Content-Type", "application/json"}, {"Accept", "application/json"}},
                                    json{{"create_request", create}}.dump(), chunk, done);
}

void EtcdClient::stopWatch() {
    watchClient_.reset();  // cancels the stream: its callbacks are not called
    watchBuf_.clear();
}

}  // namespace gslb::server::cluster
