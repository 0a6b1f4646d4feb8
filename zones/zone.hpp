// A compiled, immutable, lookup-ready zone (doc/design.md "Principles" 2): every owner name lower-cased in
// wire form, rdata as uncompressed wire bytes, empty non-terminals materialised as nodes, delegation points
// and the names they occlude marked, and the names inside NS/MX/SRV/CNAME rdata resolved to nodes of this
// zone. The query path only hashes and compares bytes here; the zone parser (ldns) runs at load time only.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "zones/name.hpp"

namespace gslb::zones {

inline constexpr uint32_t kNone = UINT32_MAX;

class ZoneSigner;  // zones/dnssec.hpp
struct Journal;    // zones/journal.hpp

/// One record's data: bytes [offset, offset+len) of Zone::bytes_. `target` is the node (in this zone) that
/// the domain name inside the rdata names, for NS, MX, SRV, CNAME, SVCB and HTTPS (whose ServiceMode "."
/// names the owner, RFC 9460 §2.5.2); kNone otherwise or when not in this zone.
struct Rdata {
    uint32_t offset;
    uint16_t len;
    uint32_t target;
};

/// All records of one (owner, type): rdatas_[first, first+count). One TTL per RRset (RFC 2181 §5.2).
struct RRset {
    uint16_t type;
    uint32_t ttl;
    uint32_t first;
    uint32_t count;
};

enum NodeFlags : uint16_t {
    kNodeApex = 1,
    kNodeDelegation = 2,  // NS below the apex: a zone cut (RFC 1034 §4.2.1)
    kNodeOccluded = 4,    // strictly below a zone cut or a DNAME: glue or occluded data, never authoritative
    kNodeDname = 8,       // holds a DNAME: names below it are redirected (RFC 6672 §2.3)
};

/// One owner name (or empty non-terminal). rrsets_[firstSet, firstSet+setCount), sorted by type.
struct Node {
    uint32_t nameOff;  // into bytes_: lower-case wire name
    uint16_t nameLen;
    uint16_t flags;
    uint32_t firstSet;
    uint32_t setCount;
    int32_t dynamic;  // GSLB hostname id assigned by the server (-1: a static name)
};

/// Where a record's TTL came from (the reader's; RFC 1035 §5.1, RFC 2308 §4).
enum class TtlFrom : uint8_t {
    Written,    // the record's own TTL field
    Directive,  // the $TTL in force
    None,       // neither: readZoneFile gives it the last TTL written before it (RFC 1035 §5.1)
};

/// One record as read from a master file, before compilation. `owner` is lower-cased wire; `rdata` is
/// uncompressed wire with the names in the case the file wrote them. Both view bytes kept by the SourceSet
/// that holds the record.
struct SourceRecord {
    std::string_view owner;
    std::string_view rdata;
    uint16_t type;
    uint32_t ttl;
    uint32_t file;  // index into SourceSet::files()
    int line;
    TtlFrom ttlFrom = TtlFrom::Written;
};

/// The records of one zone as read (file order), with the bytes they point into and the names of the files
/// they came from. The bytes live in large blocks that never move: a million records cost a few dozen
/// allocations, not two each. Movable, not copyable (the records' views point into the blocks).
/// Something a master file holds that loads but that an operator should hear about: `where` is "file:line".
struct LoadWarning {
    std::string where;
    std::string message;
};

class SourceSet {
  public:
    SourceSet() = default;
    SourceSet(SourceSet&&) = default;
    SourceSet& operator=(SourceSet&&) = default;
    SourceSet(const SourceSet&) = delete;
    SourceSet& operator=(const SourceSet&) = delete;

    std::vector<SourceRecord> records;
    /// What the reader warned about, in file order (zones/loader.hpp readZoneFile).
    std::vector<LoadWarning> warnings;

    const std::vector<std::string>& files() const { return files_; }
    const std::string& file(const SourceRecord& r) const { return files_[r.file]; }
    /// Index of `path` among files(), added when new.
    uint32_t fileIndex(const std::string& path);
    /// A copy of `bytes` that lives as long as this set.
    std::string_view store(std::string_view bytes);
    /// Moves every record of `other` to the end of this set (file indices translated, blocks taken over).
    void append(SourceSet&& other);

  private:
    std::vector<std::string> files_;
    std::vector<std::unique_ptr<char[]>> blocks_;
    char* cur_ = nullptr;
    size_t left_ = 0;
};

class Zone {
  public:
    /// Name of the zone (lower-case wire) and its presentation form.
    std::string_view apex() const { return apex_; }
    /// Labels of the apex before the root label (labelCount(apex())), kept: the query path needs it per
    /// query.
    size_t apexLabels() const { return apexLabels_; }
    const std::string& name() const { return nameText_; }
    const std::string& file() const { return file_; }

    /// Exact lookup of a lower-case wire name. Returns the node index or kNone. O(1), no allocation.
    uint32_t find(std::string_view lowerWire) const;

    const Node& node(uint32_t i) const { return nodes_[i]; }
    Node& mutableNode(uint32_t i) { return nodes_[i]; }  // only while building a snapshot (GSLB binding)
    uint32_t nodeCount() const { return uint32_t(nodes_.size()); }
    std::string_view nodeName(const Node& n) const {
        return {reinterpret_cast<const char*>(bytes_.data()) + n.nameOff, n.nameLen};
    }
    /// The RRset of `type` at node `n`, or nullptr.
    const RRset* rrset(const Node& n, uint16_t type) const;
    const RRset* rrsetsBegin(const Node& n) const { return rrsets_.data() + n.firstSet; }
    const RRset* rrsetsEnd(const Node& n) const { return rrsets_.data() + n.firstSet + n.setCount; }
    const Rdata& rdata(uint32_t i) const { return rdatas_[i]; }
    const uint8_t* bytes(const Rdata& r) const { return bytes_.data() + r.offset; }

    uint32_t apexNode() const { return apexNode_; }
    const RRset& soa() const { return *soa_; }
    /// TTL of the SOA in negative answers: min(SOA TTL, SOA MINIMUM) (RFC 2308 §3).
    uint32_t negativeTtl() const { return negTtl_; }
    uint32_t serial() const { return serial_; }
    size_t recordCount() const { return rdatas_.size(); }
    /// The records the zone file gave (recordCount() less what signing added: DNSKEY, RRSIG, NSEC/NSEC3),
    /// so that `gslbctl check` and a reload count the same thing.
    size_t fileRecordCount() const { return fileRecords_ ? fileRecords_ : rdatas_.size(); }
    void setFileRecordCount(size_t n) { fileRecords_ = n; }

    /// Builds a zone from parsed records, applying the checks of the DNS core / RFC 1034 / RFC 2181: exactly
    /// one SOA at the apex, NS at the apex, no CNAME beside other data (RFC 1034 §3.6.2, RFC 2181 §10.1), no
    /// records outside the zone. On failure returns nullptr and sets `error` to "file:line: message".
    /// Nodes are numbered in the order their names first appear in the file (the apex first; an empty
    /// non-terminal just before the first name below it), which is also the AXFR order.
    /// The zone's DNSSEC state when it is signed (zones/dnssec.hpp compileSigned), else nullptr.
    const ZoneSigner* signer() const { return signer_.get(); }
    void setSigner(std::shared_ptr<ZoneSigner> s) { signer_ = std::move(s); }

    /// The differences that lead to this version (IXFR, zones/journal.hpp), or nullptr: none kept.
    const Journal* journal() const { return journal_.get(); }
    const std::shared_ptr<const Journal>& sharedJournal() const { return journal_; }
    void setJournal(std::shared_ptr<const Journal> j) { journal_ = std::move(j); }

    static std::unique_ptr<Zone> compile(const WireName& apex, const SourceSet& records,
                                         const std::string& file, std::string& error);

    /// The reader's warnings (SourceSet::warnings) and compile's own: records that load but are never served
    /// because they sit below a DNAME (RFC 6672 §2.3: there must be none) or below a zone cut without being
    /// glue (an address record of a name server of the cut), one per name, file:line of its first record.
    const std::vector<LoadWarning>& warnings() const { return warnings_; }

    /// True when both zones serve the same data: the same names, RRsets, TTLs and rdata, the SOA serial
    /// included, neither signed. For the "keep" serial (zones/serial.hpp): an unchanged reload keeps it.
    bool sameData(const Zone& other) const;

  private:
    uint32_t addBytes(std::string_view b);
    uint32_t addNode(std::string_view lowerWire);  // build time: a new node, entered in the index
    void insertIndex(uint32_t node, uint32_t hash);
    // compile's steps, in its order (zones/zone.cpp says what each does).
    void indexNodes(const std::vector<SourceRecord>& recs, std::vector<uint32_t>& parent,
                    std::vector<uint32_t>& recNode);
    bool buildRRsets(const SourceSet& set, const std::vector<uint32_t>& order,
                     const std::vector<uint32_t>& start, const SourceRecord& soa, std::string& error);
    void markCuts(const std::vector<uint32_t>& parent);
    void resolveTargets();
    void readSoa();

    std::string apex_;
    size_t apexLabels_ = 0;
    std::string nameText_;
    std::string file_;
    std::vector<uint8_t> bytes_;
    std::vector<Node> nodes_;
    std::vector<RRset> rrsets_;
    std::vector<Rdata> rdatas_;
    struct Slot {
        uint32_t node;  // kNone: empty
        uint32_t hash;  // the name's full hash
    };
    std::vector<Slot> index_;  // open addressing, linear probing, power-of-two size, at most half full
    uint32_t mask_ = 0;
    uint32_t apexNode_ = kNone;
    const RRset* soa_ = nullptr;
    uint32_t negTtl_ = 0;
    uint32_t serial_ = 0;
    std::shared_ptr<ZoneSigner> signer_;
    std::shared_ptr<const Journal> journal_;
    std::vector<LoadWarning> warnings_;
    size_t fileRecords_ = 0;  // 0: all of them
};

/// Offset of the domain name within the rdata of `type` that additional-section processing or CNAME chasing
/// follows (NS, CNAME: 0; MX, SVCB, HTTPS: 2; SRV: 6), or -1.
int targetNameOffset(uint16_t type);

}  // namespace gslb::zones
