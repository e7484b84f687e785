#pragma once
// A random-access iterator over the integers [first, last): the index space of the parallel
// algorithms. std::views::iota is not usable here: its iterator_category is input_iterator_tag
// (C++20 views), and libstdc++'s parallel algorithms run input iterators serially.
#include <cstddef>
#include <cstdint>
#include <iterator>

namespace nbody::stdpar {

class IndexIterator {
public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = std::int64_t;
    using difference_type = std::int64_t;
    using pointer = const std::int64_t*;
    using reference = std::int64_t;  // a value: there is no element to refer to

    IndexIterator() = default;
    explicit IndexIterator(std::int64_t i) : i_(i) {}

    reference operator*() const { return i_; }
    reference operator[](difference_type k) const { return i_ + k; }
    IndexIterator& operator++() { ++i_; return *this; }
    IndexIterator operator++(int) { IndexIterator old = *this; ++i_; return old; }
    IndexIterator& operator--() { --i_; return *this; }
    IndexIterator operator--(int) { IndexIterator old = *this; --i_; return old; }
    IndexIterator& operator+=(difference_type k) { i_ += k; return *this; }
    IndexIterator& operator-=(difference_type k) { i_ -= k; return *this; }
    friend IndexIterator operator+(IndexIterator a, difference_type k) { return a += k; }
    friend IndexIterator operator+(difference_type k, IndexIterator a) { return a += k; }
    friend IndexIterator operator-(IndexIterator a, difference_type k) { return a -= k; }
    friend difference_type operator-(IndexIterator a, IndexIterator b) { return a.i_ - b.i_; }
    friend auto operator<=>(IndexIterator a, IndexIterator b) = default;

private:
    std::int64_t i_ = 0;
};

// The index range [0, n) as a pair of iterators.
struct Indices {
    IndexIterator first, last;
    explicit Indices(std::int64_t n) : first(0), last(n) {}
    IndexIterator begin() const { return first; }
    IndexIterator end() const { return last; }
};

}  // namespace nbody::stdpar
