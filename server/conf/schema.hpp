// A small declarative reader over toml++ tables (doc/design.md "Principles" 8): each get* call declares a key
// with its type, range and default; finish() rejects every key that was not declared. Errors are ConfigError
// exceptions carrying "file:line: path: message" (load time only, never on the query path).
#pragma once
#include <fmt/format.h>
#include <toml++/toml.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace gslb::server {

struct ConfigError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class TableReader {
  public:
    TableReader(const toml::table& t, std::string file, std::string path)
        : t_(t), file_(std::move(file)), path_(std::move(path)) {}

    [[noreturn]] void fail(const toml::node* n, const std::string& key, const std::string& msg) const {
        int line = n ? int(n->source().begin.line) : int(t_.source().begin.line);
        std::string where = join(key);
        if (where.empty()) throw ConfigError(fmt::format("{}:{}: {}", file_, line, msg));
        throw ConfigError(fmt::format("{}:{}: {}: {}", file_, line, where, msg));
    }
    std::string join(const std::string& key) const {
        if (path_.empty()) return key;
        return key.empty() ? path_ : path_ + " " + key;
    }
    int line() const { return int(t_.source().begin.line); }
    const std::string& file() const { return file_; }
    const std::string& path() const { return path_; }
    const toml::table& table() const { return t_; }

    const toml::node* raw(const std::string& key) {
        known_.insert(key);
        return t_.get(key);
    }
    bool has(const std::string& key) const { return t_.contains(key); }

    int64_t getInt(const std::string& key, int64_t def, int64_t lo, int64_t hi) {
        const toml::node* n = raw(key);
        if (!n) return def;
        // Only an integer node is read as one: value<int64_t>() converts a float such as 1e32 to int64 first,
        // which is undefined behaviour when it does not fit (UBSan, found by tests/fuzz/fuzz_config).
        if (!n->is_integer()) fail(n, key, "must be an integer");
        auto v = n->value<int64_t>();
        if (!v) fail(n, key, "must be an integer");
        if (*v < lo || *v > hi) fail(n, key, fmt::format("{} is out of range [{}, {}]", *v, lo, hi));
        return *v;
    }
    double getNumber(const std::string& key, double def, double lo, double hi) {
        const toml::node* n = raw(key);
        if (!n) return def;
        if (!n->is_number()) fail(n, key, "must be a number");
        double v = n->value<double>().value_or(0);
        if (!(v >= lo && v <= hi)) fail(n, key, fmt::format("{} is out of range [{}, {}]", v, lo, hi));
        return v;
    }
    std::string getString(const std::string& key, const std::string& def) {
        const toml::node* n = raw(key);
        if (!n) return def;
        if (!n->is_string()) fail(n, key, "must be a string");
        return *n->value<std::string>();
    }
    bool getBool(const std::string& key, bool def) {
        const toml::node* n = raw(key);
        if (!n) return def;
        if (!n->is_boolean()) fail(n, key, "must be true or false");
        return *n->value<bool>();
    }
    std::vector<std::string> getStrings(const std::string& key, const std::vector<std::string>& def) {
        const toml::node* n = raw(key);
        if (!n) return def;
        const toml::array* a = n->as_array();
        if (!a) fail(n, key, "must be an array of strings");
        std::vector<std::string> out;
        for (const auto& e : *a) {
            if (!e.is_string()) fail(&e, key, "must be an array of strings");
            out.push_back(*e.value<std::string>());
        }
        return out;
    }
    const toml::table* getTable(const std::string& key) {
        const toml::node* n = raw(key);
        if (!n) return nullptr;
        if (!n->is_table()) fail(n, key, "must be a table");
        return n->as_table();
    }

    /// The tables [SECTION.NAME] under the key `key` (SECTION is "load.metric" for the key metric of [load]):
    /// fn(name, reader) for each, the reader's path "[SECTION.NAME]"; an entry that is not a table fails
    /// with "KEY.NAME must be a table".
    template <class F>
    void forEachTable(const std::string& key, const std::string& section, F&& fn) {
        const toml::table* all = getTable(key);
        if (!all) return;
        for (const auto& [k, v] : *all) {
            std::string name(k.str());
            const toml::table* t = v.as_table();
            if (!t) fail(&v, key, fmt::format("{}.{} must be a table", key, name));
            TableReader r(*t, file_, fmt::format("[{}.{}]", section, name));
            fn(name, r);
        }
    }

    /// Every key not declared by a get* call is an error naming it.
    void finish() const {
        for (const auto& [k, v] : t_)
            if (!known_.count(std::string(k.str()))) fail(&v, "", fmt::format("unknown key \"{}\"", k.str()));
    }

  private:
    const toml::table& t_;
    std::string file_;
    std::string path_;
    std::set<std::string> known_;
};

}  // namespace gslb::server
