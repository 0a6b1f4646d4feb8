// server/cluster/etcd_wire: etcd 3.4's JSON gateway shapes (base64, int64 as strings, a watch stream cut
// anywhere) and gslbd's keys under the prefix, with worked examples taken from a real etcd 3.4.23 gateway
// (the answers below are its bytes), and what is refused: wrong types, huge values, unknown keys and fields,
// a foreign prefix.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "server/cluster/etcd_wire.hpp"

using namespace gslb::server::cluster;

TEST_CASE("base64 as the gateway writes it (RFC 4648 §10 test vectors), canonical only") {
    const std::pair<std::string, std::string> vectors[] = {{"", ""},
                                                           {"f", "Zg=="},
                                                           {"fo", "Zm8="},
                                                           {"foo", "Zm9v"},
                                                           {"foob", "Zm9vYg=="},
                                                           {"fooba", "Zm9vYmE="},
                                                           {"foobar", "Zm9vYmFy"},
                                                           {"/gslbd/x", "L2dzbGJkL3g="}};
    for (const auto& [plain, enc] : vectors) {
        CHECK(base64Encode(plain) == enc);
        std::string out;
        REQUIRE(base64Decode(enc, out));
        CHECK(out == plain);
    }
    std::string out;
    CHECK_FALSE(base64Decode("Zg=", out));       // not a multiple of 4
    CHECK_FALSE(base64Decode("Zh==", out));      // bits after the data are not zero
    CHECK_FALSE(base64Decode("Z===", out));      // too much padding
    CHECK_FALSE(base64Decode("Zg==Zg==", out));  // data after padding
    CHECK_FALSE(base64Decode("Z g=", out));      // whitespace
    CHECK(base64Encode(std::string("\xff\x00\x80", 3)) == "/wCA");
}

TEST_CASE("prefixEnd: every key under the prefix, and only those") {
    CHECK(prefixEnd("/gslbd/") == "/gslbd0");
    CHECK(prefixEnd(std::string("a\xff", 2)) == "b");
    CHECK(prefixEnd(std::string("\xff\xff", 2)) == std::string(1, '\0'));
}

TEST_CASE("parseEtcdReply: range, txn, lease and errors as etcd 3.4.23's gateway answers") {
    EtcdReply r;
    REQUIRE(
        parseEtcdReply(
            R"({"header":{"cluster_id":"15118495548433857066","member_id":"13668033151171901709","revision":"3","raft_term":"2"},)"
            R"("kvs":[{"key":"L2dzbGJkL293bg==","create_revision":"3","mod_revision":"3","version":"1","value":"bWU=","lease":"4111120494335046666"},)"
            R"({"key":"L2dzbGJkL3g=","create_revision":"2","mod_revision":"2","version":"1","value":"eyJhIjoxfQ=="}],"count":"2"})",
            r) == "");
    CHECK(r.revision == 3);
    REQUIRE(r.kvs.size() == 2);
    CHECK(r.kvs[0].key == "/gslbd/own");
    CHECK(r.kvs[0].value == "me");
    CHECK(r.kvs[0].lease == 4111120494335046666);
    CHECK(r.kvs[1].value == R"({"a":1})");
    CHECK(r.kvs[1].lease == 0);

    EtcdReply t;
    REQUIRE(
        parseEtcdReply(
            R"({"header":{"revision":"3"},"succeeded":true,"responses":[{"response_put":{"header":{"revision":"3"}}}]})",
            t) == "");
    CHECK(t.succeeded);
    EtcdReply f;
    REQUIRE(
        parseEtcdReply(
            R"({"header":{"revision":"3"},"responses":[{"response_range":{"header":{"revision":"3"},"kvs":[{"key":"L2dzbGJkL293bg==","create_revision":"3","mod_revision":"3","version":"1","value":"bWU=","lease":"7"}],"count":"1"}}]})",
            f) == "");
    CHECK_FALSE(f.succeeded);
    REQUIRE(f.kvs.size() == 1);
    CHECK(f.kvs[0].lease == 7);

    EtcdReply l;
    REQUIRE(parseEtcdReply(R"({"header":{"revision":"2"},"ID":"4111120494335046663","TTL":"3"})", l) == "");
    CHECK(l.leaseId == 4111120494335046663);
    CHECK(l.ttl == 3);
    // A keepalive of a lease that is gone: a result without TTL.
    EtcdReply k;
    REQUIRE(parseEtcdReply(R"({"result":{"header":{"revision":"2"},"ID":"12345"}})", k) == "");
    CHECK(k.leaseId == 12345);
    CHECK(k.ttl == 0);

    EtcdReply e;
    e.revision = 99;
    CHECK(
        parseEtcdReply(
            R"({"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5})",
            e) == "etcd: etcdserver: requested lease not found");
    CHECK(e.revision == 99);  // left as it was
    CHECK(parseEtcdReply(R"({"header":{"revision":"-1"}})", e) == "header.revision is not an int64");
    CHECK(parseEtcdReply(R"({"header":{"revision":"99999999999999999999"}})", e) ==
          "header.revision is not an int64");
    CHECK(parseEtcdReply(R"({"kvs":[{"key":"not base64!"}]})", e) == "key is not base64");
    CHECK(parseEtcdReply(R"({"kvs":{}})", e) == "kvs is not an array");
    CHECK(parseEtcdReply("[1]", e) == "not a JSON object");
    CHECK(parseEtcdReply("", e) == "not a JSON object");
    // A huge value refuses that key, not the answer: the other keys are read.
    std::string huge = R"({"kvs":[{"key":"L2dzbGJkL3g=","value":")" + std::string(400000, 'A') +
                       R"("},{"key":"L2dzbGJkL3k=","value":"eA=="}]})";
    EtcdReply h;
    REQUIRE(parseEtcdReply(huge, h) == "");
    REQUIRE(h.kvs.size() == 2);
    CHECK(h.kvs[0].tooLarge);
    CHECK(h.kvs[0].value.empty());
    CHECK_FALSE(h.kvs[1].tooLarge);
    SharedItem item;
    CHECK(decodeSharedKv("/gslbd/", h.kvs[0], false, item) == "a value larger than 262144 octets");
    std::string hugeKey = R"({"kvs":[{"key":")" + std::string(400000, 'A') + R"("}]})";
    CHECK(parseEtcdReply(hugeKey, e) == "key is larger than 262144 octets");
}

TEST_CASE("a watch stream: messages split across chunks, created, events, deletes, compaction") {
    const std::string stream =
        R"({"result":{"header":{"revision":"2"},"created":true}})"
        "\n"
        R"({"result":{"header":{"revision":"5"},"events":[{"kv":{"key":"L2dzbGJkL3g=","create_revision":"2","mod_revision":"5","version":"2","value":"eyJhIjoyfQ=="}},{"type":"DELETE","kv":{"key":"L2dzbGJkL3k=","mod_revision":"5"}}]}})"
        "\n";
    // Fed one octet at a time: the same two messages.
    std::string buf;
    std::vector<std::string> msgs;
    for (char c : stream) {
        buf += c;
        REQUIRE(splitWatchMessages(buf, msgs) == "");
    }
    CHECK(buf.empty());
    REQUIRE(msgs.size() == 2);
    EtcdReply a, b;
    REQUIRE(parseEtcdReply(msgs[0], a) == "");
    CHECK(a.created);
    CHECK(a.events.empty());
    REQUIRE(parseEtcdReply(msgs[1], b) == "");
    REQUIRE(b.events.size() == 2);
    CHECK_FALSE(b.events[0].deleted);
    CHECK(b.events[0].kv.key == "/gslbd/x");
    CHECK(b.events[0].kv.value == R"({"a":2})");
    CHECK(b.events[0].kv.modRevision == 5);
    CHECK(b.events[1].deleted);
    CHECK(b.events[1].kv.key == "/gslbd/y");

    EtcdReply c;
    REQUIRE(parseEtcdReply(R"({"result":{"header":{"revision":"9"},"canceled":true,"compact_revision":"7"}})",
                           c) == "");
    CHECK(c.canceled);
    CHECK(c.compactRevision == 7);
    // Braces inside strings do not end a message.
    std::string s = R"({"result":{"x":"}{\"}"}})";
    msgs.clear();
    REQUIRE(splitWatchMessages(s, msgs) == "");
    CHECK(msgs.size() == 1);
    std::string bad = "xyz";
    CHECK(splitWatchMessages(bad, msgs) == "a watch message does not start with '{'");
    EtcdReply d;
    CHECK(parseEtcdReply(R"({"result":{"events":[{"type":"MOVE","kv":{}}]}})", d) ==
          "an event of type \"MOVE\"");
}

TEST_CASE("gslbd's keys: each kind round-trips; components with '/' or '%' are escaped") {
    const std::string p = "/gslbd/";
    const SharedItem items[] = {
        SharedAdmin{"east", "", false, "http://192.0.2.53:8053"},
        SharedAdmin{"east", "2001:db8::10", true, "http://192.0.2.54:8053"},
        SharedReport{"west", "http://192.0.2.53:8053", R"({"cpu":35})"},
        SharedVerdict{"east", "192.0.2.10", "http://192.0.2.53:8053", true, 1.5, -1},
        SharedOwner{"east", "192.0.2.10", "http://192.0.2.53:8053", 1},
        SharedMember{"http://192.0.2.53:8053",
                     "ab12",
                     "live",
                     {{"example.com.", 2026120101u}},
                     {"site east"},
                     {{"east/192.0.2.10", "up"}}},
    };
    for (const auto& item : items) {
        std::string k = sharedKey(p, item), v = sharedValue(item);
        INFO(k);
        SharedItem back;
        REQUIRE(decodeSharedKey(p, k, v, false, back) == "");
        CHECK(back.index() == item.index());
        CHECK(sharedKey(p, back) == k);
        CHECK(sharedValue(back) == v);
    }
    CHECK(sharedKey(p, SharedAdmin{"east", "", false, "x"}) == "/gslbd/admin/site/east");
    CHECK(sharedKey(p, SharedVerdict{"a/b", "192.0.2.1", "http://192.0.2.53:8053", true, -1, -1}) ==
          "/gslbd/verdict/a%2Fb/192.0.2.1/http:%2F%2F192.0.2.53:8053");
    CHECK(sharedKey(p, SharedOwner{"east", "192.0.2.10", "m", 0}) == "/gslbd/owner/east/192.0.2.10/0");
    SharedItem a;
    REQUIRE(decodeSharedKey(p, "/gslbd/admin/site/east",
                            R"({"enabled":false,"origin":"http://192.0.2.53:8053"})", false, a) == "");
    CHECK(std::get<SharedAdmin>(a).site == "east");
    CHECK_FALSE(std::get<SharedAdmin>(a).enabled);
    // A delete needs no value.
    REQUIRE(decodeSharedKey(p, "/gslbd/verdict/east/192.0.2.10/m", "", true, a) == "");
    CHECK(std::get<SharedVerdict>(a).member == "m");
}

TEST_CASE("a released owner key leaves the cache only while it is still this member's") {
    // The failing input, from a three-member run: member .4 released east's key 0 to .2, which ranks first;
    // .2's claim reached .4's watch before etcd's answer to .4's delete, and the delete's callback erased it.
    // .4 then saw the key free for good and probed east beside its owner.
    const std::string p = "/gslbd/", self = "http://127.0.0.4:8053", next = "http://127.0.0.2:8053";
    const std::string k = sharedKey(p, SharedOwner{"east", "192.0.2.10", self, 0});
    std::map<std::string, SharedItem> cache;
    cache[k] = SharedOwner{"east", "192.0.2.10", next, 0};
    cache[p + "owner/west/192.0.2.20/0"] = SharedOwner{"west", "192.0.2.20", self, 0};
    forgetReleasedOwner(cache, k, self);
    REQUIRE(cache.count(k) == 1);
    CHECK(std::get<SharedOwner>(cache.at(k)).member == next);
    // The watch had not delivered the claim yet: the key was still this member's and goes.
    cache[k] = SharedOwner{"east", "192.0.2.10", self, 0};
    forgetReleasedOwner(cache, k, self);
    CHECK(cache.count(k) == 0);
    // Already gone (the watch's delete came first): nothing else is touched.
    forgetReleasedOwner(cache, k, self);
    CHECK(cache.size() == 1);
    CHECK(std::get<SharedOwner>(cache.at(p + "owner/west/192.0.2.20/0")).member == self);
}

TEST_CASE("bad or hostile data from etcd: refused with the reason, never half-applied") {
    const std::string p = "/gslbd/";
    struct Case {
        std::string key, value, why;
    };
    const Case cases[] = {
        {"/other/admin/site/east", R"({"enabled":false,"origin":"x"})", "not under the prefix"},
        {"/gslbd/admin/site/east", R"({"enabled":"no","origin":"x"})", "\"enabled\" is not a boolean"},
        {"/gslbd/admin/site/east", R"({"enabled":false})", "no \"origin\""},
        {"/gslbd/admin/site/east", R"({"enabled":false,"origin":"x","extra":1})", "unknown field \"extra\""},
        {"/gslbd/admin/site/east", "not json", "the value is not JSON"},
        {"/gslbd/admin/site/east", "[]", "the value is not an object"},
        {"/gslbd/admin/site/east", std::string(300000, ' '), "a value larger than 262144 octets"},
        {"/gslbd/admin/planet/east", R"({"enabled":false,"origin":"x"})",
         "admin/ takes site/SITE or service/SITE/ADDRESS"},
        {"/gslbd/admin/site/", R"({"enabled":false,"origin":"x"})", "a bad site or address in the key"},
        {"/gslbd/admin/site/e%2", R"({"enabled":false,"origin":"x"})", "a bad site or address in the key"},
        {"/gslbd/admin/site/" + std::string(300, 'e'), R"({"enabled":false,"origin":"x"})",
         "a bad site or address in the key"},
        {"/gslbd/nonsense", "{}", "an unknown kind \"nonsense\""},
        {"/gslbd/", "{}", "an unknown kind \"\""},
        {"/gslbd/report/east", R"({"origin":"x","body":"cpu=3"})", "\"body\" is not an object"},
        {"/gslbd/report/east/more", R"({"origin":"x","body":{}})", "report/ takes SITE"},
        {"/gslbd/verdict/east/192.0.2.10/m", R"({"health":"maybe"})", "\"health\" is neither up nor down"},
        {"/gslbd/verdict/east/192.0.2.10/m", R"({"health":"up","l4_ms":-1})",
         "\"l4_ms\" is not 0..3600000 ms"},
        {"/gslbd/verdict/east/192.0.2.10/m", R"({"health":"up","l4_ms":1e400})", "the value is not JSON"},
        {"/gslbd/owner/east/192.0.2.10/64", R"("m")", "owner slot is not 0..63"},
        {"/gslbd/owner/east/192.0.2.10/01", R"("m")", "owner slot is not 0..63"},
        {"/gslbd/owner/east/192.0.2.10/0", R"(7)", "the value is not a string"},
        {"/gslbd/member/m", R"({"config_digest":"x","serials":{"z.":-1}})", "a serial is not 0..4294967295"},
        {"/gslbd/member/m", R"({"config_digest":"x","serials":{"z.":4294967296}})",
         "a serial is not 0..4294967295"},
        {"/gslbd/member/m", R"({"config_digest":"x","health":{"a/b":"sideways"}})",
         "a health state is not up/down/unknown"},
    };
    for (const auto& c : cases) {
        INFO(c.key, " = ", c.value.substr(0, 80));
        SharedItem out = SharedAdmin{"keep", "", true, "me"};
        CHECK(decodeSharedKey(p, c.key, c.value, false, out) == c.why);
        // Refused: `out` is what it was.
        REQUIRE(std::holds_alternative<SharedAdmin>(out));
        CHECK(std::get<SharedAdmin>(out).site == "keep");
    }
}
