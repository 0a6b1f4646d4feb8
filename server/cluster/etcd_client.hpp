// gslbd's etcd client (doc/ns-set.md "Shared state in etcd"): etcd 3.4's v3 JSON gateway (POST /v3/kv/range,
// /v3/kv/put, /v3/kv/deleterange, /v3/kv/txn, /v3/lease/grant, /v3/lease/keepalive, /v3/lease/revoke,
// /v3/watch) over the control thread's HTTP client (server/base/http_client.hpp, libevent's evhttp; TLS with
// a client certificate through bufferevent_openssl). Asynchronous on the control thread's event loop: nothing
// here blocks, and nothing on the query path ever calls it.
//
// Why the JSON gateway and not gRPC (libgrpc++-dev): the gateway is part of every etcd 3.4 server
// (`etcd-server` in Debian 12), speaks HTTP/1.1 that the evhttp client gslbd already runs for its checks
// and scrapes can carry, and keeps every request on the one libevent loop of the control thread. gRPC's C++
// API wants its own completion-queue threads (or a second event loop polled beside libevent's), a
// generated etcdserverpb stub and the protobuf/abseil/c-ares stack at build and run time, for a handful of
// small requests a second. The gateway's costs — base64 keys, int64 fields as strings, a watch as a
// chunked stream of JSON objects — are parsed in server/cluster/etcd_wire.hpp.
//
// Endpoints: the `[cluster] etcd` URLs, tried in order. A request that fails without an answer from etcd
// (cannot connect, timeout, a 5xx from the gateway) moves the client to the next endpoint for the requests
// that follow; the caller decides when to try again (server/cluster/etcd_sync.hpp). One request at a time is
// not required: several may be in flight.
#pragma once
#include <event2/event.h>
#include <openssl/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/cluster/etcd_wire.hpp"
#include "server/conf/config.hpp"

namespace gslb::server {
class HttpClient;
}

namespace gslb::server::cluster {

/// The TLS settings of `[cluster] etcd_ca`, `etcd_cert`, `etcd_key` as an OpenSSL client context (TLS 1.2 or
/// later; the server's certificate verified against `ca`, or the system store when empty; the client
/// certificate and key sent when given). nullptr with `error` when a file cannot be read or the key does not
/// match the certificate. The caller owns it (SSL_CTX_free).
SSL_CTX* makeEtcdTls(const std::string& ca, const std::string& cert, const std::string& key,
                     std::string& error);

class EtcdClient {
  public:
    /// `error` empty: `reply` holds etcd's answer; else why there is none (transport, HTTP status, etcd's
    /// error message, or a refused answer).
    using Reply = std::function<void(const std::string& error, const EtcdReply& reply)>;
    using WatchMessage = std::function<void(const EtcdReply& message)>;
    using WatchEnd = std::function<void(const std::string& why)>;

    /// `tls` (may be null; not owned) is used for the https endpoints. `timeoutSec`: each unary request's
    /// limit (connect and answer).
    EtcdClient(event_base* base, std::vector<EtcdEndpoint> endpoints, SSL_CTX* tls, double timeoutSec);
    ~EtcdClient();  // cancels everything in flight: no callback follows
    EtcdClient(const EtcdClient&) = delete;
    EtcdClient& operator=(const EtcdClient&) = delete;

    /// Every key in [key, rangeEnd) (rangeEnd empty: `key` alone), with the store's revision.
    void range(const std::string& key, const std::string& rangeEnd, Reply reply);
    /// Puts `value` at `key`, attached to `lease` (0: none).
    void put(const std::string& key, const std::string& value, int64_t lease, Reply reply);
    /// Deletes `key`.
    void del(const std::string& key, Reply reply);
    /// A transaction: when `key` does not exist (create_revision 0), put `value` under `lease`
    /// (reply.succeeded); else reply.kvs has the key as it is.
    void putIfAbsent(const std::string& key, const std::string& value, int64_t lease, Reply reply);
    /// A transaction: when `key` exists with exactly `expected`, delete it (reply.succeeded).
    void deleteIfValue(const std::string& key, const std::string& expected, Reply reply);
    /// A lease of `ttl` seconds (reply.leaseId, reply.ttl).
    void leaseGrant(int64_t ttl, Reply reply);
    /// One keepalive of `id`: reply.ttl is the TTL renewed, 0 when the lease is gone (expired or revoked).
    void leaseKeepAlive(int64_t id, Reply reply);
    void leaseRevoke(int64_t id, Reply reply);

    /// Watches [key, rangeEnd) from `startRevision` on the current endpoint: `message` gets each watch
    /// message (created, events, compaction) in order, `end` once when the stream stops (the endpoint went,
    /// the watch was cancelled by etcd, a broken message). One watch at a time: a new one replaces the old,
    /// whose callbacks are not called.
    bool watch(const std::string& key, const std::string& rangeEnd, int64_t startRevision,
               WatchMessage message, WatchEnd end);
    void stopWatch();

    /// Moves to the next endpoint (the requests that follow go there).
    void failover();
    const EtcdEndpoint& endpoint() const { return endpoints_[current_]; }
    size_t endpointCount() const { return endpoints_.size(); }

  private:
    void call(const char* path, const std::string& body, Reply reply);
    void later(std::function<void()> fn);
    HttpClient& client(size_t index);

    event_base* base_;
    std::vector<EtcdEndpoint> endpoints_;
    SSL_CTX* tls_;
    double timeoutSec_;
    size_t current_ = 0;
    std::vector<std::unique_ptr<HttpClient>> clients_;  // per endpoint, for unary requests
    std::unique_ptr<HttpClient> watchClient_;           // the watch's own connection
    std::string watchBuf_;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace gslb::server::cluster
