// SPEC §1 input file: x,y,vx,vy,m per line, comments, blank lines, defaults, and every error case;
// SPEC §2: x,y,z,vx,vy,vz,m in 3D, parsed in the workload's precision.
#include <gtest/gtest.h>

#include "io/io.hpp"
#include "nbody/errors.hpp"
#include "nbody/generator.hpp"
#include "test_support.hpp"

#include <png.h>

#include <array>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <variant>

namespace nbody {
namespace {

using testing::TempDir;

TEST(InputReader, ReadsBodiesSkippingCommentsAndBlankLines) {
    TempDir dir;
    const auto path = dir.write("bodies.csv",
                                "# a comment\n"
                                "0.25,0.5,1,-2,0.5\n"
                                "\n"
                                "   \n"
                                "  0.75 , 0.125 , 0 , 3e-2 , 1.5  \r\n");
    const Bodies b = read_bodies_csv(path, std::nullopt, 42);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_EQ(b.x[0], 0.25f);
    EXPECT_EQ(b.y[0], 0.5f);
    EXPECT_EQ(b.vx[0], 1.0f);
    EXPECT_EQ(b.vy[0], -2.0f);
    EXPECT_EQ(b.m[0], 0.5f);
    EXPECT_EQ(b.x[1], 0.75f);
    EXPECT_EQ(b.y[1], 0.125f);
    EXPECT_EQ(b.vy[1], 3e-2f);
    EXPECT_EQ(b.m[1], 1.5f);
}

TEST(InputReader, EmptyFieldsTakeTheirDefaults) {
    TempDir dir;
    const auto path = dir.write("defaults.csv", "0.1,0.2,0.3,0.4,0.5\n,,,,\n0.9,,,-1,\n,0.3,,,2\n");
    const Bodies b = read_bodies_csv(path, 4, 42);
    const Bodies generated = generate_bodies(4, 42);
    EXPECT_EQ(b.x[1], generated.x[1]);
    EXPECT_EQ(b.y[1], generated.y[1]);
    EXPECT_EQ(b.vx[1], 0.0f);
    EXPECT_EQ(b.vy[1], 0.0f);
    EXPECT_EQ(b.m[1], 0.25f);  // 1/N
    EXPECT_EQ(b.x[2], 0.9f);
    EXPECT_EQ(b.y[2], generated.y[2]);
    EXPECT_EQ(b.vy[2], -1.0f);
    EXPECT_EQ(b.x[3], generated.x[3]);
    EXPECT_EQ(b.y[3], 0.3f);
    EXPECT_EQ(b.m[3], 2.0f);
}

TEST(InputReader, DefaultPositionsFollowTheSeed) {
    TempDir dir;
    const auto path = dir.write("seeded.csv", ",,,,\n,,,,\n");
    const Bodies b = read_bodies_csv(path, std::nullopt, 7);
    const Bodies generated = generate_bodies(2, 7);
    EXPECT_EQ(b.x, generated.x);
    EXPECT_EQ(b.y, generated.y);
}

// Reads `contents` and returns the InputError message, or fails the test if none is thrown.
std::string error_of(const std::string& contents, std::optional<std::size_t> n = std::nullopt,
                     std::string* path_out = nullptr) {
    TempDir dir;
    const auto path = dir.write("bad.csv", contents);
    if (path_out) *path_out = path;
    try {
        read_bodies_csv(path, n, 42);
    } catch (const InputError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find(path), std::string::npos) << "message does not name the file: " << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << "message is not one line: " << message;
        return message;
    }
    ADD_FAILURE() << "no InputError for:\n" << contents;
    return {};
}

TEST(InputReader, WrongFieldCountNamesLineAndCount) {
    const auto few = error_of("0.1,0.2,0,0,1\n# c\n0.1,0.2,0,0\n");
    EXPECT_NE(few.find(":3:"), std::string::npos) << few;
    EXPECT_NE(few.find("found 4"), std::string::npos) << few;
    const auto many = error_of("0.1,0.2,0,0,1,9\n");
    EXPECT_NE(many.find(":1:"), std::string::npos) << many;
    EXPECT_NE(many.find("found 6"), std::string::npos) << many;
}

TEST(InputReader, TextThatIsNotANumberNamesLineAndField) {
    const auto message = error_of("0.1,0.2,0,0,1\n0.1,abc,0,0,1\n");
    EXPECT_NE(message.find(":2:"), std::string::npos) << message;
    EXPECT_NE(message.find("field 2 (y)"), std::string::npos) << message;
    EXPECT_NE(message.find("'abc'"), std::string::npos) << message;
    const auto trailing = error_of("0.1,0.2,0,1.5x,1\n");
    EXPECT_NE(trailing.find("field 4 (vy)"), std::string::npos) << trailing;
}

TEST(InputReader, NonFiniteValuesAreRejected) {
    for (const char* bad : {"nan", "NaN", "inf", "-inf", "Infinity"}) {
        const auto message = error_of(std::string("0.1,0.2,") + bad + ",0,1\n");
        EXPECT_NE(message.find("field 3 (vx)"), std::string::npos) << message;
    }
    const auto overflow = error_of("1e50,0.2,0,0,1\n");
    EXPECT_NE(overflow.find("field 1 (x)"), std::string::npos) << overflow;
}

TEST(InputReader, NegativeOrZeroMassIsRejected) {
    for (const char* bad : {"0", "-1", "-0.0"}) {
        const auto message = error_of(std::string("0.1,0.2,0,0,") + bad + "\n");
        EXPECT_NE(message.find("field 5 (m)"), std::string::npos) << message;
        EXPECT_NE(message.find("positive"), std::string::npos) << message;
    }
}

TEST(InputReader, BodyCountMustMatchN) {
    const auto message = error_of("0.1,0.2,0,0,1\n0.3,0.4,0,0,1\n", 3);
    EXPECT_NE(message.find("holds 2 bodies"), std::string::npos) << message;
    EXPECT_NE(message.find("N = 3"), std::string::npos) << message;
}

TEST(InputReader, FileWithoutBodiesIsRejected) {
    const auto message = error_of("# only a comment\n\n");
    EXPECT_NE(message.find("no bodies"), std::string::npos) << message;
}

TEST(InputReader, MissingFileIsAnInputError) {
    TempDir dir;
    const auto path = dir.file("absent.csv");
    try {
        read_bodies_csv(path, std::nullopt, 42);
        FAIL() << "no error for a missing file";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
    }
}

TEST(InputReader3D, ReadsSevenFieldsWithDefaultsForEmptyZAndVz) {
    TempDir dir;
    const auto path = dir.write("bodies3.csv", "# x,y,z,vx,vy,vz,m\n0.25,0.5,0.75,1,-2,3,0.5\n0.1,0.2,,0.3,0.4,,\n");
    const auto b = read_bodies_csv_of<float>(path, 2, 9, 3);
    ASSERT_EQ(b.size(), 2u);
    ASSERT_EQ(b.dim, 3);
    EXPECT_EQ(b.z[0], 0.75f);
    EXPECT_EQ(b.vx[0], 1.0f);
    EXPECT_EQ(b.vz[0], 3.0f);
    EXPECT_EQ(b.m[0], 0.5f);
    EXPECT_EQ(b.z[1], generated_coordinate(9, 1, 3, 2));  // the generator's z of body 1 with this seed
    EXPECT_EQ(b.vx[1], 0.3f);
    EXPECT_EQ(b.vz[1], 0.0f);
    EXPECT_EQ(b.m[1], 0.5f);  // 1/N
    const HostState state = read_state_csv(path, Workload{.dim = 3, .precision = Precision::fp64}, std::nullopt, 9);
    ASSERT_TRUE(std::holds_alternative<BodiesT<double>>(state));
    EXPECT_EQ(std::get<BodiesT<double>>(state).z[0], 0.75);
    EXPECT_EQ(std::get<BodiesT<double>>(state).m[1], 0.5);
}

// Reads `contents` in `dim` dimensions and precision Real; the InputError message, or a test failure.
template <class Real>
std::string error_of_workload(const std::string& contents, int dim) {
    TempDir dir;
    const auto path = dir.write("bad.csv", contents);
    try {
        read_bodies_csv_of<Real>(path, std::nullopt, 42, dim);
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "no InputError for:\n" << contents;
    return {};
}

TEST(InputReader3D, FieldCountThatDoesNotFitTheDimensionNamesBothCounts) {
    const auto five_in_3d = error_of_workload<float>("0.1,0.2,0.3,0,0,0,1\n0.1,0.2,0,0,1\n", 3);
    EXPECT_NE(five_in_3d.find(":2:"), std::string::npos) << five_in_3d;
    EXPECT_NE(five_in_3d.find("expected 7"), std::string::npos) << five_in_3d;
    EXPECT_NE(five_in_3d.find("found 5"), std::string::npos) << five_in_3d;
    const auto seven_in_2d = error_of_workload<float>("0.1,0.2,0.3,0,0,0,1\n", 2);
    EXPECT_NE(seven_in_2d.find("expected 5"), std::string::npos) << seven_in_2d;
    EXPECT_NE(seven_in_2d.find("found 7"), std::string::npos) << seven_in_2d;
}

TEST(InputReader3D, Float64ParsesValuesOutsideTheFloatRangeAndRejectsThoseOutsideDouble) {
    TempDir dir;
    const auto wide = read_bodies_csv_of<double>(dir.write("wide.csv", "1e50,0.2,0.3,0,0,1e-320,1\n"), 1, 42, 3);
    EXPECT_EQ(wide.x[0], 1e50);
    EXPECT_EQ(wide.vz[0], 1e-320);
    const auto in_float = error_of_workload<float>("1e50,0.2,0.3,0,0,0,1\n", 3);
    EXPECT_NE(in_float.find("field 1 (x)"), std::string::npos) << in_float;
    const auto too_wide = error_of_workload<double>("0.1,0.2,1e400,0,0,0,1\n", 3);
    EXPECT_NE(too_wide.find("field 3 (z)"), std::string::npos) << too_wide;
    EXPECT_NE(too_wide.find("out of"), std::string::npos) << too_wide;
    const auto mass = error_of_workload<double>("0.1,0.2,0.3,0,0,0,-1e-300\n", 3);
    EXPECT_NE(mass.find("field 7 (m)"), std::string::npos) << mass;
}

TEST(InputReader, StreamAndFileGiveTheSameState) {
    TempDir dir;
    const std::string text = "# c\n0.25,0.5,1,-2,0.5\n,,,,\n";
    std::istringstream in(text);
    const Bodies from_stream = read_bodies_csv_of<float>(in, "state", std::nullopt, 42, 2);
    const Bodies from_file = read_bodies_csv(dir.write("s.csv", text), std::nullopt, 42);
    EXPECT_EQ(from_stream.x, from_file.x);
    EXPECT_EQ(from_stream.y, from_file.y);
    EXPECT_EQ(from_stream.m, from_file.m);
}

// docs/reliability.md: a UTF-8 byte-order mark opens a file (spreadsheets write one); anywhere else
// it is text that is not a number.
TEST(InputReader, ByteOrderMarkIsSkippedOnlyAtTheStart) {
    TempDir dir;
    EXPECT_EQ(read_bodies_csv(dir.write("bom.csv", "\xEF\xBB\xBF" "0.5,0.25,0,0,1\n"), 1, 42).x[0], 0.5f);
    const auto message = error_of("0.1,0.2,0,0,1\n\xEF\xBB\xBF" "0.5,0.25,0,0,1\n");
    EXPECT_NE(message.find(":2: field 1 (x): '\\xef\\xbb\\xbf0.5' is not a number"), std::string::npos) << message;
}

TEST(InputReader, TwoSignsAndHexadecimalAreNotNumbers) {
    for (const char* bad : {"+-1", "++1", "0x10", "1e", "."}) {
        const auto message = error_of(std::string("0.1,0.2,") + bad + ",0,1\n");
        EXPECT_NE(message.find("field 3 (vx): '" + std::string(bad) + "' is not a number"), std::string::npos) << message;
    }
}

// A field of any length or bytes is quoted short, escaped, with its length: one line.
TEST(InputReader, QuotedTextIsShortAndEscaped) {
    const auto message = error_of("0.1," + std::string(5000, 'a') + "\x01,0,0,1\n");
    EXPECT_LT(message.size(), 200u) << message;
    EXPECT_NE(message.find("(5001 bytes)"), std::string::npos) << message;
    EXPECT_EQ(quoted_excerpt("a\nb'c"), "'a\\x0ab\\x27c'");
}

TEST(InputReader, LongLinesAndCarriageReturnsInsideALineAreRefused) {
    const auto long_line = error_of(std::string(kMaxInputLineBytes + 1, ' ') + "\n");
    EXPECT_NE(long_line.find(":1: line longer than 65536 bytes"), std::string::npos) << long_line;
    const auto cr = error_of("0.1,0.2,0,0,1\r0.3,0.4,0,0,1\n");
    EXPECT_NE(cr.find(":1: a carriage return inside the line"), std::string::npos) << cr;
}

TEST(InputReader, DimensionOfAFileIsItsFieldCount) {
    TempDir dir;
    EXPECT_EQ(csv_state_dim(dir.write("two.csv", "# x,y,vx,vy,m\n0.1,0.2,0,0,1\n")), 2);
    EXPECT_EQ(csv_state_dim(dir.write("three.csv", "\n,,,,,,\n")), 3);
    EXPECT_THROW(csv_state_dim(dir.write("six.csv", "1,2,3,4,5,6\n")), InputError);
    EXPECT_THROW(csv_state_dim(dir.write("none.csv", "# only a comment\n")), InputError);
}

TEST(StateWriter, ThreeDimensionalFloat64StateReadsBackBitExact) {
    TempDir dir;
    auto moved = generate_bodies_of<double>(40, 3, 11);
    for (std::size_t i = 0; i < moved.size(); ++i) moved.vz[i] = moved.z[i] / 3.0 - 1e-200;
    const auto path = dir.file("state3.csv");
    write_state_csv(path, HostState(moved), "test state");
    const auto back = read_bodies_csv_of<double>(path, 40, 42, 3);
    EXPECT_EQ(back.x, moved.x);
    EXPECT_EQ(back.z, moved.z);
    EXPECT_EQ(back.vz, moved.vz);
    EXPECT_EQ(back.m, moved.m);
}

TEST(StateWriter, WrittenStateReadsBackBitExact) {
    TempDir dir;
    const Bodies original = generate_bodies(50, 3);
    Bodies moved = original;
    for (std::size_t i = 0; i < moved.size(); ++i) moved.vx[i] = moved.x[i] * 1e-7f - 0.3f;
    const auto path = dir.file("state.csv");
    write_bodies_csv(path, moved, "test state");
    const Bodies back = read_bodies_csv(path, 50, 42);
    EXPECT_EQ(back.x, moved.x);
    EXPECT_EQ(back.y, moved.y);
    EXPECT_EQ(back.vx, moved.vx);
    EXPECT_EQ(back.vy, moved.vy);
    EXPECT_EQ(back.m, moved.m);
}

TEST(StateWriter, UnwritableFolderIsAUsageErrorAndLeavesNothing) {
    TempDir dir;
    const auto path = dir.file("no/such/folder/state.csv");
    EXPECT_THROW(write_bodies_csv(path, generate_bodies(2), ""), UsageError);
    EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(MapWriter, PngHasSignatureAndCsvHasDRows) {
    TempDir dir;
    std::vector<float> map(16, 0.0f);
    map[5] = 2.0f;
    write_activity_map(dir.file("map.png"), map, 4);
    write_activity_map(dir.file("map.csv"), map, 4);
    const std::string png = testing::read_text(dir.file("map.png"));
    ASSERT_GT(png.size(), 8u);
    EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    const std::string csv = testing::read_text(dir.file("map.csv"));
    EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
    EXPECT_EQ(csv.substr(0, csv.find('\n')), "0,0,0,0");
    EXPECT_NE(csv.find("0,2,0,0"), std::string::npos);
}

// A PNG file decoded by libpng (which checks every chunk's CRC and the zlib stream) as 8-bit RGB.
struct DecodedImage {
    std::uint32_t width = 0, height = 0;
    std::uint32_t stored_format = 0;  // the file's own pixel format, before conversion to RGB
    std::vector<unsigned char> rgb;

    std::array<unsigned char, 3> at(std::uint32_t x, std::uint32_t y) const {
        const std::size_t i = (static_cast<std::size_t>(y) * width + x) * 3;
        return {rgb[i], rgb[i + 1], rgb[i + 2]};
    }
};

DecodedImage decode_png(const std::string& bytes) {
    png_image image{};
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()))
        throw std::runtime_error(std::string("not a PNG libpng reads: ") + image.message);
    DecodedImage decoded;
    decoded.width = image.width;
    decoded.height = image.height;
    decoded.stored_format = image.format;
    image.format = PNG_FORMAT_RGB;
    decoded.rgb.resize(PNG_IMAGE_SIZE(image));
    if (!png_image_finish_read(&image, nullptr, decoded.rgb.data(), 0, nullptr))
        throw std::runtime_error(std::string("the PNG's pixels do not decode: ") + image.message);
    return decoded;
}

using Rgb = std::array<unsigned char, 3>;
// The heat ramp at fractions of the peak, worked out by hand from its stops.
constexpr Rgb ramp_zero{0, 0, 4};          // the first stop
constexpr Rgb ramp_quarter{86, 19, 104};   // 0.25 * 7 = 1.75: three quarters from stop 1 to stop 2
constexpr Rgb ramp_half{186, 57, 83};      // 0.5 * 7 = 3.5: midway from stop 3 to stop 4, halves rounded up
constexpr Rgb ramp_peak{252, 255, 164};    // the last stop

// The centre pixel of map cell (row, col) of a 4 x 4 image of 128-pixel cells, row 0 at the bottom.
Rgb cell_centre(const DecodedImage& image, int row, int col) {
    return image.at(static_cast<std::uint32_t>(col * 128 + 64), static_cast<std::uint32_t>((3 - row) * 128 + 64));
}

TEST(MapWriter, PngDecodesToTheHeatRampRowZeroAtTheBottom) {
    TempDir dir;
    std::vector<float> map(16, 0.0f);
    map[1 * 4 + 2] = 4.0f;  // the peak
    map[0 * 4 + 0] = 2.0f;
    map[3 * 4 + 3] = 1.0f;
    write_activity_map_png(dir.file("map.png"), map, 4);
    const DecodedImage image = decode_png(testing::read_text(dir.file("map.png")));
    EXPECT_EQ(image.stored_format, static_cast<std::uint32_t>(PNG_FORMAT_RGB));
    ASSERT_EQ(image.width, 512u);  // a small map enlarged: 128 pixels a cell
    ASSERT_EQ(image.height, 512u);
    EXPECT_EQ(cell_centre(image, 1, 2), ramp_peak);
    EXPECT_EQ(cell_centre(image, 0, 0), ramp_half);
    EXPECT_EQ(cell_centre(image, 3, 3), ramp_quarter);
    EXPECT_EQ(cell_centre(image, 0, 1), ramp_zero);
    // Every pixel of a cell has its colour: the cell's corners too.
    EXPECT_EQ(image.at(0, 511), ramp_half);
    EXPECT_EQ(image.at(127, 384), ramp_half);
    EXPECT_EQ(image.at(128, 384), ramp_zero);
    EXPECT_EQ(image.at(511, 0), ramp_quarter);
}

TEST(MapWriter, PngPoolsCellsIntoBlocksOfAtMostMaxPixels) {
    TempDir dir;
    std::vector<float> map(64, 0.0f);
    for (int cell : {0 * 8 + 0, 0 * 8 + 1, 1 * 8 + 0, 1 * 8 + 1}) map[cell] = 1.0f;  // block (0, 0) sums to 4
    map[4 * 8 + 2] = 2.0f;                                                     // block (2, 1) sums to 2
    write_activity_map_png(dir.file("map.png"), map, 8, 4);  // 8 cells a side pooled 2 x 2 into 4
    const DecodedImage image = decode_png(testing::read_text(dir.file("map.png")));
    ASSERT_EQ(image.width, 512u);
    ASSERT_EQ(image.height, 512u);
    EXPECT_EQ(cell_centre(image, 0, 0), ramp_peak);
    EXPECT_EQ(cell_centre(image, 2, 1), ramp_half);
    EXPECT_EQ(cell_centre(image, 3, 3), ramp_zero);
}

TEST(MapWriter, PngIsCompressed) {
    TempDir dir;
    const int d = 512;
    write_activity_map_png(dir.file("map.png"), std::vector<float>(static_cast<std::size_t>(d) * d, 1.0f), d);
    const std::string bytes = testing::read_text(dir.file("map.png"));
    const DecodedImage image = decode_png(bytes);
    ASSERT_EQ(image.width, 512u);  // one pixel a cell
    EXPECT_EQ(image.at(0, 0), ramp_peak);
    EXPECT_EQ(image.at(511, 511), ramp_peak);
    const std::size_t raw_pixel_bytes = static_cast<std::size_t>(d) * d * 3;
    EXPECT_LT(bytes.size(), raw_pixel_bytes / 10) << bytes.size() << " bytes for " << raw_pixel_bytes << " of raw pixels";
}

}  // namespace
}  // namespace nbody
