#include "server/state/snapshot.hpp"

#include <sys/stat.h>

#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
#include <cctype>
#include <ctime>

#include "server/conf/digest.hpp"
#include "zones/catalog.hpp"
#include "zones/dnssec.hpp"
#include "zones/dnssec_rollover.hpp"
#include "zones/loader.hpp"
#include "zones/serial.hpp"

namespace gslb::server {

std::unique_ptr<zones::Zone> loadConfiguredZone(const ZoneConf& zc, std::optional<uint32_t> lastSerial,
                                                int64_t now, std::string& error, const zones::Zone* before,
                                                std::string* note, bool* warn) {
    zones::SourceSet set;
    // A zone's file first: its problems name the file (what an operator opens), before the name's.
    if (!zc.catalog) {
        if (error = zoneFileProblem(zc); !error.empty()) return nullptr;
        if (!zones::readZoneFile(zc.file, zc.name, set, error)) return nullptr;
    }
    zones::WireName apex;
    if (!zones::textToName(zc.name, {}, apex)) {
        error = fmt::format("{}: not a domain name", zc.name);
        return nullptr;
    }
    if (zc.catalog) {
        // RFC 9432: the catalog's records from the config. Its "file" serial is the one served before (so
        // "keep" moves it on by one only when the member set changed), or at start the time: a restart always
        // moves it on, since the members may have changed while gslbd was down.
        zones::lowerName(reinterpret_cast<uint8_t*>(apex.data()), apex.size());
        uint32_t synth = before && lastSerial ? *lastSerial : uint32_t(now);
        if (!zones::catalogRecords(apex, zc.catalogMembers, synth, "catalog " + zc.name, set, error))
            return nullptr;
    }
    // The served serial goes into the SOA before anything is compiled or signed: the SOA's RRSIG, AXFR and
    // NOTIFY all carry it. A zone without an apex SOA is left as it is, for compile() to refuse.
    zones::SourceRecord* soa = nullptr;
    for (auto& r : set.records)
        if (r.type == zones::kTypeSOA && r.owner == std::string_view(apex)) {
            soa = &r;
            break;
        }
    // The file's serial as a flag and a value, not an optional read through `*`: GCC 12 saw the optional's
    // payload as maybe uninitialized at the final comparison (-Wmaybe-uninitialized in a clean build).
    const std::optional<uint32_t> parsedSerial = soa ? zones::soaSerial(soa->rdata) : std::nullopt;
    const bool hasFileSerial = parsedSerial.has_value();
    const uint32_t fileSerial = parsedSerial.value_or(0);
    auto stamp = [&](uint32_t serial) {
        std::string rd(soa->rdata);
        zones::setSoaSerial(rd, serial);
        soa->rdata = set.store(rd);
    };
    uint32_t served = fileSerial;
    std::unique_ptr<zones::Zone> z;
    if (!zc.dnssec && zc.serialPolicy == zones::SerialPolicy::Keep) {
        // "keep" serves the file's serial unless that would go back (RFC 1982) from the one served before:
        // after a signed zone's policy serials, a file restored from a backup, or a file edited without a
        // bump. Then what was served, one more if the data changed (against the running zone; after a
        // restart there is none to compare, and a file behind the state file counts as changed).
        if (hasFileSerial && lastSerial && !zones::serialGreater(fileSerial, *lastSerial)) {
            stamp(*lastSerial);
            z = zones::Zone::compile(apex, set, zc.file, error);
            if (!z) return nullptr;
            bool changed = before ? !z->sameData(*before) : fileSerial != *lastSerial;
            served = zones::nextServedSerial(zc.serialPolicy, fileSerial, lastSerial, now, changed);
            if (served != *lastSerial) {
                stamp(served);
                z = zones::Zone::compile(apex, set, zc.file, error);
            }
        } else {
            z = zones::Zone::compile(apex, set, zc.file, error);
        }
    } else {
        if (hasFileSerial) {
            served = zones::nextServedSerial(zc.serialPolicy, fileSerial, lastSerial, now);
            stamp(served);
        }
        if (!zc.dnssec) {
            z = zones::Zone::compile(apex, set, zc.file, error);
        } else {
            std::vector<zones::DnssecKey> keys;
            if (!zones::loadKeys(zc.keyDir, zc.name, keys, error)) return nullptr;
            zones::SignOptions opt;
            opt.now = int64_t(time(nullptr));
            opt.validity = zc.signatureValidity;
            opt.nsec3 = zc.denial == "nsec3";
            // Signatures over what did not change are kept (until due): a reload's IXFR carries the change.
            opt.previous =
                before && before->signer() && before->signer()->nsec3 == opt.nsec3 ? before : nullptr;
            z = zones::compileSigned(apex, set, zc.file, std::move(keys), opt, error);
        }
    }
    if (!z || !hasFileSerial || served == fileSerial || !note || zc.catalog) return z;
    std::string last = lastSerial ? std::to_string(*lastSerial) : "none";
    const bool behind = zc.serialPolicy == zones::SerialPolicy::Keep;
    if (warn) *warn = behind;
    if (behind)
        *note = fmt::format(
            "zone {}: serving serial {}, not the file's {}: it is not greater than the {} served before "
            "(RFC 1982), and secondaries would keep their copy{}; raise the serial in {} above {} to serve "
            "the file's again",
            zc.name, served, fileSerial, last,
            served == *lastSerial ? " (the data is unchanged, so the serial is too)" : "", zc.file, served);
    else
        *note = fmt::format(
            "zone {}: serving serial {} (serial_policy \"{}\"{}; the file says {}, {} served before)",
            zc.name, served, zones::serialPolicyName(zc.serialPolicy), zc.dnssec ? ", signed" : "",
            fileSerial, last);
    return z;
}

namespace {

std::string lowerName(std::string n) {
    for (char& c : n) c = char(tolower(static_cast<unsigned char>(c)));
    return n;
}

// The cookie secrets of a new snapshot (RFC 9018 §5 rollover): the file's first line makes cookies and its
// other lines are accepted; without a file the running server keeps its random secret. When the secret that
// makes cookies changes at a reload, the one before is accepted for `rollover` seconds more, so clients that
// hold a cookie made with it are not told BADCOOKIE (their cookies live an hour at most).
std::shared_ptr<const CookieJar> buildCookies(const ServerConf& sc, const Snapshot* previous, uint32_t now,
                                              std::string& error) {
    CookieSecret current;
    std::vector<RetiredSecret> retired;
    if (!sc.cookieSecretFile.empty()) {
        std::vector<CookieSecret> secrets;
        if (!readCookieSecrets(sc.cookieSecretFile, secrets, error)) return nullptr;
        current = secrets[0];
        for (size_t i = 1; i < secrets.size(); ++i) retired.push_back({secrets[i], 0});
    } else {
        current = previous && previous->cookies ? previous->cookies->current() : randomCookieSecret();
    }
    if (previous && previous->cookies) {
        const CookieJar& old = *previous->cookies;
        if (old.current() != current && sc.cookieRollover > 0)
            retired.push_back({old.current(), now + uint32_t(sc.cookieRollover)});
        // A rollover still under way goes on, so two quick changes do not cut the first one short.
        for (const auto& r : old.retired())
            if (r.until && int32_t(r.until - now) > 0 && r.key != current) retired.push_back(r);
    }
    return std::make_shared<CookieJar>(current, std::move(retired));
}

}  // namespace

std::string recordCountText(const zones::ZoneDb& db) {
    size_t file = 0, served = 0;
    for (const auto& z : db.zones()) {
        file += z->fileRecordCount();
        served += z->recordCount();
    }
    return served == file ? fmt::format("{} records", file)
                          : fmt::format("{} records, {} with DNSSEC", file, served);
}

namespace {

// Which files the TLS context is made of, and their identity now: a rotated certificate (a new file renamed
// over the old, or rewritten) changes it.
std::string tlsFilesStamp(const ServerConf& sc) {
    std::string out;
    for (const std::string* f : {&sc.tlsCertificate, &sc.tlsKey, &sc.tlsClientCa}) {
        struct stat st {};
        out += *f;
        if (!f->empty() && stat(f->c_str(), &st) == 0)
            out += fmt::format("|{}:{}:{}:{}.{}", st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec,
                               st.st_mtim.tv_nsec);
        out += '\n';
    }
    return out;
}

bool buildTls(Snapshot& s, const Snapshot* previous, std::string& error) {
    const ServerConf& sc = s.config.server;
    if (sc.tlsListen.empty()) return true;
    s.tlsStamp = tlsFilesStamp(sc);
    if (previous && previous->tls && previous->tlsStamp == s.tlsStamp) {
        s.tls = previous->tls;
        return true;
    }
    SslCtxPtr ctx = makeServerContext(sc, error);
    if (!ctx) return false;
    s.tls = std::shared_ptr<SSL_CTX>(ctx.release(), SslCtxFree{});
    return true;
}

}  // namespace

std::shared_ptr<Snapshot> buildSnapshot(const std::string& path, const Snapshot* previous, std::string& error,
                                        uint32_t now) {
    if (!now) now = uint32_t(time(nullptr));
    auto s = std::make_shared<Snapshot>();
    if (!loadConfig(path, s->config, error)) return nullptr;
    s->configDigest = configDigest(s->config);
    s->cookies = buildCookies(s->config.server, previous, now, error);
    if (!s->cookies) return nullptr;
    if (!buildTls(*s, previous, error)) return nullptr;
    if (!service::loadZoneSerials(s->config.server.stateDir, s->servedSerials, error)) return nullptr;
    for (const auto& zc : s->config.zones) {
        // The serial served before: by the snapshot being replaced, or by an earlier process (state_dir);
        // the greater of the two (RFC 1982), so neither a restart nor a lost state file goes backwards.
        // Every policy: a change of policy or of dnssec (a signed zone's serials run ahead of its file's)
        // must not send it back either.
        std::optional<uint32_t> last;
        std::string key = lowerName(zc.name);
        // Stamped before the keys are read: a change made while they are read shows at the next check.
        if (zc.dnssec) s->keyFiles.push_back({zc.name, zc.keyDir, zones::keyFilesStamp(zc.keyDir, zc.name)});
        if (auto it = s->servedSerials.find(key); it != s->servedSerials.end()) last = it->second;
        zones::WireName apex;
        const zones::Zone* before =
            previous && zones::textToName(zc.name, {}, apex) ? previous->db.zone(apex) : nullptr;
        if (before && (!last || zones::serialGreater(before->serial(), *last))) last = before->serial();
        std::string note;
        bool warn = false;
        std::unique_ptr<zones::Zone> z =
            loadConfiguredZone(zc, last, int64_t(now), error, before, &note, &warn);
        if (!z) return nullptr;
        s->warnings.insert(s->warnings.end(), z->warnings().begin(), z->warnings().end());
        if (warn)
            s->warnings.push_back(zones::LoadWarning{zc.file, note});
        else if (!note.empty())
            s->serialNotes.push_back(note);
        if (zc.dnssec) {
            int64_t at = z->signer()->refreshAt();
            if (!s->resignAt || at < s->resignAt) s->resignAt = at;
            at = z->signer()->keyEventAt();
            if (at && (!s->keyEventAt || at < s->keyEventAt)) s->keyEventAt = at;
        }
        service::attachJournal(zc, *z, before, previous == nullptr, s->config.server.stateDir,
                               s->journalWrites, s->warnings, s->serialNotes);
        s->servedSerials[key] = z->serial();
        if (!s->db.add(std::move(z))) {
            error = fmt::format("{}: zone {} is configured twice", path, zc.name);
            return nullptr;
        }
    }
    // One counter row per thread that answers (answerRows: each worker's loop and its UDP threads), from
    // [server] workers and listen of the first snapshot (the workers are started once; a reload that changes
    // them takes effect at the next start). Rows for all kMaxWorkers cost 64 x 8 octets per service in each
    // of the per-service and per-(hostname, service) tables: 1 KiB of the 1.8 KiB a GSLB service cost.
    size_t workers =
        previous && previous->gslb.answers ? previous->gslb.answers->workers() : answerRows(s->config.server);
    if (!buildGslb(s->config, s->db, previous ? &previous->gslb : nullptr, workers, s->gslb, error))
        return nullptr;
    // The parsed records are gone; give their memory back to the system instead of keeping it in malloc's
    // free lists for the life of the process (a 1M-record zone leaves over 100 MB there otherwise).
    malloc_trim(0);
    s->answer.udpPayloadMax = s->config.server.udpPayloadMax;
    s->answer.identity = s->config.server.identity;
    s->answer.version = s->config.server.version;
    s->answer.nsid = s->config.server.nsid;
    s->answer.minimalResponses = s->config.server.minimalResponses;
    s->answer.ecs = s->config.server.ecs;
    s->answer.cookies = s->cookies.get();
    return s;
}

std::vector<std::pair<std::string, std::string>> keyEventLines(const Snapshot* previous, const Snapshot& s) {
    std::vector<std::pair<std::string, std::string>> out;
    if (!previous) return out;
    for (const auto& z : s.db.zones()) {
        const zones::Zone* before = previous->db.zone(z->apex());
        if (!z->signer() || !before || !before->signer()) continue;
        const zones::ZoneSigner *was = before->signer(), *is = z->signer();
        for (const auto& e : zones::keyChanges(was->keys(), was->signedAt(), is->keys(), is->signedAt()))
            out.emplace_back(z->name(),
                             fmt::format("zone {}: key {} ({}) {}", z->name(), e.tag, e.role, e.what));
    }
    return out;
}

std::vector<std::string> changedKeyFiles(const Snapshot& s, uint64_t& stamp) {
    std::vector<std::string> out;
    stamp = 0;
    for (const auto& k : s.keyFiles) {
        uint64_t now = zones::keyFilesStamp(k.dir, k.zone);
        stamp = stamp * 1099511628211ull + now;
        if (now != k.stamp) out.push_back(fmt::format("zone {}: the key files in {} changed", k.zone, k.dir));
    }
    return out;
}

}  // namespace gslb::server
