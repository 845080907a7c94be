// Timing and reporting helpers of dnnk-bench.
#include "bench_util.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

namespace bench {

double median_seconds(const std::function<void()> &f, int reps,
                      double min_seconds) {
  using clock = std::chrono::steady_clock;
  f(); // warm-up: page faults, packing buffers, thread pools
  std::vector<double> t;
  double total = 0;
  while ((int)t.size() < reps || total < min_seconds) {
    auto t0 = clock::now();
    f();
    double s = std::chrono::duration<double>(clock::now() - t0).count();
    t.push_back(s);
    total += s;
    if (t.size() >= 1000)
      break;
  }
  return median_of(t);
}

double median_of(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  size_t n = t.size();
  return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

std::vector<double>
median_interleaved(const std::vector<std::function<void()>> &fs, int reps,
                   double min_seconds) {
  using clock = std::chrono::steady_clock;
  std::vector<std::vector<double>> t(fs.size());
  for (const auto &f : fs) { // warm-up
    f();
    settle();
  }
  double first_total = 0;
  for (int round = 0; round < 1000; ++round) {
    if (round >= reps && first_total >= min_seconds)
      break;
    for (size_t i = 0; i < fs.size(); ++i) {
      auto t0 = clock::now();
      fs[i]();
      double s = std::chrono::duration<double>(clock::now() - t0).count();
      t[i].push_back(s);
      if (i == 0)
        first_total += s;
      settle();
    }
  }
  std::vector<double> med;
  for (auto &v : t)
    med.push_back(median_of(v));
  return med;
}

std::vector<std::pair<double, double>>
paired_rounds(const std::function<void()> &first,
              const std::function<void()> &second, int rounds, int calls) {
  auto timed = [calls](const std::function<void()> &f) {
    settle();
    return median_seconds(f, calls, 0.0);
  };
  std::vector<std::pair<double, double>> out;
  for (int r = 0; r < rounds; ++r) {
    std::pair<double, double> p;
    if (r % 2 == 0) {
      p.first = timed(first);
      p.second = timed(second);
    } else {
      p.second = timed(second);
      p.first = timed(first);
    }
    out.push_back(p);
  }
  return out;
}

void settle() {
  // Longer than KMP_BLOCKTIME (10 ms) and OpenBLAS's thread timeout
  // (< 1 ms), both set in main, and libgomp's default spin (a few ms).
  std::this_thread::sleep_for(std::chrono::milliseconds(15));
}

std::string format(const char *fmt, double v) {
  if (std::isnan(v))
    return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

void Report::section(const std::string &title, const std::string &first,
                     const std::vector<std::string> &columns,
                     const std::vector<std::string> &formats) {
  title_ = title;
  columns_ = columns;
  formats_ = formats;
  std::printf("\n### %s\n\n| %s |", title.c_str(), first.c_str());
  for (const auto &c : columns)
    std::printf(" %s |", c.c_str());
  std::printf("\n|---|");
  for (size_t i = 0; i < columns.size(); ++i)
    std::printf("---:|");
  std::printf("\n");
  std::fflush(stdout);
}

void Report::add(const std::string &name, const std::vector<double> &values) {
  Row r{title_, name, {}};
  std::printf("| %s |", name.c_str());
  for (size_t i = 0; i < values.size() && i < columns_.size(); ++i) {
    std::printf(" %s |", format(formats_[i].c_str(), values[i]).c_str());
    r.values.emplace_back(columns_[i], values[i]);
  }
  std::printf("\n");
  std::fflush(stdout);
  rows_.push_back(r);
}

bool Report::write_csv(const std::string &path) const {
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f)
    return false;
  std::fprintf(f, "section,case,column,value\n");
  for (const auto &r : rows_)
    for (const auto &v : r.values)
      std::fprintf(f, "\"%s\",\"%s\",\"%s\",%.6g\n", r.section.c_str(),
                   r.name.c_str(), v.first.c_str(), v.second);
  return std::fclose(f) == 0;
}

} // namespace bench
