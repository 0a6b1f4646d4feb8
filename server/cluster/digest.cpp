#include "server/cluster/digest.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <memory>
#include <sstream>

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

}  // namespace

std::string canonicalTomlDigest(toml::table& root) {
    erase(root, "server", "listen");
    // A host's own directory: two members on one host must have two (the new-user trial's lab showed a
    // difference that was only that).
    erase(root, "server", "state_dir");
    erase(root, "control", "listen");
    erase(root, "cluster", "self");
    std::ostringstream canon;
    canon << root;
    const std::string text = canon.str();
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) return {};
    EVP_DigestUpdate(ctx.get(), text.data(), text.size());
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
        if (!zones::readFile(z.file, bytes, error)) return {};
        add(z.name);
        add(bytes);
    }
    return hexOf(ctx.get());
}

}  // namespace gslb::server
