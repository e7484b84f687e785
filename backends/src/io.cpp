#include "nbody/io.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <unistd.h>

#include "nbody/errors.hpp"
#include "nbody/generator.hpp"

namespace nbody {

namespace {

// Field names in file order, by dimension.
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

std::string trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(" \t\r");
    return std::string(text.substr(first, last - first + 1));
}

template <class Real>
struct ParsedLine {
    std::size_t line_number;
    std::vector<std::optional<Real>> fields;
};

[[noreturn]] void fail(const std::string& path, std::size_t line, const std::string& what) {
    throw InputError(path + ":" + std::to_string(line) + ": " + what);
}

template <class Real>
constexpr const char* range_name() {
    return sizeof(Real) == sizeof(float) ? "float32" : "float64";
}

template <class Real>
Real parse_field(const std::string& path, std::size_t line, std::size_t field, int dim, const std::string& text) {
    const std::string where = "field " + std::to_string(field + 1) + " (" + field_names(dim)[field] + ")";
    Real value = 0;
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    if (!text.empty() && *begin == '+') ++begin;  // from_chars rejects a leading '+'
    const auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec == std::errc::result_out_of_range)
        fail(path, line, where + ": '" + text + "' is out of " + range_name<Real>() + " range");
    if (ec != std::errc() || ptr != end) fail(path, line, where + ": '" + text + "' is not a number");
    if (!std::isfinite(value)) fail(path, line, where + ": '" + text + "' is not finite");
    if (field + 1 == field_names(dim).size() && !(value > Real(0)))
        fail(path, line, where + ": mass must be positive, got '" + text + "'");
    return value;
}

}  // namespace

template <class Real>
BodiesT<Real> read_bodies_csv_of(const std::string& path, std::optional<std::size_t> expected_n, std::uint64_t seed,
                                 int dim) {
    std::ifstream in(path);
    if (!in) throw InputError(path + ": cannot open input file: " + std::strerror(errno));
    if (std::filesystem::is_directory(path)) throw InputError(path + ": is a directory, not an input file");

    const std::size_t field_count = field_names(dim).size();
    std::vector<ParsedLine<Real>> lines;
    std::string raw;
    std::size_t line_number = 0;
    while (std::getline(in, raw)) {
        ++line_number;
        const std::string text = trim(raw);
        if (text.empty() || text.front() == '#') continue;
        const std::size_t fields = static_cast<std::size_t>(std::count(text.begin(), text.end(), ',')) + 1;
        if (fields != field_count)
            fail(path, line_number, "expected " + std::to_string(field_count) + " fields " + joined_field_names(dim) +
                                        " (--dim " + std::to_string(dim) + "), found " + std::to_string(fields));
        ParsedLine<Real> parsed{line_number, std::vector<std::optional<Real>>(field_count)};
        std::size_t start = 0;
        for (std::size_t f = 0; f < field_count; ++f) {
            const std::size_t comma = text.find(',', start);
            const std::string field = trim(std::string_view(text).substr(start, comma - start));
            if (!field.empty()) parsed.fields[f] = parse_field<Real>(path, line_number, f, dim, field);
            start = comma + 1;
        }
        lines.push_back(std::move(parsed));
    }
    if (in.bad()) throw InputError(path + ": read error: " + std::strerror(errno));
    if (lines.empty()) throw InputError(path + ": contains no bodies");
    if (expected_n && lines.size() != *expected_n)
        throw InputError(path + ": holds " + std::to_string(lines.size()) + " bodies but N = " +
                         std::to_string(*expected_n) + " was asked for");

    const std::size_t n = lines.size();
    const Real default_mass = Real(1) / static_cast<Real>(n);
    BodiesT<Real> bodies(n, dim);
    for (std::size_t i = 0; i < n; ++i) {
        const auto& f = lines[i].fields;
        for (int axis = 0; axis < dim; ++axis) {
            bodies.position(axis)[i] = f[axis] ? *f[axis] : Real(generated_coordinate(seed, i, dim, axis));
            bodies.velocity(axis)[i] = f[dim + axis].value_or(Real(0));
        }
        bodies.m[i] = f[2 * dim].value_or(default_mass);
    }
    return bodies;
}

template BodiesT<float> read_bodies_csv_of<float>(const std::string&, std::optional<std::size_t>, std::uint64_t, int);
template BodiesT<double> read_bodies_csv_of<double>(const std::string&, std::optional<std::size_t>, std::uint64_t, int);

HostState read_state_csv(const std::string& path, const Workload& workload, std::optional<std::size_t> expected_n,
                         std::uint64_t seed) {
    if (workload.precision == Precision::fp32) return read_bodies_csv_of<float>(path, expected_n, seed, workload.dim);
    return read_bodies_csv_of<double>(path, expected_n, seed, workload.dim);
}

void write_file_atomically(const std::string& path, const std::string& contents) {
    const std::filesystem::path target(path);
    const std::filesystem::path temp =
        target.parent_path() / ("." + target.filename().string() + ".tmp" + std::to_string(::getpid()));
    {
        std::ofstream out(temp, std::ios::binary | std::ios::trunc);
        if (!out) throw UsageError(path + ": cannot write: " + std::strerror(errno));
        out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
        out.flush();
        if (!out) {
            std::error_code ignored;
            std::filesystem::remove(temp, ignored);
            throw UsageError(path + ": write failed: " + std::strerror(errno));
        }
    }
    std::error_code ec;
    std::filesystem::rename(temp, target, ec);
    if (ec) {
        std::filesystem::remove(temp, ec);
        throw UsageError(path + ": cannot move the finished file into place");
    }
}

namespace {
template <class Real>
std::string format_float(Real v) {
    std::array<char, 40> buffer{};
    const auto [ptr, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), v);  // shortest round-trip
    return std::string(buffer.data(), ptr);
}
}  // namespace

template <class Real>
void write_bodies_csv(const std::string& path, const BodiesT<Real>& bodies, const std::string& comment) {
    std::ostringstream out;
    if (!comment.empty()) out << "# " << comment << "\n";
    out << "# " << joined_field_names(bodies.dim) << "\n";
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        for (int axis = 0; axis < bodies.dim; ++axis) out << format_float(bodies.position(axis)[i]) << ',';
        for (int axis = 0; axis < bodies.dim; ++axis) out << format_float(bodies.velocity(axis)[i]) << ',';
        out << format_float(bodies.m[i]) << '\n';
    }
    write_file_atomically(path, out.str());
}

template void write_bodies_csv<float>(const std::string&, const BodiesT<float>&, const std::string&);
template void write_bodies_csv<double>(const std::string&, const BodiesT<double>&, const std::string&);

void write_state_csv(const std::string& path, const HostState& state, const std::string& comment) {
    std::visit([&](const auto& bodies) { write_bodies_csv(path, bodies, comment); }, state);
}

void write_activity_map_csv(const std::string& path, const std::vector<float>& map, int d) {
    std::ostringstream out;
    for (int row = 0; row < d; ++row) {
        for (int col = 0; col < d; ++col) {
            if (col) out << ',';
            out << format_float(map[static_cast<std::size_t>(row) * d + col]);
        }
        out << '\n';
    }
    write_file_atomically(path, out.str());
}

namespace {

std::uint32_t crc32(const unsigned char* data, std::size_t size, std::uint32_t crc = 0) {
    static const auto table = [] {
        std::array<std::uint32_t, 256> t{};
        for (std::uint32_t i = 0; i < 256; ++i) {
            std::uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[i] = c;
        }
        return t;
    }();
    crc = ~crc;
    for (std::size_t i = 0; i < size; ++i) crc = table[(crc ^ data[i]) & 0xFFu] ^ (crc >> 8);
    return ~crc;
}

void put_u32(std::string& s, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) s.push_back(static_cast<char>((v >> shift) & 0xFFu));
}

void put_chunk(std::string& png, const char* type, const std::string& data) {
    put_u32(png, static_cast<std::uint32_t>(data.size()));
    std::string body = std::string(type, 4) + data;
    png += body;
    put_u32(png, crc32(reinterpret_cast<const unsigned char*>(body.data()), body.size()));
}

// zlib stream of stored (uncompressed) deflate blocks: no compression library needed.
std::string zlib_stored(const std::string& raw) {
    std::string z = "\x78\x01";
    std::uint32_t a = 1, b = 0;
    for (unsigned char c : raw) {
        a = (a + c) % 65521u;
        b = (b + a) % 65521u;
    }
    std::size_t pos = 0;
    do {
        const std::size_t len = std::min<std::size_t>(65535, raw.size() - pos);
        const bool last = pos + len == raw.size();
        z.push_back(static_cast<char>(last ? 1 : 0));
        z.push_back(static_cast<char>(len & 0xFF));
        z.push_back(static_cast<char>(len >> 8));
        z.push_back(static_cast<char>(~len & 0xFF));
        z.push_back(static_cast<char>((~len >> 8) & 0xFF));
        z.append(raw, pos, len);
        pos += len;
    } while (pos < raw.size());
    put_u32(z, (b << 16) | a);
    return z;
}

// A perceptually ordered dark-to-bright colour ramp (approximates matplotlib's "inferno").
std::array<unsigned char, 3> heat_colour(double t) {
    static constexpr double stops[][3] = {
        {0, 0, 4}, {40, 11, 84}, {101, 21, 110}, {159, 42, 99}, {212, 72, 66}, {245, 125, 21}, {250, 193, 39}, {252, 255, 164}};
    t = std::clamp(t, 0.0, 1.0) * 7.0;
    const int k = std::min(static_cast<int>(t), 6);
    const double f = t - k;
    std::array<unsigned char, 3> rgb{};
    for (int c = 0; c < 3; ++c)
        rgb[c] = static_cast<unsigned char>(std::lround(stops[k][c] + f * (stops[k + 1][c] - stops[k][c])));
    return rgb;
}

}  // namespace

void write_activity_map_png(const std::string& path, const std::vector<float>& map, int d, int max_pixels) {
    // Pool cells into blocks when D exceeds the image size; enlarge cells when D is small.
    const int pool = std::max(1, (d + max_pixels - 1) / max_pixels);
    const int pooled = (d + pool - 1) / pool;
    const int cell_pixels = std::max(1, 512 / pooled);
    const int side = pooled * cell_pixels;
    std::vector<double> value(static_cast<std::size_t>(pooled) * pooled, 0.0);
    for (int row = 0; row < d; ++row)
        for (int col = 0; col < d; ++col)
            value[static_cast<std::size_t>(row / pool) * pooled + col / pool] += map[static_cast<std::size_t>(row) * d + col];
    const double peak = *std::max_element(value.begin(), value.end());
    std::string raw;
    raw.reserve(static_cast<std::size_t>(side) * (3 * side + 1));
    for (int y = 0; y < side; ++y) {
        raw.push_back('\0');  // filter: none
        const int row = pooled - 1 - y / cell_pixels;  // row 0 (y near 0) at the bottom, as on a plot
        for (int x = 0; x < side; ++x) {
            const double v = value[static_cast<std::size_t>(row) * pooled + x / cell_pixels];
            const auto rgb = heat_colour(peak > 0 ? v / peak : 0.0);
            raw.append(reinterpret_cast<const char*>(rgb.data()), 3);
        }
    }
    std::string png = "\x89PNG\r\n\x1a\n";
    std::string header;
    put_u32(header, static_cast<std::uint32_t>(side));
    put_u32(header, static_cast<std::uint32_t>(side));
    header += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit RGB, no interlace
    put_chunk(png, "IHDR", header);
    put_chunk(png, "IDAT", zlib_stored(raw));
    put_chunk(png, "IEND", "");
    write_file_atomically(path, png);
}

void write_activity_map(const std::string& path, const std::vector<float>& map, int d) {
    const std::string ext = std::filesystem::path(path).extension().string();
    if (ext == ".png" || ext == ".PNG")
        write_activity_map_png(path, map, d);
    else
        write_activity_map_csv(path, map, d);
}

}  // namespace nbody
