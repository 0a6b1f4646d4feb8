// Prometheus text 0.0.4 / OpenMetrics parser. Rules and limits in exposition.hpp. Every index is checked
// against the end of the line before it is read; there is no recursion and no allocation beyond `out`.
#include "metrics/sources/exposition.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace gslb::metrics::sources {

namespace {

bool labelStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool labelChar(char c) {
    return labelStart(c) || (c >= '0' && c <= '9');
}

// Parses a float in Go's strconv forms: "1", "-1.5e3", "+Inf", "-Inf", "Inf", "NaN".
bool parseValue(std::string_view s, double& out) {
    if (s.empty()) return false;
    if (s == "+Inf" || s == "Inf" || s == "+inf" || s == "inf") {
        out = INFINITY;
        return true;
    }
    if (s == "-Inf" || s == "-inf") {
        out = -INFINITY;
        return true;
    }
    if (s == "NaN" || s == "nan") {
        out = NAN;
        return true;
    }
    std::string_view body = s;
    if (body[0] == '+') body.remove_prefix(1);
    if (body.empty()) return false;
    // from_chars also takes "inf"/"nan" spellings and hex floats under other flags; general format only
    // takes decimal. Refuse what Go's strconv would not print: a second sign.
    if (body[0] == '+' || (body[0] == '-' && s[0] == '+')) return false;
    const char* end = body.data() + body.size();
    auto r = std::from_chars(body.data(), end, out, std::chars_format::general);
    return r.ec == std::errc() && r.ptr == end;
}

class LineParser {
  public:
    LineParser(std::string_view line, const Limits& limits) : s_(line), limits_(limits) {}

    // Parses one sample line into `out` (name, labels, value) when `store`, else only checks it.
    bool sample(Sample& out, bool store, std::string& why) {
        std::size_t start = p_;
        if (p_ >= s_.size() || !metricNameStart(s_[p_]))
            return fail(why, "a metric name must start the line");
        while (p_ < s_.size() && metricNameChar(s_[p_])) ++p_;
        if (store) out.name.assign(s_.substr(start, p_ - start));
        if (p_ < s_.size() && s_[p_] == '{') {
            ++p_;
            if (!labels(out, store, why)) return false;
        }
        if (p_ >= s_.size() || (s_[p_] != ' ' && s_[p_] != '\t'))
            return fail(why, "expected a space and a value");
        skipSpaces();
        std::size_t v0 = p_;
        while (p_ < s_.size() && s_[p_] != ' ' && s_[p_] != '\t') ++p_;
        double v = 0;
        if (!parseValue(s_.substr(v0, p_ - v0), v))
            return fail(why, fmt::format("\"{}\" is not a number", clip(s_.substr(v0, p_ - v0))));
        if (store) out.value = v;
        skipSpaces();
        if (p_ >= s_.size()) return true;
        if (s_[p_] != '#') {
            // A timestamp (ms in 0.0.4, s in OpenMetrics): checked, not used.
            std::size_t t0 = p_;
            while (p_ < s_.size() && s_[p_] != ' ' && s_[p_] != '\t') ++p_;
            double ts = 0;
            if (!parseValue(s_.substr(t0, p_ - t0), ts) || !std::isfinite(ts))
                return fail(why, fmt::format("\"{}\" is not a timestamp", clip(s_.substr(t0, p_ - t0))));
            skipSpaces();
        }
        if (p_ >= s_.size()) return true;
        // OpenMetrics exemplar: " # {labels} value [timestamp]" — skipped.
        if (s_[p_] == '#') return true;
        return fail(why, "unexpected text after the value");
    }

  private:
    bool labels(Sample& out, bool store, std::string& why) {
        std::size_t count = 0;
        for (;;) {
            skipSpaces();
            if (p_ >= s_.size()) return fail(why, "unterminated label set");
            if (s_[p_] == '}') {
                ++p_;
                return true;
            }
            if (!labelStart(s_[p_])) return fail(why, "a label name must start with a letter or _");
            std::size_t n0 = p_;
            while (p_ < s_.size() && labelChar(s_[p_])) ++p_;
            std::string_view name = s_.substr(n0, p_ - n0);
            skipSpaces();
            if (p_ >= s_.size() || s_[p_] != '=') return fail(why, "expected = after a label name");
            ++p_;
            skipSpaces();
            if (p_ >= s_.size() || s_[p_] != '"') return fail(why, "a label value must be quoted");
            ++p_;
            std::string value;
            bool closed = false;
            while (p_ < s_.size()) {
                char c = s_[p_++];
                if (c == '"') {
                    closed = true;
                    break;
                }
                if (c == '\\') {
                    if (p_ >= s_.size()) break;
                    char e = s_[p_++];
                    if (e == 'n')
                        c = '\n';
                    else if (e == '\\' || e == '"')
                        c = e;
                    else
                        return fail(why, "bad escape in a label value (\\\\, \\\" or \\n)");
                }
                if (store) value += c;
            }
            if (!closed) return fail(why, "unterminated label value");
            if (++count > limits_.maxLabels)
                return fail(why, fmt::format("more than {} labels", limits_.maxLabels));
            if (store) out.labels.emplace_back(std::string(name), std::move(value));
            skipSpaces();
            if (p_ < s_.size() && s_[p_] == ',') {
                ++p_;
                continue;
            }
            if (p_ < s_.size() && s_[p_] == '}') continue;
            return fail(why, "expected , or } after a label");
        }
    }

    void skipSpaces() {
        while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\t')) ++p_;
    }
    static std::string clip(std::string_view v) {
        std::string out;
        for (char c : v.substr(0, 40)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
        return out;
    }
    static bool fail(std::string& why, std::string msg) {
        why = std::move(msg);
        return false;
    }

    std::string_view s_;
    const Limits& limits_;
    std::size_t p_ = 0;
};

}  // namespace

bool parseExposition(std::string_view text, const Limits& limits,
                     const std::function<bool(std::string_view name)>& wanted, std::vector<Sample>& out,
                     ParseStats& stats, std::string& error) {
    stats = ParseStats{};
    if (text.size() > limits.maxBytes) {
        error = fmt::format("body larger than {} bytes", limits.maxBytes);
        return false;
    }
    std::size_t pos = 0, lineNo = 0;
    while (pos < text.size()) {
        ++lineNo;
        std::size_t nl = text.find('\n', pos);
        std::size_t end = nl == std::string_view::npos ? text.size() : nl;
        std::string_view line = text.substr(pos, end - pos);
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.size() > limits.maxLineLength) {
            error = fmt::format("line {}: longer than {} bytes", lineNo, limits.maxLineLength);
            return false;
        }
        if (line.empty()) continue;
        if (line[0] == '#') {
            if (line == "# EOF") return true;  // OpenMetrics: nothing after it counts
            continue;
        }
        if (++stats.series > limits.maxSeries) {
            error = fmt::format("more than {} series", limits.maxSeries);
            return false;
        }
        // The name decides whether to store; it is the run of name characters at the start.
        std::size_t n = 0;
        while (n < line.size() && metricNameChar(line[n])) ++n;
        const bool store = !wanted || wanted(line.substr(0, n));
        Sample s;
        std::string why;
        LineParser lp(line, limits);
        if (!lp.sample(s, store, why)) {
            error = fmt::format("line {}: {}", lineNo, why);
            return false;
        }
        if (store) {
            out.push_back(std::move(s));
            ++stats.kept;
        }
    }
    return true;
}

}  // namespace gslb::metrics::sources
