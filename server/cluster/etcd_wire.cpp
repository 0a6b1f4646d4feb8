// etcd's v3 JSON gateway shapes and gslbd's keys (contract in etcd_wire.hpp).
#include "server/cluster/etcd_wire.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

namespace gslb::server::cluster {

using nlohmann::json;

namespace {

constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr size_t kMaxItems = 1'000'000;

int b64Value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

// grpc-gateway writes int64 fields as decimal strings (proto3 JSON mapping); a number is accepted too.
// Absent: 0. Anything else (negative, fraction, text): refused.
bool int64Field(const json& o, const char* name, int64_t& out) {
    auto it = o.find(name);
    out = 0;
    if (it == o.end() || it->is_null()) return true;
    if (it->is_number_unsigned()) {
        uint64_t v = it->get<uint64_t>();
        if (v > uint64_t(INT64_MAX)) return false;
        out = int64_t(v);
        return true;
    }
    if (it->is_number_integer()) {
        out = it->get<int64_t>();
        return out >= 0;
    }
    if (!it->is_string()) return false;
    const std::string& s = it->get_ref<const std::string&>();
    if (s.empty() || s.size() > 19) return false;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size() && out >= 0;
}

// `tooLarge` null: a larger field refuses the answer; else it is set and the field left empty.
std::string bytesField(const json& o, const char* name, std::string& out, bool* tooLarge = nullptr) {
    out.clear();
    auto it = o.find(name);
    if (it == o.end() || it->is_null()) return "";
    if (!it->is_string()) return fmt::format("{} is not a base64 string", name);
    const std::string& s = it->get_ref<const std::string&>();
    if (s.size() > (kMaxEtcdValue + 2) / 3 * 4) {
        if (!tooLarge) return fmt::format("{} is larger than {} octets", name, kMaxEtcdValue);
        *tooLarge = true;
        return "";
    }
    if (!base64Decode(s, out)) return fmt::format("{} is not base64", name);
    if (out.size() > kMaxEtcdValue) {
        out.clear();
        if (!tooLarge) return fmt::format("{} is larger than {} octets", name, kMaxEtcdValue);
        *tooLarge = true;
    }
    return "";
}

std::string parseKv(const json& j, EtcdKv& kv) {
    if (!j.is_object()) return "a kv is not an object";
    if (auto e = bytesField(j, "key", kv.key); !e.empty()) return e;
    if (auto e = bytesField(j, "value", kv.value, &kv.tooLarge); !e.empty()) return e;
    if (!int64Field(j, "create_revision", kv.createRevision) ||
        !int64Field(j, "mod_revision", kv.modRevision) || !int64Field(j, "version", kv.version) ||
        !int64Field(j, "lease", kv.lease))
        return "a kv's revision, version or lease is not a non-negative int64";
    return "";
}

std::string parseKvs(const json& o, std::vector<EtcdKv>& out) {
    auto it = o.find("kvs");
    if (it == o.end() || it->is_null()) return "";
    if (!it->is_array()) return "kvs is not an array";
    if (it->size() > kMaxItems) return "more than 1000000 kvs";
    for (const auto& k : *it) {
        EtcdKv kv;
        if (auto e = parseKv(k, kv); !e.empty()) return e;
        out.push_back(std::move(kv));
    }
    return "";
}

std::string etcdError(const json& e, const json& whole) {
    std::string msg;
    if (e.is_string()) msg = e.get<std::string>();
    if (e.is_object())
        if (auto m = e.find("message"); m != e.end() && m->is_string()) msg = m->get<std::string>();
    if (auto m = whole.find("message"); msg.empty() && m != whole.end() && m->is_string())
        msg = m->get<std::string>();
    if (msg.size() > 300) msg.resize(300);
    return "etcd: " + (msg.empty() ? std::string("an error without a message") : msg);
}

std::string parseBody(const json& r, EtcdReply& out) {
    if (!r.is_object()) return "not a JSON object";
    if (auto h = r.find("header"); h != r.end()) {
        if (!h->is_object() || !int64Field(*h, "revision", out.revision))
            return "header.revision is not an int64";
    }
    if (auto e = parseKvs(r, out.kvs); !e.empty()) return e;
    if (auto s = r.find("succeeded"); s != r.end()) {
        if (!s->is_boolean()) return "succeeded is not a boolean";
        out.succeeded = s->get<bool>();
    }
    if (auto rs = r.find("responses"); rs != r.end()) {
        if (!rs->is_array() || rs->size() > kMaxItems) return "responses is not an array";
        for (const auto& one : *rs) {
            if (!one.is_object()) return "a txn response is not an object";
            if (auto rr = one.find("response_range"); rr != one.end()) {
                if (!rr->is_object()) return "response_range is not an object";
                if (auto e = parseKvs(*rr, out.kvs); !e.empty()) return e;
            }
        }
    }
    if (!int64Field(r, "ID", out.leaseId) || !int64Field(r, "TTL", out.ttl))
        return "ID or TTL is not an int64";
    if (!int64Field(r, "watch_id", out.watchId) || !int64Field(r, "compact_revision", out.compactRevision))
        return "watch_id or compact_revision is not an int64";
    for (const char* flag : {"created", "canceled"}) {
        auto f = r.find(flag);
        if (f == r.end()) continue;
        if (!f->is_boolean()) return fmt::format("{} is not a boolean", flag);
        (flag[1] == 'r' ? out.created : out.canceled) = f->get<bool>();
    }
    if (auto ev = r.find("events"); ev != r.end() && !ev->is_null()) {
        if (!ev->is_array() || ev->size() > kMaxItems) return "events is not an array";
        for (const auto& e : *ev) {
            if (!e.is_object()) return "an event is not an object";
            EtcdEvent event;
            if (auto t = e.find("type"); t != e.end()) {
                if (!t->is_string()) return "an event's type is not a string";
                const std::string& ts = t->get_ref<const std::string&>();
                if (ts != "PUT" && ts != "DELETE")
                    return fmt::format("an event of type \"{}\"", ts.substr(0, 40));
                event.deleted = ts == "DELETE";
            }
            auto kv = e.find("kv");
            if (kv == e.end()) return "an event without kv";
            if (auto err = parseKv(*kv, event.kv); !err.empty()) return err;
            out.events.push_back(std::move(event));
        }
    }
    return "";
}

// Where a path component ends: '/' (or the end).
std::vector<std::string_view> splitKey(std::string_view rest) {
    std::vector<std::string_view> parts;
    size_t start = 0;
    for (size_t i = 0; i <= rest.size() && parts.size() <= 8; ++i)
        if (i == rest.size() || rest[i] == '/') {
            parts.push_back(rest.substr(start, i - start));
            start = i + 1;
        }
    return parts;
}

// Takes exactly the keys of `allowed` from object `o` (each optional), refusing any other.
std::string onlyKeys(const json& o, std::initializer_list<const char*> allowed) {
    for (const auto& [k, v] : o.items()) {
        bool known = false;
        for (const char* a : allowed) known |= k == a;
        if (!known) return fmt::format("unknown field \"{}\"", k.substr(0, 40));
    }
    return "";
}

std::string stringField(const json& o, const char* name, std::string& out, bool required) {
    auto it = o.find(name);
    if (it == o.end()) return required ? fmt::format("no \"{}\"", name) : "";
    if (!it->is_string()) return fmt::format("\"{}\" is not a string", name);
    out = it->get<std::string>();
    if (out.size() > kMaxNameLength && std::string_view(name) != "body")
        return fmt::format("\"{}\" is longer than {} octets", name, kMaxNameLength);
    return "";
}

std::string msField(const json& o, const char* name, double& out) {
    auto it = o.find(name);
    out = -1;
    if (it == o.end() || it->is_null()) return "";
    if (!it->is_number()) return fmt::format("\"{}\" is not a number", name);
    double v = it->get<double>();
    if (!std::isfinite(v) || v < 0 || v > 3.6e6) return fmt::format("\"{}\" is not 0..3600000 ms", name);
    out = v;
    return "";
}

bool namePart(std::string_view raw, std::string& out) {
    return keyUnescape(raw, out) && !out.empty() && out.size() <= kMaxNameLength;
}

}  // namespace

std::string base64Encode(std::string_view in) {
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    size_t i = 0;
    for (; i + 2 < in.size(); i += 3) {
        uint32_t v = uint32_t(uint8_t(in[i])) << 16 | uint32_t(uint8_t(in[i + 1])) << 8 | uint8_t(in[i + 2]);
        for (int s = 18; s >= 0; s -= 6) out += kB64[(v >> s) & 63];
    }
    if (i + 1 == in.size()) {
        uint32_t v = uint32_t(uint8_t(in[i])) << 16;
        out += kB64[(v >> 18) & 63];
        out += kB64[(v >> 12) & 63];
        out += "==";
    } else if (i + 2 == in.size()) {
        uint32_t v = uint32_t(uint8_t(in[i])) << 16 | uint32_t(uint8_t(in[i + 1])) << 8;
        out += kB64[(v >> 18) & 63];
        out += kB64[(v >> 12) & 63];
        out += kB64[(v >> 6) & 63];
        out += '=';
    }
    return out;
}

bool base64Decode(std::string_view text, std::string& out) {
    out.clear();
    if (text.size() % 4 != 0) return false;
    out.reserve(text.size() / 4 * 3);
    for (size_t i = 0; i < text.size(); i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; ++k) {
            char c = text[i + size_t(k)];
            if (c == '=' && i + 4 == text.size() && k >= 2) {
                v[k] = 0;
                ++pad;
                continue;
            }
            if (pad) return false;  // data after padding
            v[k] = b64Value(c);
            if (v[k] < 0) return false;
        }
        uint32_t n = uint32_t(v[0]) << 18 | uint32_t(v[1]) << 12 | uint32_t(v[2]) << 6 | uint32_t(v[3]);
        out += char(n >> 16);
        if (pad < 2) out += char((n >> 8) & 0xff);
        if (pad < 1) out += char(n & 0xff);
        // Canonical only: the bits padding drops must be zero.
        if ((pad == 1 && (n & 0xff)) || (pad == 2 && (n & 0xffff))) return false;
    }
    return true;
}

std::string prefixEnd(std::string_view prefix) {
    std::string end(prefix);
    while (!end.empty()) {
        if (uint8_t(end.back()) < 0xff) {
            end.back() = char(uint8_t(end.back()) + 1);
            return end;
        }
        end.pop_back();
    }
    return std::string(1, '\0');
}

std::string parseEtcdReply(std::string_view body, EtcdReply& out) {
    if (body.size() > kMaxEtcdBody) return fmt::format("an answer larger than {} octets", kMaxEtcdBody);
    json j = json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return "not a JSON object";
    if (auto e = j.find("error"); e != j.end()) return etcdError(*e, j);
    EtcdReply r;
    const json* inner = &j;
    if (auto res = j.find("result"); res != j.end()) inner = &*res;
    if (auto e = parseBody(*inner, r); !e.empty()) return e;
    out = std::move(r);
    return "";
}

std::string splitWatchMessages(std::string& buf, std::vector<std::string>& out) {
    // One object per message; the gateway writes no newline inside one (JSON strings escape theirs), so a
    // newline at depth 0 ends a message. Counting braces outside strings finds the end without that too.
    size_t pos = 0;
    while (true) {
        while (pos < buf.size() &&
               (buf[pos] == '\n' || buf[pos] == '\r' || buf[pos] == ' ' || buf[pos] == '\t'))
            ++pos;
        if (pos == buf.size()) break;
        if (buf[pos] != '{') return "a watch message does not start with '{'";
        int depth = 0;
        bool inString = false, escaped = false;
        size_t end = std::string::npos;
        for (size_t i = pos; i < buf.size(); ++i) {
            char c = buf[i];
            if (inString) {
                if (escaped)
                    escaped = false;
                else if (c == '\\')
                    escaped = true;
                else if (c == '"')
                    inString = false;
                continue;
            }
            if (c == '"')
                inString = true;
            else if (c == '{' || c == '[')
                ++depth;
            else if (c == '}' || c == ']') {
                if (--depth == 0) {
                    end = i + 1;
                    break;
                }
            }
        }
        if (end == std::string::npos) {
            if (buf.size() - pos > kMaxEtcdBody) return "a watch message larger than the limit";
            break;
        }
        out.emplace_back(buf, pos, end - pos);
        pos = end;
    }
    buf.erase(0, pos);
    return "";
}

std::string keyEscape(std::string_view part) {
    std::string out;
    for (unsigned char c : part) {
        if (c == '/' || c == '%' || c < 0x21 || c > 0x7e)
            out += fmt::format("%{:02X}", c);
        else
            out += char(c);
    }
    return out;
}

bool keyUnescape(std::string_view part, std::string& out) {
    out.clear();
    for (size_t i = 0; i < part.size(); ++i) {
        unsigned char c = uint8_t(part[i]);
        if (c == '%') {
            if (i + 2 >= part.size()) return false;
            auto hex = [](char h) {
                return h >= '0' && h <= '9' ? h - '0' : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
            };
            int hi = hex(part[i + 1]), lo = hex(part[i + 2]);
            if (hi < 0 || lo < 0) return false;
            const int d = hi * 16 + lo;
            // Only what keyEscape escapes: one name has one key.
            if (d != '/' && d != '%' && d >= 0x21 && d <= 0x7e) return false;
            out += char(d);
            i += 2;
        } else if (c < 0x21 || c > 0x7e) {
            return false;
        } else {
            out += char(c);
        }
    }
    return true;
}

namespace {

// A drain or enable: admin/site/SITE or admin/service/SITE/ADDRESS, {"enabled": bool, "origin": member}.
std::string decodeAdmin(const std::vector<std::string_view>& parts, const json& v, bool deleted,
                        SharedItem& out) {
    SharedAdmin a;
    bool site = parts.size() == 3 && parts[1] == "site", service = parts.size() == 4 && parts[1] == "service";
    if (!site && !service) return "admin/ takes site/SITE or service/SITE/ADDRESS";
    if (!namePart(parts[2], a.site) || (service && !namePart(parts[3], a.address)))
        return "a bad site or address in the key";
    if (!deleted) {
        if (!v.is_object()) return "the value is not an object";
        if (auto e = onlyKeys(v, {"enabled", "origin"}); !e.empty()) return e;
        auto en = v.find("enabled");
        if (en == v.end() || !en->is_boolean()) return "\"enabled\" is not a boolean";
        a.enabled = en->get<bool>();
        if (auto e = stringField(v, "origin", a.origin, true); !e.empty()) return e;
    }
    out = std::move(a);
    return "";
}

// A site's report: report/SITE, {"origin": member, "body": the report's JSON}.
std::string decodeReport(const std::vector<std::string_view>& parts, const json& v, bool deleted,
                         SharedItem& out) {
    SharedReport r;
    if (parts.size() != 2 || !namePart(parts[1], r.site)) return "report/ takes SITE";
    if (!deleted) {
        if (!v.is_object()) return "the value is not an object";
        if (auto e = onlyKeys(v, {"origin", "body"}); !e.empty()) return e;
        if (auto e = stringField(v, "origin", r.origin, true); !e.empty()) return e;
        auto b = v.find("body");
        if (b == v.end() || !b->is_object()) return "\"body\" is not an object";
        r.body = b->dump();
    }
    out = std::move(r);
    return "";
}

// A member's health verdict: verdict/SITE/ADDRESS/MEMBER, {"health": up | down, "l4_ms", "l7_ms"}.
std::string decodeVerdict(const std::vector<std::string_view>& parts, const json& v, bool deleted,
                          SharedItem& out) {
    SharedVerdict sv;
    if (parts.size() != 4 || !namePart(parts[1], sv.site) || !namePart(parts[2], sv.address) ||
        !namePart(parts[3], sv.member))
        return "verdict/ takes SITE/ADDRESS/MEMBER";
    if (!deleted) {
        if (!v.is_object()) return "the value is not an object";
        if (auto e = onlyKeys(v, {"health", "l4_ms", "l7_ms"}); !e.empty()) return e;
        std::string h;
        if (auto e = stringField(v, "health", h, true); !e.empty()) return e;
        if (h != "up" && h != "down") return "\"health\" is neither up nor down";
        sv.up = h == "up";
        if (auto e = msField(v, "l4_ms", sv.l4Ms); !e.empty()) return e;
        if (auto e = msField(v, "l7_ms", sv.l7Ms); !e.empty()) return e;
    }
    out = std::move(sv);
    return "";
}

// A probe owner slot: owner/SITE/ADDRESS/N, the member's name as a string.
std::string decodeOwner(const std::vector<std::string_view>& parts, const json& v, bool deleted,
                        SharedItem& out) {
    SharedOwner o;
    if (parts.size() != 4 || !namePart(parts[1], o.site) || !namePart(parts[2], o.address))
        return "owner/ takes SITE/ADDRESS/N";
    int n = -1;
    auto [end, ec] = std::from_chars(parts[3].data(), parts[3].data() + parts[3].size(), n);
    if (ec != std::errc() || end != parts[3].data() + parts[3].size() || n < 0 || n >= kMaxOwnerSlots ||
        (parts[3].size() > 1 && parts[3][0] == '0'))
        return fmt::format("owner slot is not 0..{}", kMaxOwnerSlots - 1);
    o.slot = n;
    if (!deleted) {
        if (!v.is_string()) return "the value is not a string";
        o.member = v.get<std::string>();
        if (o.member.empty() || o.member.size() > kMaxNameLength) return "a bad member name";
    }
    out = std::move(o);
    return "";
}

// A member's own state: member/MEMBER, {"config_digest", "etcd", "serials", "drained", "health"}.
std::string decodeMember(const std::vector<std::string_view>& parts, const json& v, bool deleted,
                         SharedItem& out) {
    SharedMember m;
    if (parts.size() != 2 || !namePart(parts[1], m.member)) return "member/ takes MEMBER";
    if (!deleted) {
        if (!v.is_object()) return "the value is not an object";
        if (auto e = onlyKeys(v, {"config_digest", "etcd", "serials", "drained", "health"}); !e.empty())
            return e;
        if (auto e = stringField(v, "config_digest", m.configDigest, true); !e.empty()) return e;
        if (auto e = stringField(v, "etcd", m.etcdState, false); !e.empty()) return e;
        if (auto s = v.find("serials"); s != v.end()) {
            if (!s->is_object()) return "\"serials\" is not an object";
            for (const auto& [zone, serial] : s->items()) {
                if (!serial.is_number_unsigned() || serial.get<uint64_t>() > UINT32_MAX)
                    return "a serial is not 0..4294967295";
                if (zone.size() > kMaxNameLength) return "a zone name too long";
                m.serials[zone] = uint32_t(serial.get<uint64_t>());
            }
        }
        if (auto d = v.find("drained"); d != v.end()) {
            if (!d->is_array()) return "\"drained\" is not an array";
            for (const auto& e : *d) {
                if (!e.is_string() || e.get_ref<const std::string&>().size() > 2 * kMaxNameLength + 16)
                    return "a bad \"drained\" entry";
                m.drained.push_back(e.get<std::string>());
            }
        }
        if (auto h = v.find("health"); h != v.end()) {
            if (!h->is_object()) return "\"health\" is not an object";
            for (const auto& [svc, st] : h->items()) {
                if (!st.is_string()) return "a health state is not a string";
                const std::string& s = st.get_ref<const std::string&>();
                if (s != "up" && s != "down" && s != "unknown")
                    return "a health state is not up/down/unknown";
                if (svc.size() > 2 * kMaxNameLength + 1) return "a service name too long";
                m.health[svc] = s;
            }
        }
    }
    out = std::move(m);
    return "";
}

}  // namespace

std::string decodeSharedKey(std::string_view prefix, std::string_view key, std::string_view value,
                            bool deleted, SharedItem& out) {
    if (key.size() < prefix.size() || key.substr(0, prefix.size()) != prefix) return "not under the prefix";
    if (value.size() > kMaxEtcdValue) return fmt::format("a value larger than {} octets", kMaxEtcdValue);
    auto parts = splitKey(key.substr(prefix.size()));
    if (parts.empty()) return "an empty key";
    const std::string_view kind = parts[0];
    json v;
    if (!deleted) {
        v = json::parse(value, nullptr, false);
        if (v.is_discarded()) return "the value is not JSON";
    }
    if (kind == "admin") return decodeAdmin(parts, v, deleted, out);
    if (kind == "report") return decodeReport(parts, v, deleted, out);
    if (kind == "verdict") return decodeVerdict(parts, v, deleted, out);
    if (kind == "owner") return decodeOwner(parts, v, deleted, out);
    if (kind == "member") return decodeMember(parts, v, deleted, out);
    return fmt::format("an unknown kind \"{}\"", std::string(kind.substr(0, 40)));
}

std::string decodeSharedKv(std::string_view prefix, const EtcdKv& kv, bool deleted, SharedItem& out) {
    if (kv.tooLarge && !deleted) return fmt::format("a value larger than {} octets", kMaxEtcdValue);
    return decodeSharedKey(prefix, kv.key, kv.value, deleted, out);
}

std::string sharedKey(std::string_view prefix, const SharedItem& item) {
    std::string k(prefix);
    std::visit(
        [&](const auto& it) {
            using T = std::decay_t<decltype(it)>;
            if constexpr (std::is_same_v<T, SharedAdmin>) {
                k += it.address.empty() ? "admin/site/" + keyEscape(it.site)
                                        : "admin/service/" + keyEscape(it.site) + "/" + keyEscape(it.address);
            } else if constexpr (std::is_same_v<T, SharedReport>) {
                k += "report/" + keyEscape(it.site);
            } else if constexpr (std::is_same_v<T, SharedVerdict>) {
                k += "verdict/" + keyEscape(it.site) + "/" + keyEscape(it.address) + "/" +
                     keyEscape(it.member);
            } else if constexpr (std::is_same_v<T, SharedOwner>) {
                k += fmt::format("owner/{}/{}/{}", keyEscape(it.site), keyEscape(it.address), it.slot);
            } else {
                k += "member/" + keyEscape(it.member);
            }
        },
        item);
    return k;
}

std::string sharedValue(const SharedItem& item) {
    return std::visit(
        [](const auto& it) -> std::string {
            using T = std::decay_t<decltype(it)>;
            if constexpr (std::is_same_v<T, SharedAdmin>) {
                return json{{"enabled", it.enabled}, {"origin", it.origin}}.dump();
            } else if constexpr (std::is_same_v<T, SharedReport>) {
                json body = json::parse(it.body, nullptr, false);
                if (body.is_discarded()) body = json::object();
                return json{{"origin", it.origin}, {"body", body}}.dump();
            } else if constexpr (std::is_same_v<T, SharedVerdict>) {
                json j{{"health", it.up ? "up" : "down"}};
                if (it.l4Ms >= 0) j["l4_ms"] = it.l4Ms;
                if (it.l7Ms >= 0) j["l7_ms"] = it.l7Ms;
                return j.dump();
            } else if constexpr (std::is_same_v<T, SharedOwner>) {
                return json(it.member).dump();
            } else {
                json j{{"config_digest", it.configDigest}, {"etcd", it.etcdState}};
                j["serials"] = json::object();
                for (const auto& [z, s] : it.serials) j["serials"][z] = s;
                j["drained"] = it.drained;
                j["health"] = json::object();
                for (const auto& [svc, h] : it.health) j["health"][svc] = h;
                return j.dump();
            }
        },
        item);
}

void forgetReleasedOwner(std::map<std::string, SharedItem>& cache, const std::string& key,
                         std::string_view self) {
    auto it = cache.find(key);
    if (it == cache.end()) return;
    if (const auto* o = std::get_if<SharedOwner>(&it->second); o && o->member == self) cache.erase(it);
}

}  // namespace gslb::server::cluster
