#include "server/state/tls_context.hpp"

#include <openssl/err.h>
#include <openssl/x509.h>

#include <cstring>

#include <fmt/format.h>

#include "server/conf/config.hpp"

namespace gslb::server {
namespace {

// The first OpenSSL error of the queue as text ("no start line", "key values mismatch"), then the queue
// emptied: a thread's queue must not carry one failure into the next call.
std::string sslError() {
    unsigned long e = ERR_get_error();
    ERR_clear_error();
    if (!e) return "unknown error";
    const char* r = ERR_reason_error_string(e);
    return r ? r : fmt::format("error {:#x}", e);
}

// RFC 9103 §7.1 and RFC 7858 §3.2: the ALPN token "dot" (IANA's ALPN registry, RFC 9103 §11).
constexpr unsigned char kDot[] = {3, 'd', 'o', 't'};

int selectAlpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
               unsigned int inlen, void*) {
    unsigned char* sel = nullptr;
    if (SSL_select_next_proto(&sel, outlen, kDot, sizeof kDot, in, inlen) == OPENSSL_NPN_NEGOTIATED) {
        *out = sel;
        return SSL_TLSEXT_ERR_OK;
    }
    // ALPN offered without "dot": RFC 7301 §3.2 says refuse with no_application_protocol, rather than talk
    // DNS to a client that expects another protocol on this port.
    return SSL_TLSEXT_ERR_ALERT_FATAL;
}

}  // namespace

SslCtxPtr makeServerContext(const ServerConf& conf, std::string& error) {
    ERR_clear_error();
    SslCtxPtr ctx(SSL_CTX_new(TLS_server_method()));
    if (!ctx) {
        error = "tls: cannot create a context: " + sslError();
        return nullptr;
    }
    SSL_CTX* c = ctx.get();
    SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
    SSL_CTX_set_max_proto_version(c, TLS1_3_VERSION);
    // TLS 1.2: ECDHE with AEAD ciphers only, the suites RFC 9325 §4.2 recommends: no CBC (Lucky Thirteen), no
    // RSA key transport (ROBOT), no static or finite-field DH. Every TLS 1.2 client of the last decade offers
    // one; TLS 1.3's suites are all AEAD and are left as they are.
    if (SSL_CTX_set_cipher_list(c, "ECDHE+AESGCM:ECDHE+CHACHA20") != 1) {
        error = "tls: cannot set the TLS 1.2 ciphers: " + sslError();
        return nullptr;
    }
    // Client-initiated renegotiation is a CPU lever for a client (and TLS 1.3 has none); compression leaks
    // (CRIME). No session cache on the server: tickets resume without memory held per client.
    SSL_CTX_set_options(c, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_session_cache_mode(c, SSL_SESS_CACHE_OFF);
    // Idle connections give their 16 KiB+ record buffers back (a server with thousands of idle DoT clients).
    SSL_CTX_set_mode(c, SSL_MODE_RELEASE_BUFFERS);
    // A client certificate chain is read into memory during the handshake: 100 KiB by default, for each of
    // thousands of handshakes in flight; a secondary's chain is a few KiB.
    SSL_CTX_set_max_cert_list(c, 32 << 10);
    if (SSL_CTX_use_certificate_chain_file(c, conf.tlsCertificate.c_str()) != 1) {
        error = fmt::format("tls_certificate {}: {}", conf.tlsCertificate, sslError());
        return nullptr;
    }
    if (SSL_CTX_use_PrivateKey_file(c, conf.tlsKey.c_str(), SSL_FILETYPE_PEM) != 1) {
        error = fmt::format("tls_key {}: {}", conf.tlsKey, sslError());
        return nullptr;
    }
    if (SSL_CTX_check_private_key(c) != 1) {
        error = fmt::format("tls_key {} does not match tls_certificate {}: {}", conf.tlsKey,
                            conf.tlsCertificate, sslError());
        return nullptr;
    }
    SSL_CTX_set_alpn_select_cb(c, selectAlpn, nullptr);
    if (!conf.tlsClientCa.empty()) {
        if (SSL_CTX_load_verify_locations(c, conf.tlsClientCa.c_str(), nullptr) != 1) {
            error = fmt::format("tls_client_ca {}: {}", conf.tlsClientCa, sslError());
            return nullptr;
        }
        // The CAs named in the CertificateRequest, so that a client with several certificates picks ours.
        STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(conf.tlsClientCa.c_str());
        if (names) SSL_CTX_set_client_CA_list(c, names);
        // Asked for, not required: resolvers query over DoT without one. A certificate that is sent must
        // verify (the handshake fails otherwise); transfers that need one check clientVerified().
        SSL_CTX_set_verify(c, SSL_VERIFY_PEER | SSL_VERIFY_CLIENT_ONCE, nullptr);
        SSL_CTX_set_verify_depth(c, 4);
        // Resumed sessions keep the peer's verified certificate: the session ID context must be set.
        static const unsigned char kSid[] = "gslbd-xot";
        SSL_CTX_set_session_id_context(c, kSid, sizeof kSid - 1);
    }
    ERR_clear_error();
    return ctx;
}

bool clientVerified(const SSL* ssl) {
    X509* peer = SSL_get0_peer_certificate(ssl);
    return peer && SSL_get_verify_result(ssl) == X509_V_OK;
}

}  // namespace gslb::server
