#include "zones/dnssec_keys.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "zones/ldns.hpp"
#include "zones/read_file.hpp"

namespace gslb::zones {
namespace {

constexpr size_t kMaxKeyFile = 64 << 10;

std::string rrRdataWire(const ldns_rr* rr) {
    std::string out;
    for (size_t i = 0; i < ldns_rr_rd_count(rr); ++i) {
        const ldns_rdf* f = ldns_rr_rdf(rr, i);
        out.append(reinterpret_cast<const char*>(ldns_rdf_data(f)), ldns_rdf_size(f));
    }
    return out;
}

// YYYYMMDDHHMMSS (UTC) as BIND writes timing metadata; 0 when it is not that.
int64_t parseStamp(std::string_view s) {
    if (s.size() < 14) return 0;
    int v[6];
    const int width[6] = {4, 2, 2, 2, 2, 2};
    size_t p = 0;
    for (int i = 0; i < 6; ++i) {
        v[i] = 0;
        for (int k = 0; k < width[i]; ++k, ++p) {
            if (s[p] < '0' || s[p] > '9') return 0;
            v[i] = v[i] * 10 + (s[p] - '0');
        }
    }
    if (v[0] < 1970 || v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 || v[4] > 59 || v[5] > 60)
        return 0;
    struct tm t {};
    t.tm_year = v[0] - 1900;
    t.tm_mon = v[1] - 1;
    t.tm_mday = v[2];
    t.tm_hour = v[3];
    t.tm_min = v[4];
    t.tm_sec = v[5];
    return int64_t(timegm(&t));
}

std::string stampText(int64_t t) {
    return utcText(t, "%Y%m%d%H%M%S");
}

// Calls f(line) for each line of `text`, without its '\n'.
template <class F>
void forEachLine(std::string_view text, F&& f) {
    for (size_t p = 0; p < text.size();) {
        size_t e = text.find('\n', p);
        if (e == std::string_view::npos) e = text.size();
        if (!f(text.substr(p, e - p))) return;
        p = e + 1;
    }
}

// BIND's comment form: "20261202003000 (Wed Dec  2 00:30:00 2026)".
std::string stampComment(int64_t t) {
    return fmt::format("{} ({})", stampText(t), utcText(t, "%a %b %e %H:%M:%S %Y"));
}

// The timing fields in the order BIND writes them, with the member each one is.
struct TimingField {
    const char* name;
    int64_t KeyTiming::*member;
};
constexpr TimingField kTimingFields[] = {{"Created", &KeyTiming::created},
                                         {"Publish", &KeyTiming::publish},
                                         {"Activate", &KeyTiming::activate},
                                         {"Inactive", &KeyTiming::inactive},
                                         {"Delete", &KeyTiming::remove}};

// "Name:" at the start of `l` (after `skip`, the comment's "; " for .key lines) for one of the timing fields.
bool isTimingLine(std::string_view l, std::string_view skip) {
    if (l.substr(0, skip.size()) != skip) return false;
    l.remove_prefix(skip.size());
    for (const auto& f : kTimingFields) {
        std::string_view n = f.name;
        if (l.size() > n.size() && l.substr(0, n.size()) == n && l[n.size()] == ':') return true;
    }
    return false;
}

// Writes `text` to `path` whole: into path + ".tmp" (mode `mode`), fsync, rename. The temporary name ends in
// neither .key nor .private, so loadKeys never reads it half-written.
bool replaceFile(const std::string& path, const std::string& text, mode_t mode, std::string& error) {
    std::string tmp = path + ".tmp";
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd < 0) {
        error = fmt::format("{}: {}", tmp, std::strerror(errno));
        return false;
    }
    fchmod(fd, mode);
    bool ok = write(fd, text.data(), text.size()) == ssize_t(text.size());
    ok = fsync(fd) == 0 && ok;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
        error = fmt::format("{}: cannot write: {}", path, std::strerror(errno));
        unlink(tmp.c_str());
        return false;
    }
    return true;
}

std::string baseName(const DnssecKey& k) {
    std::string z = k.zone;
    std::transform(z.begin(), z.end(), z.begin(), [](char c) { return char(lowerByte(uint8_t(c))); });
    return fmt::format("K{}+{:03d}+{:05d}", z, k.algorithm, k.tag);
}

// ldns 1.8.3 (and its master) writes one NUL past its token buffer when a line ends inside parentheses
// and the token has just filled it (ldns_fget_token_l_st: the newline becomes a space with no room left
// for the terminator). The keyword buffer is 32 octets of heap, so a .private file such as "(" + 31
// letters + newline + more overwrote the next heap block's header: silently in a release build, as an
// AddressSanitizer CHECK failure ("deadly signal") thousands of inputs later in the fuzzer. BIND, ldns
// and keymgr write a parenthesis only as "Algorithm: 13 (ECDSAP256SHA256)" and never a quote, backslash
// or semicolon, so a .private text whose every line closes its parentheses, with none of those three
// (they change how ldns counts parentheses), keeps ldns off that path; anything else is refused.
bool ldnsCanReadPrivate(std::string_view text, std::string& error) {
    int depth = 0, line = 1;
    for (char c : text) {
        if (c == '"' || c == '\\' || c == ';') {
            error = fmt::format(".private line {}: '{}' is not part of the key file format", line, c);
            return false;
        }
        if (c == '(') ++depth;
        if (c == ')' && --depth < 0) break;
        if (c == '\n') {
            if (depth != 0) break;
            ++line;
        }
    }
    if (depth != 0) {
        error = fmt::format(".private line {}: parentheses do not pair on the line", line);
        return false;
    }
    return true;
}

struct EvpDeleter {
    void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};

}  // namespace

std::string utcText(int64_t t, const char* format) {
    time_t tt = time_t(t);
    struct tm g {};
    gmtime_r(&tt, &g);
    char b[64];
    size_t n = std::strftime(b, sizeof b, format, &g);
    return std::string(b, n);
}

bool DnssecKey::published(int64_t now) const {
    return (timing.publish == 0 || timing.publish <= now) && (timing.remove == 0 || now < timing.remove);
}

bool DnssecKey::active(int64_t now) const {
    return pkey && published(now) && (timing.activate == 0 || timing.activate <= now) &&
           (timing.inactive == 0 || now < timing.inactive);
}

std::string DnssecKey::role(const std::vector<DnssecKey>& all) const {
    if (!sep()) return "ZSK";
    for (const auto& o : all)
        if (!o.sep()) return "KSK";
    return "CSK";
}

uint16_t keyTag(std::string_view rd) {
    uint32_t ac = 0;
    for (size_t i = 0; i < rd.size(); ++i) ac += (i & 1) ? uint8_t(rd[i]) : uint32_t(uint8_t(rd[i])) << 8;
    ac += (ac >> 16) & 0xFFFF;
    return uint16_t(ac & 0xFFFF);
}

const char* algorithmName(uint8_t alg) {
    switch (alg) {
        case kAlgEcdsaP256Sha256:
            return "ECDSAP256SHA256";
        case kAlgEd25519:
            return "ED25519";
        default:
            return "";
    }
}

uint8_t algorithmFromText(std::string_view t) {
    std::string l(t);
    std::transform(l.begin(), l.end(), l.begin(), [](char c) { return char(lowerByte(uint8_t(c))); });
    if (l == "ecdsap256sha256" || l == "13") return kAlgEcdsaP256Sha256;
    if (l == "ed25519" || l == "15") return kAlgEd25519;
    return 0;
}

bool generateKey(const std::string& zone, uint8_t algorithm, uint16_t flags, int64_t now, DnssecKey& out,
                 std::string& error) {
    ldns_signing_algorithm a;
    if (algorithm == kAlgEcdsaP256Sha256)
        a = LDNS_SIGN_ECDSAP256SHA256;
    else if (algorithm == kAlgEd25519)
        a = LDNS_SIGN_ED25519;
    else {
        error = fmt::format("algorithm {} is not supported (ECDSAP256SHA256 or ED25519)", int(algorithm));
        return false;
    }
    ldns_key* k = ldns_key_new_frm_algorithm(a, 256);
    if (!k) {
        error = "ldns could not make the key";
        return false;
    }
    ldns_rdf* owner = nullptr;
    if (ldns_str2rdf_dname(&owner, zone.c_str()) != LDNS_STATUS_OK) {
        ldns_key_deep_free(k);
        error = fmt::format("{}: not a domain name", zone);
        return false;
    }
    ldns_key_set_flags(k, flags);
    ldns_key_set_pubkey_owner(k, owner);  // the key takes it
    ldns_rr* rr = ldns_key2rr(k);
    char* priv = nullptr;
    size_t privLen = 0;
    FILE* mem = open_memstream(&priv, &privLen);
    if (mem) {
        ldns_key_print(mem, k);
        fclose(mem);
    }
    char* pub = rr ? ldns_rr2str(rr) : nullptr;
    std::string keyText = pub ? pub : "", privText = priv ? std::string(priv, privLen) : "";
    free(pub);
    free(priv);
    if (rr) ldns_rr_free(rr);
    ldns_key_deep_free(k);
    if (keyText.empty() || privText.empty()) {
        error = "ldns could not print the key";
        return false;
    }
    privText += fmt::format("Created: {}\nPublish: {}\nActivate: {}\n", stampText(now), stampText(now),
                            stampText(now));
    if (!parseKey(keyText, privText, zone, out, error)) return false;
    return true;
}

std::string keyFileText(const DnssecKey& k) {
    std::string b64(((k.dnskey.size() - 4 + 2) / 3) * 4 + 1, '\0');
    int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()),
                            reinterpret_cast<const unsigned char*>(k.dnskey.data()) + 4,
                            int(k.dnskey.size() - 4));
    b64.resize(size_t(std::max(n, 0)));
    std::string out = fmt::format("; This is a {}, keyid {}, for {}\n",
                                  k.sep() ? "key-signing key" : "zone-signing key", k.tag, k.zone);
    for (const auto& f : kTimingFields)
        if (int64_t t = k.timing.*f.member) out += fmt::format("; {}: {}\n", f.name, stampComment(t));
    out += fmt::format("{} IN DNSKEY {} 3 {} {}\n", k.zone, k.flags, k.algorithm, b64);
    return out;
}

std::string privateFileText(const DnssecKey& k) {
    ldns_key* lk = ldns_key_new();
    if (!lk || !k.pkey) {
        if (lk) ldns_key_free(lk);
        return {};
    }
    ldns_key_set_algorithm(lk, k.algorithm == kAlgEd25519 ? LDNS_SIGN_ED25519 : LDNS_SIGN_ECDSAP256SHA256);
    EVP_PKEY_up_ref(k.pkey.get());
    ldns_key_set_evp_key(lk, k.pkey.get());
    char* priv = nullptr;
    size_t len = 0;
    FILE* mem = open_memstream(&priv, &len);
    if (mem) {
        ldns_key_print(mem, lk);
        fclose(mem);
    }
    ldns_key_deep_free(lk);
    std::string out = priv ? std::string(priv, len) : "";
    free(priv);
    if (out.empty()) return out;
    return withTiming(out, k.timing);
}

std::string withTiming(std::string_view privText, const KeyTiming& t) {
    std::string out;
    forEachLine(privText, [&](std::string_view l) {
        if (!isTimingLine(l, "")) out.append(l).append("\n");
        return true;
    });
    for (const auto& f : kTimingFields)
        if (int64_t v = t.*f.member) out += fmt::format("{}: {}\n", f.name, stampText(v));
    return out;
}

std::string withTimingComments(std::string_view keyText, const KeyTiming& t) {
    std::string out;
    bool placed = false;
    forEachLine(keyText, [&](std::string_view l) {
        if (isTimingLine(l, "; ")) return true;
        size_t k = l.find_first_not_of(" \t\r");
        if (!placed && k != std::string_view::npos && l[k] != ';') {
            for (const auto& f : kTimingFields)
                if (int64_t v = t.*f.member) out += fmt::format("; {}: {}\n", f.name, stampComment(v));
            placed = true;
        }
        out.append(l).append("\n");
        return true;
    });
    return out;
}

bool rewriteTiming(const DnssecKey& k, std::string& error) {
    std::string kt, pt;
    if (!readFile(k.file + ".key", kt, error) || !readFile(k.file + ".private", pt, error)) return false;
    std::string nk = withTimingComments(kt, k.timing), np = withTiming(pt, k.timing);
    DnssecKey back;
    if (!parseKey(nk, np, k.zone, back, error)) {
        error = fmt::format("{}: the rewritten key does not parse: {}", k.file, error);
        return false;
    }
    if (back.dnskey != k.dnskey || back.timing.publish != k.timing.publish ||
        back.timing.activate != k.timing.activate || back.timing.inactive != k.timing.inactive ||
        back.timing.remove != k.timing.remove) {
        error = fmt::format("{}: the rewritten key does not read back as written", k.file);
        return false;
    }
    struct stat st {};
    mode_t pm = stat((k.file + ".private").c_str(), &st) == 0 ? (st.st_mode & 07777) : 0600;
    mode_t km = stat((k.file + ".key").c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
    // The .private first: it is what gslbd reads the times from.
    return replaceFile(k.file + ".private", np, pm, error) && replaceFile(k.file + ".key", nk, km, error);
}

uint64_t keyFilesStamp(const std::string& dir, const std::string& zone) {
    WireName want;
    if (zone.empty() || !textToName(endsInDot(zone) ? zone : zone + ".", {}, want)) return 1;
    std::string prefix = "k" + nameToText(want) + "+";
    std::transform(prefix.begin(), prefix.end(), prefix.begin(),
                   [](char c) { return char(lowerByte(uint8_t(c))); });
    DIR* d = opendir(dir.c_str());
    if (!d) return 1;
    std::vector<std::string> rows;
    while (dirent* e = readdir(d)) {
        std::string n = e->d_name, l = n;
        std::transform(l.begin(), l.end(), l.begin(), [](char c) { return char(lowerByte(uint8_t(c))); });
        if (l.compare(0, prefix.size(), prefix) != 0) continue;
        bool key = l.size() > 4 && l.compare(l.size() - 4, 4, ".key") == 0;
        bool priv = l.size() > 8 && l.compare(l.size() - 8, 8, ".private") == 0;
        if (!key && !priv) continue;
        struct stat st {};
        if (stat((dir + "/" + n).c_str(), &st) != 0) continue;
        rows.push_back(
            fmt::format("{}/{}/{}.{}/{}", n, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ino));
    }
    closedir(d);
    std::sort(rows.begin(), rows.end());
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the sorted rows
    for (const auto& r : rows) {
        for (char c : r) h = (h ^ uint8_t(c)) * 1099511628211ull;
        h = (h ^ '\n') * 1099511628211ull;
    }
    return h == 1 ? 2 : h;
}

bool writeKeyFiles(DnssecKey& k, const std::string& dir, std::string& error) {
    std::string base = dir + "/" + baseName(k);
    std::string priv = privateFileText(k);
    if (priv.empty()) {
        error = "the private key could not be written out";
        return false;
    }
    int fd = open((base + ".private").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        error = fmt::format("{}.private: {}", base, std::strerror(errno));
        return false;
    }
    bool ok = write(fd, priv.data(), priv.size()) == ssize_t(priv.size());
    ok = fsync(fd) == 0 && ok;
    close(fd);
    if (!ok) {
        error = fmt::format("{}.private: cannot write: {}", base, std::strerror(errno));
        return false;
    }
    if (!replaceFile(base + ".key", keyFileText(k), 0644, error)) return false;
    k.file = base;
    return true;
}

namespace {

using RrGuard = std::unique_ptr<ldns_rr, void (*)(ldns_rr*)>;

// The .key file: comments (BIND writes a few) and one IN DNSKEY record on one line, of a zone key of an
// algorithm we sign with, for `zone` when given. Into `rrGuard` the record, into `k` the zone, rdata,
// flags, algorithm and tag. False with `error` otherwise.
bool readKeyFile(std::string_view keyText, const std::string& zone, RrGuard& rrGuard, DnssecKey& k,
                 std::string& error) {
    std::string line;
    forEachLine(keyText, [&](std::string_view l) {
        size_t k = l.find_first_not_of(" \t\r");
        if (k == std::string_view::npos || l[k] == ';') return true;
        line.assign(l);
        return false;
    });
    if (line.empty()) {
        error = "the .key file holds no DNSKEY record";
        return false;
    }
    ldns_rr* rr = nullptr;
    ldns_status st = ldns_rr_new_frm_str(&rr, line.c_str(), 3600, nullptr, nullptr);
    if (st != LDNS_STATUS_OK || !rr) {
        error = fmt::format("the .key file's record does not parse: {}", ldns_get_errorstr_by_id(st));
        return false;
    }
    rrGuard.reset(rr);
    if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_DNSKEY || ldns_rr_get_class(rr) != LDNS_RR_CLASS_IN) {
        error = "the .key file's record is not an IN DNSKEY";
        return false;
    }
    std::string rd = rrRdataWire(rr);
    if (rd.size() < 5 || uint8_t(rd[2]) != 3) {
        error = "DNSKEY rdata is short or its protocol is not 3 (RFC 4034 §2.1.2)";
        return false;
    }
    const ldns_rdf* ownerRdf = ldns_rr_owner(rr);
    std::string owner(reinterpret_cast<const char*>(ldns_rdf_data(ownerRdf)), ldns_rdf_size(ownerRdf));
    lowerName(reinterpret_cast<uint8_t*>(owner.data()), owner.size());
    if (!zone.empty()) {
        WireName want;
        std::string abs = endsInDot(zone) ? zone : zone + ".";
        if (!textToName(abs, {}, want) || want != owner) {
            error = fmt::format("the key is for {}, not {}", nameToText(owner), zone);
            return false;
        }
    }
    k.zone = nameToText(owner);
    // ldns reads an owner of at most 254 characters of text (its token limit). A name whose octets need
    // \DDD escapes fits in 255 wire octets but not always in that, and then the .key file gslbctl writes for
    // it (keyFileText) would never load again: refuse it here, once, with the reason.
    if (k.zone.size() >= LDNS_MAX_DOMAINLEN) {
        error = fmt::format("the key's owner name is {} characters long as text; ldns reads at most {}",
                            k.zone.size(), LDNS_MAX_DOMAINLEN - 1);
        return false;
    }
    k.dnskey = rd;
    k.flags = uint16_t(uint8_t(rd[0]) << 8 | uint8_t(rd[1]));
    k.algorithm = uint8_t(rd[3]);
    k.tag = keyTag(rd);
    if (!(k.flags & kDnskeyZone)) {
        error = "the DNSKEY does not have the Zone Key flag (RFC 4034 §2.1.1)";
        return false;
    }
    if (k.algorithm != kAlgEcdsaP256Sha256 && k.algorithm != kAlgEd25519) {
        error =
            fmt::format("algorithm {} is not supported (13 ECDSAP256SHA256 or 15 ED25519)", int(k.algorithm));
        return false;
    }
    return true;
}

// The .private file, read by ldns (it knows every version of the format BIND and ldns write): its key must
// be of k's algorithm and imply k's public key (owner `ownerRdf`); then it is k.pkey. False with `error`
// otherwise.
bool readPrivateFile(std::string_view privText, const ldns_rdf* ownerRdf, DnssecKey& k, std::string& error) {
    if (!ldnsCanReadPrivate(privText, error)) return false;
    std::string priv(privText);
    FILE* f = fmemopen(priv.data(), priv.size(), "r");
    if (!f) {
        error = "cannot read the .private text";
        return false;
    }
    ldns_key* lk = nullptr;
    int lineNo = 0;
    ldns_status st = ldns_key_new_frm_fp_l(&lk, f, &lineNo);
    fclose(f);
    if (st != LDNS_STATUS_OK || !lk) {
        if (lk) ldns_key_deep_free(lk);
        error = fmt::format(".private line {}: {}", lineNo, ldns_get_errorstr_by_id(st));
        return false;
    }
    bool algOk =
        (k.algorithm == kAlgEcdsaP256Sha256 && ldns_key_algorithm(lk) == LDNS_SIGN_ECDSAP256SHA256) ||
        (k.algorithm == kAlgEd25519 && ldns_key_algorithm(lk) == LDNS_SIGN_ED25519);
    EVP_PKEY* evp = algOk ? ldns_key_evp_key(lk) : nullptr;
    if (!evp) {
        ldns_key_deep_free(lk);
        error = "the .private key is not of the DNSKEY's algorithm";
        return false;
    }
    // The public key the private one implies must be the DNSKEY's: a mismatched pair would sign answers no
    // validator accepts.
    ldns_key_set_flags(lk, k.flags);
    ldns_key_set_pubkey_owner(lk, ldns_rdf_clone(ownerRdf));
    ldns_rr* derived = ldns_key2rr(lk);
    bool match = derived && rrRdataWire(derived) == k.dnskey;
    if (derived) ldns_rr_free(derived);
    if (match) {
        EVP_PKEY_up_ref(evp);
        k.pkey = std::shared_ptr<EVP_PKEY>(evp, EvpDeleter{});
    }
    ldns_key_deep_free(lk);
    if (!match) {
        error = "the .private key does not match the .key file's public key";
        return false;
    }
    return true;
}

// BIND's timing metadata in the .private file (the same fields, by the same table, that withTiming writes).
void readTiming(std::string_view privText, KeyTiming& t) {
    forEachLine(privText, [&](std::string_view l) {
        for (const auto& f : kTimingFields) {
            std::string_view name = f.name;
            if (l.size() > name.size() + 1 && l.substr(0, name.size()) == name && l[name.size()] == ':') {
                std::string_view v = l.substr(name.size() + 1);
                v.remove_prefix(std::min(v.find_first_not_of(' '), v.size()));
                t.*f.member = parseStamp(v);
            }
        }
        return true;
    });
}

}  // namespace

bool parseKey(std::string_view keyText, std::string_view privText, const std::string& zone, DnssecKey& out,
              std::string& error) {
    if (keyText.size() > kMaxKeyFile || privText.size() > kMaxKeyFile) {
        error = "key file larger than 64 KiB";
        return false;
    }
    if (keyText.find('\0') != std::string_view::npos || privText.find('\0') != std::string_view::npos) {
        error = "NUL byte in a key file";
        return false;
    }
    RrGuard rr(nullptr, ldns_rr_free);
    DnssecKey k;
    if (!readKeyFile(keyText, zone, rr, k, error)) return false;
    if (!readPrivateFile(privText, ldns_rr_owner(rr.get()), k, error)) return false;
    readTiming(privText, k.timing);
    out = std::move(k);
    return true;
}

bool loadKeys(const std::string& dir, const std::string& zone, std::vector<DnssecKey>& out,
              std::string& error) {
    WireName want;
    if (zone.empty() || !textToName(endsInDot(zone) ? zone : zone + ".", {}, want)) {
        error = fmt::format("{}: not a domain name", zone);
        return false;
    }
    std::string prefix = "K" + nameToText(want) + "+";
    std::transform(prefix.begin(), prefix.end(), prefix.begin(),
                   [](char c) { return char(lowerByte(uint8_t(c))); });
    DIR* d = opendir(dir.c_str());
    if (!d) {
        error = fmt::format("{}: cannot open the key directory: {}", dir, std::strerror(errno));
        return false;
    }
    std::vector<std::string> bases;
    while (dirent* e = readdir(d)) {
        std::string n = e->d_name;
        std::string l = n;
        std::transform(l.begin(), l.end(), l.begin(), [](char c) { return char(lowerByte(uint8_t(c))); });
        if (l.size() > prefix.size() + 4 && l.compare(0, prefix.size(), prefix) == 0 &&
            l.compare(l.size() - 4, 4, ".key") == 0)
            bases.push_back(dir + "/" + n.substr(0, n.size() - 4));
    }
    closedir(d);
    std::sort(bases.begin(), bases.end());
    std::vector<DnssecKey> keys;
    for (const auto& b : bases) {
        std::string kt, pt;
        if (!readFile(b + ".key", kt, error)) return false;
        if (!readFile(b + ".private", pt, error)) {
            error += " (every key in the directory needs its private half)";
            return false;
        }
        DnssecKey k;
        if (!parseKey(kt, pt, zone, k, error)) {
            error = fmt::format("{}.key: {}", b, error);
            return false;
        }
        k.file = b;
        keys.push_back(std::move(k));
    }
    std::sort(keys.begin(), keys.end(), [](const DnssecKey& a, const DnssecKey& b) { return a.tag < b.tag; });
    out = std::move(keys);
    return true;
}

std::string dsRdata(const DnssecKey& k) {
    WireName owner;
    textToName(k.zone, {}, owner);
    std::string data = owner + k.dnskey;
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdLen = 0;
    EVP_Digest(data.data(), data.size(), md, &mdLen, EVP_sha256(), nullptr);
    std::string out;
    out += char(k.tag >> 8);
    out += char(k.tag);
    out += char(k.algorithm);
    out += char(2);
    out.append(reinterpret_cast<const char*>(md), mdLen);
    return out;
}

std::string dsText(const DnssecKey& k) {
    std::string rd = dsRdata(k);
    std::string hex;
    for (size_t i = 4; i < rd.size(); ++i) hex += fmt::format("{:02X}", uint8_t(rd[i]));
    return fmt::format("{} IN DS {} {} 2 {}", k.zone, k.tag, k.algorithm, hex);
}

bool signData(const DnssecKey& k, std::string_view data, uint8_t out[64]) noexcept {
    if (!k.pkey) return false;
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    if (!ctx) return false;
    bool ok = false;
    if (k.algorithm == kAlgEd25519) {
        size_t len = 64;
        ok = EVP_DigestSignInit(ctx, nullptr, nullptr, nullptr, k.pkey.get()) == 1 &&
             EVP_DigestSign(ctx, out, &len, reinterpret_cast<const unsigned char*>(data.data()),
                            data.size()) == 1 &&
             len == 64;
    } else {
        unsigned char der[128];
        size_t len = sizeof der;
        // Fetched once: OpenSSL 3 looks EVP_sha256() up in its provider tables at every init otherwise.
        static EVP_MD* sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
        if (EVP_DigestSignInit(ctx, nullptr, sha256, nullptr, k.pkey.get()) == 1 &&
            EVP_DigestSign(ctx, der, &len, reinterpret_cast<const unsigned char*>(data.data()),
                           data.size()) == 1) {
            const unsigned char* p = der;
            ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, long(len));
            if (sig) {
                const BIGNUM *r = nullptr, *s = nullptr;
                ECDSA_SIG_get0(sig, &r, &s);
                ok = BN_bn2binpad(r, out, 32) == 32 && BN_bn2binpad(s, out + 32, 32) == 32;
                ECDSA_SIG_free(sig);
            }
        }
    }
    EVP_MD_CTX_free(ctx);
    return ok;
}

}  // namespace gslb::zones
