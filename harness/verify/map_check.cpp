// The map's check (check_map_counts): each variant's cell counts against the cells its own
// positions fall in, a body near a cell edge allowed on either side.
#include "verify/verification.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

namespace nbody {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The cell a variant may have counted a body in, for each axis: [first, last] of the cells within
// `slack` of its reference coordinate (empty when none is), and whether the range leaves the unit
// square. A body far outside (or NaN) gives an empty range that may be outside, never an overflow.
struct CellRange {
    long first, last;
    bool may_be_outside;
    long count() const { return std::max(0L, last - first + 1); }
};

CellRange cells_within(long double coordinate, long double slack, int d) {
    // Clamped to [-1, d] before the conversion to long (1e30 * D does not fit; NaN lands at -1).
    const auto cell_of = [d](long double p) {
        const long double cell = std::floor(p * d);
        return !(cell >= -1) ? -1L : cell > d ? static_cast<long>(d) : static_cast<long>(cell);
    };
    const long lo = cell_of(coordinate - slack), hi = cell_of(coordinate + slack);
    return {std::max(lo, 0L), std::min(hi, static_cast<long>(d) - 1), lo < 0 || hi >= d};
}

// Assigns ambiguous bodies to cells with spare counts (bipartite matching with capacities,
// augmenting paths): how many bodies can be placed, and where.
class CountAssignment {
public:
    CountAssignment(std::vector<std::int64_t> capacity, std::vector<std::vector<std::size_t>> candidates)
        : capacity_(std::move(capacity)), candidates_(std::move(candidates)), holders_(capacity_.size()),
          placed_(candidates_.size(), kNone) {
        for (std::size_t body = 0; body < candidates_.size(); ++body) {
            visited_.assign(capacity_.size(), false);
            place(body);
        }
    }
    std::size_t slot_of(std::size_t body) const { return placed_[body]; }
    static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

private:
    bool place(std::size_t body) {
        for (std::size_t slot : candidates_[body]) {
            if (visited_[slot]) continue;
            visited_[slot] = true;
            if (static_cast<std::int64_t>(holders_[slot].size()) < capacity_[slot]) {
                holders_[slot].push_back(body);
                placed_[body] = slot;
                return true;
            }
            for (std::size_t& holder : holders_[slot]) {
                const std::size_t moved = holder;
                if (place(moved)) {  // `moved` found another slot: this one takes its place
                    holder = body;
                    placed_[body] = slot;
                    return true;
                }
            }
        }
        return false;
    }

    std::vector<std::int64_t> capacity_;
    std::vector<std::vector<std::size_t>> candidates_;
    std::vector<std::vector<std::size_t>> holders_;
    std::vector<std::size_t> placed_;
    std::vector<bool> visited_;
};

// Cell counts as (cell, count) pairs in ascending cell order; kOutside (-1) sorts first.
using CellCounts = std::vector<std::pair<std::int64_t, std::int64_t>>;

CellCounts counts_of(std::vector<std::int64_t> cells) {
    std::sort(cells.begin(), cells.end());
    CellCounts counts;
    for (std::int64_t cell : cells) {
        if (counts.empty() || counts.back().first != cell) counts.emplace_back(cell, 0);
        ++counts.back().second;
    }
    return counts;
}

// Calls visit(cell, count in a, count in b) for every cell of either, in ascending order.
template <class Visit>
void merge_counts(const CellCounts& a, const CellCounts& b, Visit&& visit) {
    std::size_t i = 0, j = 0;
    while (i < a.size() || j < b.size()) {
        if (j == b.size() || (i < a.size() && a[i].first < b[j].first)) {
            visit(a[i].first, a[i].second, std::int64_t{0});
            ++i;
        } else if (i == a.size() || b[j].first < a[i].first) {
            visit(b[j].first, std::int64_t{0}, b[j].second);
            ++j;
        } else {
            visit(a[i].first, a[i].second, b[j].second);
            ++i, ++j;
        }
    }
}

}  // namespace

template <class Real, class Stored>
void check_map_counts(const std::vector<float>& map, const BodiesT<Stored>& positions, int d, double tolerance,
                      ErrorMetrics& e) {
    const std::size_t n = positions.size();
    const std::size_t cells = static_cast<std::size_t>(d) * d;
    if (map.size() != cells)
        throw std::runtime_error(fmt::format("activity map has {} cells, expected {}", map.size(), cells));
    constexpr std::int64_t kOutside = -1;
    // The variant's counts, sparse (D*D may be far larger than N), the bodies outside first.
    const double scale = activity_scale(n, d);
    CellCounts counted(1, {kOutside, 0});
    std::int64_t counted_inside = 0;
    for (std::size_t c = 0; c < cells; ++c) {
        if (!std::isfinite(map[c])) {
            e.map_diff = kNaN;
            e.map_unexplained_counts = static_cast<std::int64_t>(n);
            return;
        }
        const std::int64_t count = std::llround(map[c] / scale);
        if (count != 0) counted.emplace_back(static_cast<std::int64_t>(c), count);
        counted_inside += count;
    }
    counted.front().second = static_cast<std::int64_t>(n) - counted_inside;

    // Each body's reference cell in the workload's precision, and the cells within the tolerance,
    // widened by the rounding of p * D in Real: at most p * 2^-24 (float) in position units, p < 1.
    const long double slack = static_cast<long double>(tolerance) + std::numeric_limits<Real>::epsilon();
    e.map_tolerance = static_cast<double>(slack);
    constexpr long kMaxCandidateCells = 16;
    std::int64_t unplaceable = 0;
    std::vector<std::int64_t> own_cells, fixed_cells;
    own_cells.reserve(n);
    fixed_cells.reserve(n);
    std::vector<std::int64_t> ambiguous_own;
    std::vector<std::vector<std::int64_t>> ambiguous_cells;
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t own_cell =
            activity_cell(static_cast<Real>(positions.x[i]), static_cast<Real>(positions.y[i]), d);
        own_cells.push_back(own_cell);
        const CellRange cols = cells_within(static_cast<long double>(positions.x[i]), slack, d),
                        rows = cells_within(static_cast<long double>(positions.y[i]), slack, d);
        // A position error of more than a cell or two places nothing: such a body counts as
        // unexplained (its positions fail anyway), which also bounds the work of a badly wrong run.
        if (cols.count() * rows.count() > kMaxCandidateCells) {
            ++unplaceable;
            continue;
        }
        const bool may_be_outside = cols.may_be_outside || rows.may_be_outside || cols.count() * rows.count() == 0;
        if (cols.count() * rows.count() == 1 && !may_be_outside) {
            fixed_cells.push_back(rows.first * d + cols.first);
            continue;
        }
        if (cols.count() * rows.count() == 0) {  // outside only
            fixed_cells.push_back(kOutside);
            continue;
        }
        std::vector<std::int64_t>& candidates = ambiguous_cells.emplace_back();
        for (long row = rows.first; row <= rows.last; ++row)
            for (long col = cols.first; col <= cols.last; ++col) candidates.push_back(row * d + col);
        if (may_be_outside) candidates.push_back(kOutside);
        ambiguous_own.push_back(own_cell);
    }
    const CellCounts own = counts_of(std::move(own_cells)), fixed = counts_of(std::move(fixed_cells));

    // The plain L1 difference against the reference cells over the cells only (SPEC §5).
    double l1 = 0;
    merge_counts(counted, own, [&](std::int64_t cell, std::int64_t a, std::int64_t b) {
        if (cell != kOutside) l1 += static_cast<double>(std::llabs(a - b));
    });
    e.map_diff = l1 / (2.0 * static_cast<double>(n));

    // What the unambiguous bodies leave: a deficit is unexplained; a surplus must be filled by
    // ambiguous bodies, each counted once in one of its candidate cells.
    std::int64_t deficit = 0, surplus = 0;
    std::vector<std::int64_t> surplus_cells;  // ascending: a slot is its index
    std::vector<std::int64_t> capacity;
    merge_counts(fixed, counted, [&](std::int64_t cell, std::int64_t need, std::int64_t have) {
        if (have < need) deficit += need - have;
        if (have > need) {
            surplus_cells.push_back(cell);
            capacity.push_back(have - need);
            surplus += have - need;
        }
    });
    std::vector<std::vector<std::size_t>> candidates(ambiguous_cells.size());
    for (std::size_t a = 0; a < ambiguous_cells.size(); ++a)
        for (std::int64_t cell : ambiguous_cells[a])
            if (const auto it = std::lower_bound(surplus_cells.begin(), surplus_cells.end(), cell);
                it != surplus_cells.end() && *it == cell)
                candidates[a].push_back(static_cast<std::size_t>(it - surplus_cells.begin()));

    const CountAssignment assignment(capacity, candidates);
    std::int64_t placed = 0, moved = 0;
    for (std::size_t a = 0; a < ambiguous_cells.size(); ++a) {
        const std::size_t slot = assignment.slot_of(a);
        if (slot == CountAssignment::kNone) continue;
        ++placed;
        if (surplus_cells[slot] != ambiguous_own[a]) ++moved;
    }
    e.map_ambiguous_bodies = static_cast<std::int64_t>(ambiguous_cells.size());
    e.map_explained_counts = moved;
    e.map_unexplained_counts = deficit + (surplus - placed) + unplaceable;
}

template void check_map_counts<float>(const std::vector<float>&, const BodiesT<long double>&, int, double, ErrorMetrics&);
template void check_map_counts<double>(const std::vector<float>&, const BodiesT<long double>&, int, double, ErrorMetrics&);
template void check_map_counts<float>(const std::vector<float>&, const BodiesT<float>&, int, double, ErrorMetrics&);
template void check_map_counts<double>(const std::vector<float>&, const BodiesT<double>&, int, double, ErrorMetrics&);

}  // namespace nbody
