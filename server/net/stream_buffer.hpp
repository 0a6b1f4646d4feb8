// The input side of a DNS stream (TCP, and TLS once decrypted): the two-octet length prefix of RFC 1035
// §4.2.2 and RFC 7766 §6.2.1, read across any boundary of the reads (a message in many, many messages in
// one). Socket-free, so the fuzz target (tests/fuzz/fuzz_stream.cpp) drives the same code as the workers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

namespace gslb::server {

/// Octets read and not yet answered: data()[0, size()) of capacity(). kInitial at first, grown to hold one
/// message whole when its length prefix asks for more (at most 2 + 65535), back to kInitial once it has
/// been answered. So a connection holds 4 KiB while idle, and at most 64 KiB + 2 while a large message
/// arrives, whatever the client sends.
class StreamBuffer {
  public:
    static constexpr size_t kInitial = 4096;
    static constexpr size_t kMax = 2 + 65535;

    /// What next() found at the read position.
    enum class Frame {
        Message,     // `message` is a whole message; the position moved past it
        Incomplete,  // fewer octets than the prefix says (or than a prefix): read more
        ZeroLength,  // a zero length prefix: no DNS message (NSD closes the connection)
    };

    void allocate() {
        if (!buf_) {
            buf_.reset(new uint8_t[kInitial]);
            cap_ = kInitial;
        }
    }
    bool allocated() const { return buf_ != nullptr; }
    const uint8_t* data() const { return buf_.get(); }
    size_t size() const { return len_; }
    size_t capacity() const { return cap_; }
    /// Where the next read goes, and how much fits (never 0 once compact() ran after every message).
    uint8_t* space() { return buf_.get() + len_; }
    size_t room() const { return cap_ - len_; }
    void commit(size_t n) { len_ += n; }
    void clear() { len_ = pos_ = 0; }
    /// Octets after the read position (a message under way when non-zero after compact()).
    size_t pending() const { return len_ - pos_; }

    /// The next whole message from the read position. Compares the length with the space left after the
    /// prefix, never `pos + 2 + len` with the size.
    Frame next(std::span<const uint8_t>& message) {
        if (len_ - pos_ < 2) return Frame::Incomplete;
        size_t n = size_t(buf_[pos_]) << 8 | buf_[pos_ + 1];
        if (n == 0) return Frame::ZeroLength;
        if (len_ - pos_ - 2 < n) return Frame::Incomplete;
        message = {buf_.get() + pos_ + 2, n};
        pos_ += 2 + n;
        return Frame::Message;
    }

    /// After the messages next() gave were answered: keeps the start of the next message at the front, grown
    /// to hold it whole when its prefix asks for more than the capacity, or shrunk back to kInitial when what
    /// is left fits there. Invalidates the spans next() gave.
    void compact() {
        if (pos_) {
            std::memmove(buf_.get(), buf_.get() + pos_, len_ - pos_);
            len_ -= pos_;
            pos_ = 0;
        }
        if (len_ >= 2) {
            size_t need = 2 + (size_t(buf_[0]) << 8 | buf_[1]);
            if (need > cap_) resize(need);
        } else if (cap_ > kInitial) {
            resize(kInitial);
        }
    }

  private:
    void resize(size_t cap) {
        std::unique_ptr<uint8_t[]> b(new uint8_t[cap]);
        std::memcpy(b.get(), buf_.get(), len_);
        buf_ = std::move(b);
        cap_ = cap;
    }
    std::unique_ptr<uint8_t[]> buf_;
    size_t len_ = 0, pos_ = 0, cap_ = 0;
};

}  // namespace gslb::server
