// The server side of DNS over TLS (RFC 7858) and zone transfer over TLS (RFC 9103): the OpenSSL context
// built from [server] tls_certificate, tls_key and tls_client_ca. Each snapshot (server/state/snapshot.hpp)
// builds one, so a SIGHUP reads the files again: new connections are accepted with the new context,
// connections in flight keep the one they were accepted with (an SSL holds a reference to its SSL_CTX), and
// files that do not load fail the reload like any other error, the old snapshot (and context) serving on.
#pragma once
#include <openssl/ssl.h>

#include <memory>
#include <string>

namespace gslb::server {

struct ServerConf;

struct SslCtxFree {
    void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
using SslCtxPtr = std::unique_ptr<SSL_CTX, SslCtxFree>;

/// Builds the server context of `conf`: TLS 1.3 and 1.2 only (RFC 9103 §5.1 requires 1.3 for XoT, which the
/// transfer admission checks; RFC 7858 §3.2 / RFC 8310 allow 1.2 for DoT), TLS 1.2 with ECDHE AEAD suites
/// only (RFC 9325 §4.2), the certificate chain of conf.tlsCertificate (PEM, leaf first) and the private key
/// of conf.tlsKey (PEM), which must match; ALPN "dot" (RFC 9103 §7.1, RFC 7858 §3.2): a client that offers
/// ALPN without "dot" is refused with no_application_protocol (RFC 7301 §3.2), one that offers none is
/// served. With conf.tlsClientCa (PEM CA certificates), a client certificate is asked for and, when one is
/// sent, its chain must verify against them (the handshake fails otherwise); a client that sends none still
/// gets DNS over TLS, and clientVerified() says false (axfr_allow entries with client_cert refuse it). No
/// renegotiation, no compression, no server-side session cache (stateless tickets only), OpenSSL's read
/// buffers released while a connection is idle. Null and `error` ("tls_certificate /etc/x.pem: …") when a
/// file cannot be read or parsed or the key does not match.
SslCtxPtr makeServerContext(const ServerConf& conf, std::string& error);

/// The peer sent a certificate and its chain verified against tls_client_ca (after the handshake).
bool clientVerified(const SSL* ssl);

}  // namespace gslb::server
