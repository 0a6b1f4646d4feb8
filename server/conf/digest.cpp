#include "server/conf/digest.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <memory>
#include <string_view>

#include "zones/read_file.hpp"

namespace gslb::server {

namespace {

void erase(toml::table& root, const char* table, const char* key) {
    if (toml::table* t = root[table].as_table()) t->erase(key);
}

std::string hexOf(EVP_MD_CTX* ctx) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    if (EVP_DigestFinal_ex(ctx, md, &n) != 1) return {};
    std::string hex;
    for (unsigned i = 0; i < n; ++i) hex += fmt::format("{:02x}", md[i]);
    return hex;
}

// The canonical form, fed to the hash as it is walked (no text of the whole file is built): every node a
// type tag, then its content; strings and keys with their length first, tables in key order (toml::table
// is ordered), so two different documents never feed the same bytes. Walking is what the toml++ formatter
// did, without its quoting and indentation through an ostream: that print was 15 % of the start-up at
// 10,000 GSLB hostnames (doc/performance.md).
class CanonicalFeed {
  public:
    explicit CanonicalFeed(EVP_MD_CTX* ctx) : ctx_(ctx) {}

    void node(const toml::node& n) {
        switch (n.type()) {
            case toml::node_type::table: {
                const toml::table& t = *n.as_table();
                tagged('T', fmt::format_to_n(num_, sizeof num_, "{}", t.size()).size);
                for (const auto& [k, v] : t) {
                    text('K', k.str());
                    node(v);
                }
                break;
            }
            case toml::node_type::array: {
                const toml::array& a = *n.as_array();
                tagged('A', fmt::format_to_n(num_, sizeof num_, "{}", a.size()).size);
                for (const toml::node& v : a) node(v);
                break;
            }
            case toml::node_type::string:
                text('S', n.as_string()->get());
                break;
            case toml::node_type::integer:
                tagged('I', fmt::format_to_n(num_, sizeof num_, "{}", n.as_integer()->get()).size);
                break;
            case toml::node_type::floating_point:
                // {} is the shortest text that reads back as the same double (and "nan", "inf", "-inf").
                tagged('F', fmt::format_to_n(num_, sizeof num_, "{}", n.as_floating_point()->get()).size);
                break;
            case toml::node_type::boolean:
                tagged('B', fmt::format_to_n(num_, sizeof num_, "{}", int(n.as_boolean()->get())).size);
                break;
            case toml::node_type::date:
                tagged('d', dateText(n.as_date()->get(), num_));
                break;
            case toml::node_type::time:
                tagged('t', timeText(n.as_time()->get(), num_));
                break;
            case toml::node_type::date_time: {
                const toml::date_time& dt = n.as_date_time()->get();
                size_t len = dateText(dt.date, num_);
                num_[len++] = 'T';
                len += timeText(dt.time, num_ + len);
                if (dt.offset)
                    len += fmt::format_to_n(num_ + len, sizeof num_ - len, "{:+}", dt.offset->minutes).size;
                tagged('D', len);
                break;
            }
            default:
                tagged('?', 0);
                break;
        }
    }

  private:
    static size_t dateText(const toml::date& d, char* out) {
        return fmt::format_to_n(out, 16, "{:04}-{:02}-{:02}", d.year, d.month, d.day).size;
    }
    static size_t timeText(const toml::time& t, char* out) {
        return fmt::format_to_n(out, 24, "{:02}:{:02}:{:02}.{:09}", t.hour, t.minute, t.second, t.nanosecond)
            .size;
    }
    // `tag`, the length of num_'s first `len` bytes, ':', those bytes.
    void tagged(char tag, size_t len) { text(tag, std::string_view(num_, std::min(len, sizeof num_))); }
    void text(char tag, std::string_view v) {
        char head[24];
        auto n = fmt::format_to_n(head, sizeof head, "{}{}:", tag, v.size()).size;
        EVP_DigestUpdate(ctx_, head, std::min(n, sizeof head));
        EVP_DigestUpdate(ctx_, v.data(), v.size());
    }

    EVP_MD_CTX* ctx_;
    char num_[64];
};

}  // namespace

std::string canonicalTomlDigest(toml::table& root) {
    erase(root, "server", "listen");
    // A host's own directory: two members on one host must have two (the new-user trial's lab showed a
    // difference that was only that).
    erase(root, "server", "state_dir");
    erase(root, "control", "listen");
    erase(root, "cluster", "self");
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return {};
    CanonicalFeed(ctx.get()).node(root);
    return hexOf(ctx.get());
}

std::string configDigest(const Config& c) {
    if (c.tomlDigest.empty()) return {};
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return {};
    // Each part with its length first, so no two different sets of parts hash the same.
    auto add = [&](const std::string& part) {
        std::string len = fmt::format("{}:", part.size());
        EVP_DigestUpdate(ctx.get(), len.data(), len.size());
        EVP_DigestUpdate(ctx.get(), part.data(), part.size());
    };
    add(c.tomlDigest);
    for (const auto& z : c.zones) {
        std::string bytes, error;
        if (z.catalog) {  // built from the config alone, which is hashed already
            add(z.name);
            continue;
        }
        if (!zones::readFile(z.file, bytes, error)) return {};
        add(z.name);
        add(bytes);
    }
    return hexOf(ctx.get());
}

}  // namespace gslb::server
