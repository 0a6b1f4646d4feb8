#include "tools/gslbctl/tomltext.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <functional>

namespace gslb::ctl {
namespace {

std::vector<std::string_view> splitLines(const std::string& text) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < text.size()) {
        size_t eol = text.find('\n', i);
        if (eol == std::string::npos) eol = text.size() - 1;
        out.emplace_back(text.data() + i, eol - i + 1);
        i = eol + 1;
    }
    return out;
}

std::string_view trimmed(std::string_view l) {
    size_t a = 0;
    while (a < l.size() && isspace(static_cast<unsigned char>(l[a]))) ++a;
    size_t b = l.size();
    while (b > a && isspace(static_cast<unsigned char>(l[b - 1]))) --b;
    return l.substr(a, b - a);
}

}  // namespace

bool tomlHeaderLines(const std::string& text, const std::string& path, std::vector<int>& lines,
                     std::string& error) {
    toml::table root;
    try {
        root = toml::parse(text, path);
    } catch (const toml::parse_error& e) {
        error = fmt::format("{}:{}: {}", path, e.source().begin.line, e.description());
        return false;
    }
    auto lv = splitLines(text);
    std::vector<int> out;
    std::function<void(const toml::node&)> walk = [&](const toml::node& n) {
        if (const toml::table* t = n.as_table()) {
            if (!t->is_inline()) {
                int l = int(t->source().begin.line);
                if (l >= 1 && size_t(l) <= lv.size() && !trimmed(lv[size_t(l) - 1]).empty() &&
                    trimmed(lv[size_t(l) - 1])[0] == '[')
                    out.push_back(l);
            }
            for (const auto& [k, v] : *t) walk(v);
        } else if (const toml::array* a = n.as_array()) {
            for (const auto& e : *a) walk(e);
        }
    };
    for (const auto& [k, v] : root) walk(v);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    lines = std::move(out);
    return true;
}

std::pair<int, int> tomlBlock(const std::string& text, const std::vector<int>& headers, int header) {
    auto lv = splitLines(text);
    int last = int(lv.size());
    for (int h : headers)
        if (h > header) {
            last = h - 1;
            break;
        }
    while (last > header) {
        auto t = trimmed(lv[size_t(last) - 1]);
        if (!t.empty() && t[0] != '#') break;
        --last;
    }
    return {header, last};
}

std::string removeLines(const std::string& text, int first, int last) {
    auto lv = splitLines(text);
    std::string out;
    for (size_t i = 0; i < lv.size(); ++i)
        if (int(i) + 1 < first || int(i) + 1 > last) out.append(lv[i]);
    return out;
}

std::string insertAfterLine(const std::string& text, int line, const std::string& insert) {
    auto lv = splitLines(text);
    std::string out;
    for (size_t i = 0; i < lv.size() && int(i) < line; ++i) out.append(lv[i]);
    if (!out.empty() && out.back() != '\n') out += '\n';
    out += insert;
    for (size_t i = size_t(std::max(line, 0)); i < lv.size(); ++i) out.append(lv[i]);
    return out;
}

std::string tomlQuote(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

bool replaceZoneValue(const std::string& text, size_t index, const std::string& key, const std::string& value,
                      std::string& out) {
    toml::table root;
    try {
        root = toml::parse(text);
    } catch (const toml::parse_error&) {
        return false;
    }
    const toml::node* n = root["zone"][index][key].node();
    if (!n || !n->is_string()) return false;
    const auto& src = n->source();
    if (src.begin.line != src.end.line) return false;
    auto lv = splitLines(text);
    size_t off = 0;
    for (size_t i = 0; i + 1 < src.begin.line && i < lv.size(); ++i) off += lv[i].size();
    size_t from = off + src.begin.column - 1, to = off + src.end.column - 1;
    if (to > text.size() || from >= to) return false;
    out = text;
    out.replace(from, to - from, tomlQuote(value));
    return true;
}

}  // namespace gslb::ctl
