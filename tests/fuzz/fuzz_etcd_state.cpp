// What a member reads from etcd (server/cluster/etcd_wire.hpp): the gateway's bytes as a watch stream
// (splitWatchMessages, cut at every point the input says), each message parsed (parseEtcdReply), and each
// key-value decoded as gslbd's shared state under the prefix "/gslbd/" (decodeSharedKey). Invariants: nothing
// throws; a refused reply leaves its output as it was; a refused item is not assigned; every accepted item is
// under the prefix, and its own key and value (sharedKey, sharedValue) decode back to the same key and value
// (one name, one key; no field lost or invented).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.hpp"
#include "server/cluster/etcd_wire.hpp"

using namespace gslb::server::cluster;

namespace {

void checkItem(const EtcdKv& kv, bool deleted) {
    static const std::string prefix = "/gslbd/";
    const std::string& key = kv.key;
    SharedItem item = SharedOwner{"sentinel", "", "", 0};
    std::string why = decodeSharedKv(prefix, kv, deleted, item);
    FUZZ_CHECK(!kv.tooLarge || deleted || !why.empty(), "a huge value accepted");
    if (!why.empty()) {
        FUZZ_CHECK(
            std::holds_alternative<SharedOwner>(item) && std::get<SharedOwner>(item).site == "sentinel", why);
        return;
    }
    FUZZ_CHECK(key.rfind(prefix, 0) == 0, "an item from outside the prefix");
    const std::string k = sharedKey(prefix, item);
    FUZZ_CHECK(k == key, "the key does not round-trip: " + k);
    if (deleted) return;
    const std::string v = sharedValue(item);
    SharedItem again;
    FUZZ_CHECK(decodeSharedKey(prefix, k, v, false, again) == "", "its own value is refused: " + v);
    FUZZ_CHECK(sharedValue(again) == v, "the value does not round-trip: " + v);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > 1 << 20) return 0;
    std::string_view in(reinterpret_cast<const char*>(data), size);
    // The first byte says where the stream is cut into chunks (1..256 octets each), as TCP may cut it.
    size_t step = size ? size_t(uint8_t(in[0])) + 1 : 1;
    std::string buf;
    std::vector<std::string> msgs;
    for (size_t i = size ? 1 : 0; i < size; i += step) {
        buf.append(in.substr(i, step));
        if (!splitWatchMessages(buf, msgs).empty()) break;
    }
    // And the whole input as one unary answer.
    msgs.emplace_back(in.substr(size ? 1 : 0));
    for (const auto& m : msgs) {
        EtcdReply r;
        r.revision = -7;
        std::string why = parseEtcdReply(m, r);
        if (!why.empty()) {
            FUZZ_CHECK(r.revision == -7 && r.kvs.empty() && r.events.empty(), why);
            continue;
        }
        FUZZ_CHECK(r.revision >= 0 && r.ttl >= 0 && r.leaseId >= 0, "a negative int64 field");
        for (const auto& kv : r.kvs) {
            FUZZ_CHECK(kv.value.size() <= kMaxEtcdValue, "a huge value kept");
            checkItem(kv, false);
        }
        for (const auto& e : r.events) checkItem(e.kv, e.deleted);
    }
    return 0;
}
