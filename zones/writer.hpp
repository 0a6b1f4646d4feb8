// Writing a DNS message into a caller-owned buffer with name compression (RFC 1035 §4.1.4), a size limit and
// roll-back to a mark, so that an RRset that does not fit leaves nothing behind (RFC 2181 §9). No allocation.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gslb::zones {

enum Section { kAnswer = 0, kAuthority = 1, kAdditional = 2 };

class Writer {
  public:
    /// `buf` has room for `limit` octets; nothing is written at or past `limit`.
    Writer(uint8_t* buf, size_t limit) : buf_(buf), limit_(limit) {}

    size_t size() const { return len_; }
    uint8_t* data() { return buf_; }
    void setLimit(size_t limit) { limit_ = limit; }
    size_t limit() const { return limit_; }

    /// Appends `n` octets, or nothing and false when they do not fit. The check compares `n` with the space
    /// left, never `len_ + n` with the limit: a huge `n` (an underflowed length) must fail, not wrap around.
    /// A limit lowered below what is already written leaves no space at all.
    bool bytes(const void* p, size_t n) {
        if (len_ > limit_ || n > limit_ - len_) return false;
        if (n) std::memcpy(buf_ + len_, p, n);  // memcpy from a null pointer is undefined even for 0 octets
        len_ += n;
        return true;
    }
    bool u16(uint16_t v) {
        uint8_t b[2] = {uint8_t(v >> 8), uint8_t(v)};
        return bytes(b, 2);
    }
    bool u32(uint32_t v) {
        uint8_t b[4] = {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
        return bytes(b, 4);
    }

    /// Registers a name already in the message at `off` (e.g. the QNAME at 12) as a compression target.
    /// `name` is its wire form in any case; it must stay valid while this Writer is used.
    void remember(const uint8_t* name, size_t len, size_t off, size_t upto = SIZE_MAX);

    /// Writes an uncompressed wire name (any case), pointing to an earlier copy of its longest known suffix
    /// when `compress`; ASCII case is ignored when matching (RFC 1035 §2.3.3). `name` must stay valid while
    /// this Writer is used (it becomes a compression target).
    bool name(const uint8_t* name, size_t len, bool compress = true);

    /// One RR: owner, type, class IN (or `cls`), TTL and rdata; names inside the rdata of the RFC 1035 types
    /// are compressed, others copied as they are (RFC 3597 §4). Counts it in `section`. All or nothing: when
    /// it does not fit, nothing of it stays (false).
    bool rr(Section section, const uint8_t* owner, size_t ownerLen, uint16_t type, uint32_t ttl,
            const uint8_t* rdata, size_t rdlen, uint16_t cls = 1);

    struct Mark {
        size_t len;
        uint16_t counts[3];
        uint8_t entries;
    };
    Mark mark() const { return Mark{len_, {counts_[0], counts_[1], counts_[2]}, uint8_t(nent_)}; }
    /// Back to `m`. Mark{..., 0} forgets every compression target, the first name's too.
    void rollback(const Mark& m) {
        len_ = m.len;
        for (int i = 0; i < 3; ++i) counts_[i] = m.counts[i];
        if (m.entries == 0) {
            nent_ = 0;
            firstEntries_ = 0;
            pending_ = 0;
        } else {
            // A mark taken before the first name's suffixes were entered (pending) still keeps them: they
            // were written before it, as the first name was.
            nent_ = m.entries > firstEntries_ ? m.entries : firstEntries_;
        }
    }
    uint16_t count(Section s) const { return counts_[s]; }
    void addCount(Section s) { ++counts_[s]; }

  private:
    struct Entry {
        const uint8_t* name;
        uint16_t off;
        uint8_t len;
    };
    static constexpr size_t kMaxEntries = 64;

    uint8_t* buf_;
    size_t limit_;
    size_t len_ = 0;
    uint16_t counts_[3] = {0, 0, 0};
    Entry ents_[kMaxEntries];
    size_t nent_ = 0;
    // The first name remember()ed enters only itself at once; its suffixes wait (`pending_`: the offset of
    // the next one in the name, 0 when none waits) until a name is looked up or another one remembered:
    // most answers (an A record whose owner is the QNAME) never look at them.
    void addSuffixes(const uint8_t* n, size_t len, size_t off, size_t upto, size_t from);
    void enterPending() {
        if (!pending_) return;
        size_t from = pending_;
        pending_ = 0;
        const Entry& e = ents_[0];
        addSuffixes(e.name, e.len, e.off, SIZE_MAX, from);
        firstEntries_ = nent_;
    }
    size_t pending_ = 0;
    size_t firstEntries_ = 0;  // entries of the first name, once entered (rollback keeps them)
};

}  // namespace gslb::zones
