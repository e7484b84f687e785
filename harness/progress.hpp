#pragma once
// Progress of a long matrix run: configuration k of n, what runs now, elapsed, estimated remaining.
// On a terminal one line is redrawn in place; otherwise each event is a plain log line.
#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace nbody {

class Progress {
public:
    // `work[k]`: relative cost of configuration k (for the estimate); `on_gpu[k]`: which device runs
    // it (GPU and CPU configurations progress at very different rates, so each has its own rate).
    Progress(std::ostream& out, bool interactive, std::vector<double> work, std::vector<bool> on_gpu);

    void begin(std::size_t k, const std::string& what);
    void repetition(int done, int of);
    void end(const std::string& outcome);
    void note(const std::string& line);

    static std::string clock_text(double seconds);  // h:mm:ss or m:ss

private:
    double elapsed() const;
    std::string status() const;
    void draw(const std::string& line);

    std::ostream& out_;
    bool interactive_;
    std::vector<double> work_;
    std::vector<bool> on_gpu_;
    std::chrono::steady_clock::time_point start_, current_start_;
    std::size_t current_ = 0;
    std::string what_;
    int rep_done_ = 0, rep_of_ = 0;
    double seconds_done_[2] = {0, 0}, work_done_[2] = {0, 0};
};

}  // namespace nbody
