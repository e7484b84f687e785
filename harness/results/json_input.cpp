#include "results/json_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <vector>

#include "io/io.hpp"
#include "nbody/errors.hpp"

namespace nbody {

namespace {

using nlohmann::json;

// Where the parser is, as a JSON pointer, and the keys each open object has had so far.
class OpenContainers {
public:
    explicit OpenContainers(const std::string& name) : name_(name) {}

    bool on_event(int depth, json::parse_event_t event, const json& parsed) {
        switch (event) {
            case json::parse_event_t::object_start:
            case json::parse_event_t::array_start:
                element_begins();
                if (depth >= kMaxJsonDepth)
                    throw InputError(fmt::format("{}: {}: nested deeper than {} levels", name_, pointer(), kMaxJsonDepth));
                open_.push_back({event == json::parse_event_t::array_start, -1, {}, {}});
                break;
            case json::parse_event_t::object_end:
            case json::parse_event_t::array_end:
                open_.pop_back();
                break;
            case json::parse_event_t::key: {
                Container& object = open_.back();
                object.key = parsed.get<std::string>();
                if (!object.keys.insert(object.key).second)
                    throw InputError(fmt::format("{}: {}: key {} appears twice in one object", name_, pointer(),
                                                 json_text_excerpt(object.key)));
                break;
            }
            case json::parse_event_t::value:
                element_begins();
                break;
        }
        return true;
    }

private:
    struct Container {
        bool array;
        long index;  // arrays: the element being read
        std::string key;  // objects: the member being read
        std::set<std::string> keys;
    };

    void element_begins() {
        if (!open_.empty() && open_.back().array) ++open_.back().index;
    }

    std::string pointer() const {
        std::string out;
        for (const Container& c : open_) {
            if (c.array && c.index < 0) break;
            out += "/";
            if (c.array) {
                out += std::to_string(c.index);
            } else {
                for (const char ch : c.key.substr(0, 40)) out += ch == '/' ? "~1" : ch == '~' ? "~0" : std::string(1, ch);
            }
        }
        return json_text_excerpt(out.empty() ? "/" : out);
    }

    const std::string& name_;
    std::vector<Container> open_;
};

// Line and column (from 1) of byte offset `byte` of `text`.
std::pair<std::size_t, std::size_t> line_and_column(std::string_view text, std::size_t byte) {
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return {line, column};
}

// nlohmann's message without its "[json.exception...] parse error at line L, column C: " prefix.
std::string reason_of(const std::string& what) {
    std::string reason = what;
    if (const auto bracket = reason.find("] "); bracket != std::string::npos) reason = reason.substr(bracket + 2);
    if (const auto colon = reason.find(": "); reason.rfind("parse error", 0) == 0 && colon != std::string::npos)
        reason = reason.substr(colon + 2);
    std::string clean;  // the "last read" part holds the file's own bytes: printable ASCII only
    for (const char c : reason.substr(0, 160)) {
        const auto byte = static_cast<unsigned char>(c);
        clean += byte < 0x20 ? std::string(" ") : byte >= 0x7f ? fmt::format("\\x{:02x}", byte) : std::string(1, c);
    }
    return clean;
}

}  // namespace

std::string json_text_excerpt(std::string_view text) {
    std::size_t shown = std::min<std::size_t>(text.size(), 60);
    while (shown > 0 && shown < text.size() && (static_cast<unsigned char>(text[shown]) & 0xC0) == 0x80) --shown;  // whole UTF-8 characters
    std::string out = "\"";
    for (std::size_t i = 0; i < shown; ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if (byte < 0x20 || byte == 0x7f || text[i] == '"' || text[i] == '\\')
            out += fmt::format("\\x{:02x}", byte);
        else
            out.push_back(text[i]);
    }
    out += "\"";
    if (text.size() > shown) out += fmt::format("... ({} bytes)", text.size());
    return out;
}

json parse_json_text(std::string_view text, const std::string& name) {
    OpenContainers containers(name);
    try {
        return json::parse(
            text.begin(), text.end(),
            [&containers](int depth, json::parse_event_t event, json& parsed) { return containers.on_event(depth, event, parsed); });
    } catch (const json::parse_error& e) {
        const auto [line, column] = line_and_column(text, e.byte == 0 ? 0 : e.byte - 1);
        throw InputError(fmt::format("{}: not valid JSON at line {}, column {}: {}", name, line, column, reason_of(e.what())));
    } catch (const json::exception& e) {  // e.g. a number beyond the double range
        throw InputError(fmt::format("{}: not valid JSON: {}", name, reason_of(e.what())));
    }
}

json read_json_file(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": is a directory, not a JSON file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
    std::string text;
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        text.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (text.size() > kMaxJsonFileBytes)
            throw InputError(fmt::format("{}: larger than {} bytes: not a file of this suite", path, kMaxJsonFileBytes));
    }
    if (in.bad()) throw InputError(path + ": read error: " + std::strerror(errno));
    return parse_json_text(text, path);
}

}  // namespace nbody
