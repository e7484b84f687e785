#include "io/io.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <istream>
#include <stdexcept>
#include <sstream>
#include <string_view>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <png.h>

#include "nbody/errors.hpp"
#include "nbody/generator.hpp"

namespace nbody {

const std::vector<std::string>& field_names(int dim) {
    static const std::vector<std::string> two = {"x", "y", "vx", "vy", "m"};
    static const std::vector<std::string> three = {"x", "y", "z", "vx", "vy", "vz", "m"};
    return dim == 3 ? three : two;
}

std::string joined_field_names(int dim) {
    std::string out;
    for (const auto& name : field_names(dim)) out += (out.empty() ? "" : ",") + name;
    return out;
}

namespace {

std::string_view trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(" \t\r");
    return text.substr(first, last - first + 1);
}

[[noreturn]] void fail(const std::string& name, std::size_t line, const std::string& what) {
    throw InputError(name + ":" + std::to_string(line) + ": " + what);
}

template <class Real>
constexpr const char* range_name() {
    return sizeof(Real) == sizeof(float) ? "float32" : "float64";
}

// `path` opened for reading (`shown`: as messages print it); InputError for an empty path, a folder
// or a file that cannot be opened.
std::ifstream open_input(const std::string& path, const std::string& shown) {
    if (path.empty()) throw InputError("an empty path names no input file");
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputError(shown + ": is a directory, not an input file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(shown + ": cannot open input file: " + std::strerror(errno));
    return in;
}

// Reads the next line (without its '\n') into `line`; false at the end of the input. A line longer
// than kMaxInputLineBytes is an error before it is held in memory (a binary file, /dev/zero).
bool next_line(std::istream& in, std::string& line, const std::string& name, std::size_t line_number) {
    line.clear();
    std::streambuf* buffer = in.rdbuf();
    for (;;) {
        const int c = buffer->sbumpc();
        if (c == std::char_traits<char>::eof()) return !line.empty();
        if (c == '\n') return true;
        if (line.size() == kMaxInputLineBytes)
            fail(name, line_number, "line longer than " + std::to_string(kMaxInputLineBytes) + " bytes: not a CSV state file");
        line.push_back(static_cast<char>(c));
    }
}

template <class Real>
Real parse_field(const std::string& name, std::size_t line, std::size_t field, int dim, std::string_view text) {
    const std::string where = "field " + std::to_string(field + 1) + " (" + field_names(dim)[field] + ")";
    Real value = 0;
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    if (begin != end && *begin == '+') {
        ++begin;  // from_chars rejects a leading '+'; a second sign after it is not a number
        if (begin != end && (*begin == '+' || *begin == '-')) fail(name, line, where + ": " + quoted_excerpt(text) + " is not a number");
    }
    const auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec == std::errc::result_out_of_range)
        fail(name, line, where + ": " + quoted_excerpt(text) + " is out of " + range_name<Real>() + " range");
    if (ec != std::errc() || ptr != end) fail(name, line, where + ": " + quoted_excerpt(text) + " is not a number");
    if (!std::isfinite(value)) fail(name, line, where + ": " + quoted_excerpt(text) + " is not finite");
    if (field + 1 == field_names(dim).size() && !(value > Real(0)))
        fail(name, line, where + ": mass must be positive, got " + quoted_excerpt(text));
    return value;
}

}  // namespace

namespace {

bool is_control(unsigned char byte) { return byte < 0x20 || byte == 0x7f; }

void append_escaped(std::string& out, unsigned char byte) {
    char escaped[5];
    std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
    out += escaped;
}

}  // namespace

std::string quoted_excerpt(std::string_view text, std::size_t max_chars) {
    std::string out = "'";
    std::size_t shown = 0;
    for (const char c : text) {
        if (shown == max_chars) {
            return out + "...' (" + std::to_string(text.size()) + " bytes)";
        }
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte >= 0x7f || c == '\'' || c == '\\')
            append_escaped(out, byte);
        else
            out.push_back(c);
        ++shown;
    }
    return out + "'";
}

std::string display_path(std::string_view path) {
    if (std::none_of(path.begin(), path.end(), [](char c) { return is_control(static_cast<unsigned char>(c)); }))
        return std::string(path);
    std::string out = "'";
    for (const char c : path) {
        const auto byte = static_cast<unsigned char>(c);
        if (is_control(byte) || c == '\'' || c == '\\')
            append_escaped(out, byte);
        else
            out.push_back(c);
    }
    return out + "'";
}

std::string one_line(std::string_view text) {
    std::string out;
    for (const char c : text) {
        if (is_control(static_cast<unsigned char>(c)))
            append_escaped(out, static_cast<unsigned char>(c));
        else
            out.push_back(c);
    }
    return out;
}

std::optional<std::uint64_t> parse_decimal(std::string_view text, std::uint64_t min, std::uint64_t max) {
    if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < min || value > max) return std::nullopt;
    return value;
}

template <class Real>
BodiesT<Real> read_bodies_csv_of(std::istream& in, const std::string& name, std::optional<std::size_t> expected_n,
                                 std::uint64_t seed, int dim) {
    if (dim != 2 && dim != 3) throw std::logic_error("read_bodies_csv_of: dim must be 2 or 3");
    const std::size_t field_count = field_names(dim).size();
    const std::size_t max_bodies = expected_n.value_or(kMaxInputBodies);
    // Values by field, and which fields each body gives (bit f set: field f was not empty).
    std::vector<std::vector<Real>> columns(field_count);
    std::vector<std::uint8_t> given;
    std::size_t bodies = 0;  // body lines seen, also past max_bodies (counted, not stored)
    std::string raw;
    std::size_t line_number = 0;
    while (next_line(in, raw, name, line_number + 1)) {
        ++line_number;
        std::string_view text = raw;
        if (line_number == 1) {
            // A UTF-8 byte-order mark (spreadsheets write one) is not part of the first field.
            if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
            if (text.substr(0, 2) == "\xFF\xFE" || text.substr(0, 2) == "\xFE\xFF")
                fail(name, line_number, "the file is UTF-16 (byte-order mark " + quoted_excerpt(text.substr(0, 2)) +
                                            "): save it as ASCII or UTF-8");
        }
        text = trim(text);
        if (text.empty() || text.front() == '#') continue;
        if (text.find('\r') != std::string_view::npos)
            fail(name, line_number, "a carriage return inside the line: lines must end in LF or CRLF");
        ++bodies;
        if (bodies > max_bodies) continue;  // too many: counted for the message below
        const std::size_t fields = static_cast<std::size_t>(std::count(text.begin(), text.end(), ',')) + 1;
        if (fields != field_count)
            fail(name, line_number, "expected " + std::to_string(field_count) + " fields " + joined_field_names(dim) +
                                        " (--dim " + std::to_string(dim) + "), found " + std::to_string(fields));
        std::uint8_t present = 0;
        std::size_t start = 0;
        for (std::size_t f = 0; f < field_count; ++f) {
            const std::size_t comma = std::min(text.find(',', start), text.size());
            const std::string_view field = trim(text.substr(start, comma - start));
            columns[f].push_back(field.empty() ? Real(0) : parse_field<Real>(name, line_number, f, dim, field));
            if (!field.empty()) present |= static_cast<std::uint8_t>(1u << f);
            start = comma + 1;
        }
        given.push_back(present);
    }
    if (in.bad()) throw InputError(name + ": read error: " + std::strerror(errno));
    if (bodies == 0) throw InputError(name + ": contains no bodies");
    if (expected_n && bodies != *expected_n)
        throw InputError(name + ": holds " + std::to_string(bodies) + " bodies but N = " + std::to_string(*expected_n) +
                         " was asked for");
    if (bodies > max_bodies)
        throw InputError(name + ": holds " + std::to_string(bodies) + " bodies, more than the largest N (" +
                         std::to_string(kMaxInputBodies) + ")");

    const std::size_t n = bodies;
    const Real default_mass = Real(1) / static_cast<Real>(n);
    BodiesT<Real> out(n, dim);
    const auto has = [&](std::size_t i, int f) { return (given[i] >> f) & 1u; };
    for (std::size_t i = 0; i < n; ++i) {
        for (int axis = 0; axis < dim; ++axis) {
            out.position(axis)[i] = has(i, axis) ? columns[axis][i] : Real(generated_coordinate(seed, i, dim, axis));
            out.velocity(axis)[i] = columns[dim + axis][i];  // 0 where empty
        }
        out.m[i] = has(i, 2 * dim) ? columns[2 * dim][i] : default_mass;
    }
    return out;
}

template <class Real>
BodiesT<Real> read_bodies_csv_of(const std::string& path, std::optional<std::size_t> expected_n, std::uint64_t seed,
                                 int dim) {
    const std::string shown = display_path(path);
    std::ifstream in = open_input(path, shown);
    return read_bodies_csv_of<Real>(in, shown, expected_n, seed, dim);
}

#define NBODY_INSTANTIATE_READER(Real)                                                                                  \
    template BodiesT<Real> read_bodies_csv_of<Real>(std::istream&, const std::string&, std::optional<std::size_t>,  \
                                                    std::uint64_t, int);                                            \
    template BodiesT<Real> read_bodies_csv_of<Real>(const std::string&, std::optional<std::size_t>, std::uint64_t, int);
NBODY_INSTANTIATE_READER(float)
NBODY_INSTANTIATE_READER(double)
#undef NBODY_INSTANTIATE_READER

HostState read_state_csv(const std::string& path, const Workload& workload, std::optional<std::size_t> expected_n,
                         std::uint64_t seed) {
    return make_host_state(workload.precision, [&]<class Real>() {
        return read_bodies_csv_of<Real>(path, expected_n, seed, workload.dim);
    });
}

int csv_state_dim(const std::string& path) {
    const std::string shown = display_path(path);
    std::ifstream in = open_input(path, shown);
    std::string raw;
    std::size_t line_number = 0;
    while (next_line(in, raw, shown, line_number + 1)) {
        ++line_number;
        std::string_view text = raw;
        if (line_number == 1 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
        text = trim(text);
        if (text.empty() || text.front() == '#') continue;
        const std::size_t fields = static_cast<std::size_t>(std::count(text.begin(), text.end(), ',')) + 1;
        if (fields == field_names(2).size()) return 2;
        if (fields == field_names(3).size()) return 3;
        fail(shown, line_number, "expected 5 fields " + joined_field_names(2) + " (2D) or 7 fields " + joined_field_names(3) +
                                    " (3D), found " + std::to_string(fields));
    }
    throw InputError(shown + ": contains no bodies");
}

}  // namespace nbody
