// [key.NAME] and axfr_allow with keys (config.cpp), and who may transfer (server/responder/acl.cpp).
#include <arpa/inet.h>
#include <doctest/doctest.h>

#include "server/conf/config.hpp"
#include "server/responder/acl.hpp"
#include "tests/server/helpers.hpp"

using namespace gslb::server;

namespace {

std::string zoneWith(const std::string& extra) {
    return "[[zone]]\nname = \"t.test.\"\nfile = \"t.zone\"\n" + extra;
}

// Loads `text` with an xfr.key beside it; false and `error` as loadConfig.
bool load(const std::string& text, Config& cfg, std::string& error,
          const std::string& secret = "c2VjcmV0\n") {
    st::Written w = st::writeConfig(text);
    st::writeFile(w.dir, "xfr.key", secret);
    return loadConfig(w.config, cfg, error);
}

sockaddr_in v4(const char* a) {
    sockaddr_in s{};
    s.sin_family = AF_INET;
    inet_pton(AF_INET, a, &s.sin_addr);
    return s;
}

}  // namespace

TEST_CASE("[key.NAME]: algorithm, a secret file in any of its forms, names as domain names") {
    Config cfg;
    std::string err;
    std::string text =
        "[server]\naxfr_allow = [\"10.0.0.0/8\", { address = \"192.0.2.53\", key = \"xfr\" }]\n"
        "[key.xfr]\nsecret_file = \"xfr.key\"\n" +
        zoneWith(
            "notify = [\"192.0.2.53\", { address = \"192.0.2.54:5300\", key = \"xfr\" }]\n"
            "axfr_allow = []\n");
    REQUIRE_MESSAGE(
        load(text, cfg, err, "key \"xfr\" {\n\talgorithm hmac-sha256;\n\tsecret \"c2VjcmV0\";\n};\n"), err);
    REQUIRE(cfg.keys.size() == 1);
    CHECK(cfg.keys[0].label == "xfr");
    CHECK(cfg.keys[0].name == std::string("\3xfr\0", 5));
    CHECK(cfg.keys[0].algorithm == gslb::zones::TsigAlgorithm::HmacSha256);  // the default
    CHECK(std::string(cfg.keys[0].secret.begin(), cfg.keys[0].secret.end()) == "secret");
    REQUIRE(cfg.server.axfrAllow.size() == 2);
    CHECK(cfg.server.axfrAllow[0].key == -1);
    CHECK(cfg.server.axfrAllow[1].key == 0);
    REQUIRE(cfg.zones[0].notify.size() == 2);
    CHECK(cfg.zones[0].notify[0].addr.text == "192.0.2.53:53");
    CHECK(cfg.zones[0].notify[0].key == -1);
    CHECK(cfg.zones[0].notify[1].key == 0);
    CHECK(cfg.zones[0].axfrAllowSet);
    CHECK(cfg.zones[0].axfrAllow.empty());
}

TEST_CASE("[key.NAME] and key references: errors name the file, line and key") {
    Config cfg;
    std::string err;
    CHECK_FALSE(
        load("[key.xfr]\nalgorithm = \"hmac-sha3\"\nsecret_file = \"xfr.key\"\n" + zoneWith(""), cfg, err));
    CHECK(err.find(":2: [key.xfr] algorithm: \"hmac-sha3\" is not hmac-md5") != std::string::npos);
    CHECK_FALSE(load("[key.xfr]\n" + zoneWith(""), cfg, err));
    CHECK(err.find("[key.xfr] secret_file: is required") != std::string::npos);
    CHECK_FALSE(load("[key.xfr]\nsecret_file = \"missing.key\"\n" + zoneWith(""), cfg, err));
    CHECK(err.find(":2: [key.xfr] secret_file: cannot read ") != std::string::npos);
    CHECK(err.find("missing.key: No such file or directory") != std::string::npos);
    // A secret file is read whole or not at all: over 64 KiB is no key file (zones::kSecretMax).
    CHECK_FALSE(load("[key.xfr]\nsecret_file = \"xfr.key\"\n" + zoneWith(""), cfg, err,
                     "c2VjcmV0\n" + std::string(70000, '#')));
    CHECK(err.find(":2: [key.xfr] secret_file: cannot read ") != std::string::npos);
    CHECK(err.find("xfr.key: File too large") != std::string::npos);
    CHECK_FALSE(load("[key.xfr]\nsecret_file = \"xfr.key\"\n" + zoneWith(""), cfg, err, "not base64!\n"));
    CHECK(err.find("the secret is not base64") != std::string::npos);
    CHECK_FALSE(load("[key.xfr]\nsecret_file = \"xfr.key\"\nalgoritm = \"x\"\n" + zoneWith(""), cfg, err));
    CHECK(err.find("[key.xfr]: unknown key \"algoritm\"") != std::string::npos);
    // min_mac_size (RFC 8945 §5.2.4): the full hash by default; max(10, half the hash) .. the hash.
    REQUIRE(load("[key.xfr]\nsecret_file = \"xfr.key\"\n" + zoneWith(""), cfg, err));
    CHECK(cfg.keys[0].minMacSize == 32);
    REQUIRE(load("[key.xfr]\nsecret_file = \"xfr.key\"\nmin_mac_size = 16\n" + zoneWith(""), cfg, err));
    CHECK(cfg.keys[0].minMacSize == 16);
    CHECK_FALSE(load("[key.xfr]\nsecret_file = \"xfr.key\"\nmin_mac_size = 15\n" + zoneWith(""), cfg, err));
    CHECK(err.find(":3: [key.xfr] min_mac_size") != std::string::npos);
    CHECK_FALSE(load(
        "[key.xfr]\nalgorithm = \"hmac-md5\"\nsecret_file = \"xfr.key\"\nmin_mac_size = 17\n" + zoneWith(""),
        cfg, err));
    CHECK(err.find("[key.xfr] min_mac_size") != std::string::npos);
    CHECK_FALSE(load("[server]\naxfr_allow = [{ address = \"127.0.0.1\", key = \"nope\" }]\n" + zoneWith(""),
                     cfg, err));
    CHECK(err.find(":2: [server] axfr_allow key: no [key.nope] is configured") != std::string::npos);
    CHECK_FALSE(load(zoneWith("notify = [{ address = \"127.0.0.1\", key = \"nope\" }]\n"), cfg, err));
    CHECK(err.find("zone 1 notify key: no [key.nope] is configured") != std::string::npos);
    CHECK_FALSE(load(zoneWith("axfr_allow = [{ key = \"xfr\" }]\n"), cfg, err));
    CHECK(err.find("zone 1 axfr_allow address: is required") != std::string::npos);
    CHECK_FALSE(load(zoneWith("axfr_allow = [{ address = \"300.0.0.1\" }]\n"), cfg, err));
    CHECK(err.find("\"300.0.0.1\" is not an address or prefix") != std::string::npos);
    CHECK_FALSE(load(
        "[key.xfr]\nsecret_file = \"xfr.key\"\n[key.\"XFR.\"]\nsecret_file = \"xfr.key\"\n" + zoneWith(""),
        cfg, err));
    CHECK(err.find("is configured twice") != std::string::npos);
}

TEST_CASE("axfr_allow: the zone's list replaces [server]'s; an entry with a key admits only that key") {
    Config cfg;
    std::string err;
    std::string text =
        "[server]\naxfr_allow = [\"127.0.0.0/8\"]\n"
        "[key.xfr]\nsecret_file = \"xfr.key\"\n[key.b]\nsecret_file = \"xfr.key\"\n" +
        zoneWith("axfr_allow = [{ address = \"192.0.2.0/24\", key = \"xfr\" }, \"198.51.100.7\"]\n") +
        "[[zone]]\nname = \"u.test.\"\nfile = \"t.zone\"\n";
    REQUIRE_MESSAGE(load(text, cfg, err), err);
    const auto& zoneAcl = xfr::axfrAcl(cfg, "T.TEST.");
    const auto& serverAcl = xfr::axfrAcl(cfg, "u.test.");
    CHECK(&serverAcl == &cfg.server.axfrAllow);
    auto lo = v4("127.0.0.1"), in = v4("192.0.2.9"), plain = v4("198.51.100.7"), out = v4("203.0.113.1");
    auto sa = [](const sockaddr_in& s) { return reinterpret_cast<const sockaddr*>(&s); };
    REQUIRE(cfg.keys.size() == 2);
    const auto* xfrKey = cfg.keys[0].label == "xfr" ? &cfg.keys[0] : &cfg.keys[1];
    const auto* bKey = xfrKey == &cfg.keys[0] ? &cfg.keys[1] : &cfg.keys[0];
    CHECK(xfr::axfrRefusal(cfg, serverAcl, sa(lo), nullptr).empty());
    CHECK(xfr::axfrRefusal(cfg, zoneAcl, sa(lo), nullptr) == "the source is not in axfr_allow");
    CHECK(xfr::axfrRefusal(cfg, zoneAcl, sa(in), nullptr) == "unsigned; axfr_allow requires TSIG key xfr");
    CHECK(xfr::axfrRefusal(cfg, zoneAcl, sa(in), bKey) == "signed with key b; axfr_allow requires key xfr");
    CHECK(xfr::axfrRefusal(cfg, zoneAcl, sa(in), xfrKey).empty());
    CHECK(xfr::axfrRefusal(cfg, zoneAcl, sa(plain), nullptr).empty());
    CHECK(xfr::axfrRefusal(cfg, zoneAcl, sa(plain), bKey).empty());  // no key needed: any signature will do
    CHECK(xfr::axfrRefusal(cfg, zoneAcl, sa(out), xfrKey) == "the source is not in axfr_allow");
}

TEST_CASE("axfr_allow `tls` and `client_cert` (XoT, RFC 9103): the transport is part of the entry") {
    Config cfg;
    std::string err;
    std::string tls = "tls_listen = [\"127.0.0.1:8853\"]\ntls_certificate = \"c.pem\"\ntls_key = \"k.pem\"\n";
    std::string text = "[server]\n" + tls + "tls_client_ca = \"ca.pem\"\n" +
                       "axfr_allow = [{ address = \"192.0.2.0/24\", tls = true }, "
                       "{ address = \"192.0.2.0/24\", key = \"xfr\" }, "
                       "{ address = \"198.51.100.0/24\", key = \"xfr\", client_cert = true }]\n"
                       "[key.xfr]\nsecret_file = \"xfr.key\"\n" +
                       zoneWith("");
    REQUIRE_MESSAGE(load(text, cfg, err), err);
    const auto& acl = cfg.server.axfrAllow;
    REQUIRE(acl.size() == 3);
    CHECK((acl[0].tls && !acl[0].clientCert));
    CHECK((acl[2].tls && acl[2].clientCert));  // client_cert implies tls
    const auto* key = &cfg.keys[0];
    auto a = v4("192.0.2.9"), b = v4("198.51.100.9");
    auto sa = [](const sockaddr_in& s) { return reinterpret_cast<const sockaddr*>(&s); };
    xfr::XfrTransport tcp{}, overTls{true, false}, mutual{true, true};
    CHECK(xfr::axfrRefusal(cfg, acl, sa(a), nullptr, overTls).empty());
    CHECK(xfr::axfrRefusal(cfg, acl, sa(a), key, tcp).empty());  // the second entry: signed, any transport
    CHECK(xfr::axfrRefusal(cfg, acl, sa(a), nullptr, tcp) ==
          "unsigned; axfr_allow requires TSIG key xfr, or TLS (XoT, RFC 9103)");
    CHECK(xfr::axfrRefusal(cfg, acl, sa(b), key, mutual).empty());
    CHECK(xfr::axfrRefusal(cfg, acl, sa(b), key, overTls) ==
          "axfr_allow requires a client certificate that verifies against tls_client_ca; the client showed "
          "none");
    CHECK(xfr::axfrRefusal(cfg, acl, sa(b), key, tcp) ==
          "axfr_allow requires TLS (XoT, RFC 9103) from this source; the request came over TCP");
    CHECK(xfr::axfrRefusal(cfg, acl, sa(b), nullptr, mutual) == "unsigned; axfr_allow requires TSIG key xfr");
    // TLS 1.2 is not XoT (RFC 9103 §5.1): the worker passes tls = false for it, so it counts as TCP, and even
    // a verified client certificate over it admits nothing; the refusal says which version came.
    xfr::XfrTransport tls12{false, false, true};
    CHECK(xfr::axfrRefusal(cfg, acl, sa(b), key, tls12) ==
          "axfr_allow requires TLS (XoT, RFC 9103) from this source, which is TLS 1.3 or later (RFC 9103 "
          "§5.1); "
          "the request came over TLS 1.2");
    CHECK(xfr::axfrRefusal(cfg, acl, sa(a), key, tls12).empty());  // the second entry: signed, any transport
    CHECK(xfr::axfrRefusal(cfg, acl, sa(a), nullptr, tls12) ==
          "unsigned; axfr_allow requires TSIG key xfr, or TLS (XoT, RFC 9103)");

    SUBCASE("errors: tls without tls_listen, client_cert without tls_client_ca, tls_listen without files") {
        CHECK_FALSE(load("[server]\naxfr_allow = [{ address = \"192.0.2.1\", tls = true }]\n" + zoneWith(""),
                         cfg, err));
        CHECK(err.find("tls: needs [server] tls_listen") != std::string::npos);
        CHECK_FALSE(load("[server]\n" + tls +
                             "axfr_allow = [{ address = \"192.0.2.1\", client_cert = true }]\n" +
                             zoneWith(""),
                         cfg, err));
        CHECK(err.find("client_cert: needs [server] tls_client_ca") != std::string::npos);
        CHECK_FALSE(load("[server]\ntls_listen = [\"127.0.0.1:8853\"]\n" + zoneWith(""), cfg, err));
        CHECK(err.find("tls_listen: needs `tls_certificate` and `tls_key`") != std::string::npos);
        CHECK_FALSE(load("[server]\nlisten = [\"127.0.0.1:8853\"]\n" + tls + zoneWith(""), cfg, err));
        CHECK(err.find("is also in `listen`") != std::string::npos);
        CHECK_FALSE(
            load("[server]\n" + tls + zoneWith("axfr_allow = [{ address = \"192.0.2.1\", tls = 1 }]\n"), cfg,
                 err));
    }
}
